import { isPostgresUrl, openPostgresStore } from './postgres-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { IdempotencyStore, StoreOptions } from './store.js';

/**
 * Opens the store a merchant.yaml `store:` names: a `postgres://` URL (several instances on one
 * database; the schema is created on first use and the connection checked here), else a SQLite
 * file path or `:memory:`. An unusable store is a ConfigError with one line, never the password.
 *
 * @example const store = await openStore('postgres://merchant@127.0.0.1/wallet')
 */
export async function openStore(spec: string, options: StoreOptions = {}): Promise<IdempotencyStore> {
  if (!isPostgresUrl(spec)) return openSqliteStore(spec, options);
  const { now: _clock, ...rest } = options;
  const store = openPostgresStore(spec, rest);
  try {
    await store.ready();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
