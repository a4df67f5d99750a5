import Database from 'better-sqlite3';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_LEASE_MS, type ClaimResult, type IdempotencyStore, type StoreOptions } from './store.js';

/** Options of the SQLite store. */
export interface SqliteStoreOptions extends StoreOptions {
  /**
   * `full` (default) syncs every commit to disk, so a `done` mark survives a power cut; `normal`
   * survives a process crash only, and is faster.
   */
  synchronous?: 'full' | 'normal';
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS processed_events (
  key          TEXT PRIMARY KEY,
  state        TEXT NOT NULL CHECK (state IN ('processing', 'done')),
  payload      TEXT NOT NULL,
  claimed_at   INTEGER NOT NULL,
  seq          INTEGER UNIQUE,
  completed_at INTEGER
) STRICT;
`;

interface Row {
  state: 'processing' | 'done';
  claimed_at: number;
}

/**
 * The reference merchant's {@link IdempotencyStore} on SQLite (better-sqlite3): one row per
 * idempotency key with its state and, once done, a sequence number. WAL mode; every claim runs in
 * a `BEGIN IMMEDIATE` transaction, so it is atomic even between processes sharing the file. A
 * restart (close, reopen the same file) keeps every `done` key, so nothing is processed twice.
 *
 * @example const store = openSqliteStore('merchant.sqlite'); await store.claim(key, text)
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  readonly #db: Database.Database;
  readonly #leaseMs: number;
  readonly #now: () => number;
  readonly #claim: (key: string, text: string, now: number) => ClaimResult;
  readonly #complete: (key: string, now: number) => void;
  readonly #release: Database.Statement<[string]>;
  readonly #processed: Database.Statement<[], { payload: string }>;

  constructor(db: Database.Database, options: SqliteStoreOptions = {}) {
    this.#db = db;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#now = options.now ?? Date.now;
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    // Another process holding the write lock: wait for it rather than fail the delivery.
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);

    const select = db.prepare<[string], Row>('SELECT state, claimed_at FROM processed_events WHERE key = ?');
    const insert = db.prepare<[string, string, number]>("INSERT INTO processed_events (key, state, payload, claimed_at) VALUES (?, 'processing', ?, ?)");
    // A stale claim is taken over with the new delivery's text: that delivery is the one processed.
    const takeOver = db.prepare<[string, number, string]>("UPDATE processed_events SET payload = ?, claimed_at = ? WHERE key = ? AND state = 'processing'");
    const markDone = db.prepare<[number, string]>(
      "UPDATE processed_events SET state = 'done', completed_at = ?, seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM processed_events) WHERE key = ? AND state = 'processing'",
    );
    this.#claim = db
      .transaction((key: string, text: string, now: number): ClaimResult => {
        const row = select.get(key);
        if (!row) {
          insert.run(key, text, now);
          return 'claimed';
        }
        if (row.state === 'done') return 'processed';
        if (now - row.claimed_at < this.#leaseMs) return 'busy';
        takeOver.run(text, now, key);
        return 'claimed';
      })
      .immediate;
    this.#complete = db.transaction((key: string, now: number) => void markDone.run(now, key)).immediate;
    this.#release = db.prepare<[string]>("DELETE FROM processed_events WHERE key = ? AND state = 'processing'");
    this.#processed = db.prepare<[], { payload: string }>("SELECT payload FROM processed_events WHERE state = 'done' ORDER BY seq");
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    return this.#claim(key, payloadText, this.#now());
  }

  async complete(key: string): Promise<void> {
    this.#complete(key, this.#now());
  }

  async release(key: string): Promise<void> {
    this.#release.run(key);
  }

  async processed(): Promise<string[]> {
    return this.#processed.all().map((row) => row.payload);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}

/**
 * Opens (creating when needed) a SQLite store at `path`, or an in-memory database for `':memory:'`.
 * An unusable file is a ConfigError with one clear line.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteIdempotencyStore {
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    return new SqliteIdempotencyStore(db, options);
  } catch (error) {
    db?.close();
    throw new ConfigError('bad-store', `cannot open the merchant store ${path}: ${(error as Error).message.split('\n')[0]}`);
  }
}
