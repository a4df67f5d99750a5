import type pg from 'pg';
import { ConfigError } from '../core/errors.js';
import { pgDriver } from './pg-driver.js';
import { DEFAULT_LEASE_MS, type ClaimResult, type IdempotencyStore, type StoreOptions, type StoreTransaction, type TransactionOutcome } from './store.js';

/** Options of the PostgreSQL store. */
export interface PostgresStoreOptions extends Omit<StoreOptions, 'now'> {
  /** Table name (default `wallet_processed_events`); its sequences take the same prefix. */
  table?: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
}

/** Table, sequence and notification channel names of one store. */
interface Names {
  table: string;
  tokens: string;
  order: string;
  /** NOTIFY channel: the key of every completed or released claim. */
  channel: string;
}

/**
 * The reference merchant's {@link IdempotencyStore} on PostgreSQL: the store for several merchant
 * instances behind a load balancer on one database. One table (primary key on the idempotency key,
 * state, fencing token, payload, claim time, sequence), created on first use. Every claim is one
 * `INSERT ... ON CONFLICT DO UPDATE ... WHERE` statement, atomic across instances; fencing tokens
 * and the processing order come from sequences; lease ages are read from the server's clock
 * (`clock_timestamp()`), so instances with skewed clocks agree on who holds a claim. In
 * transactional mode the fenced `done` mark runs in the business transaction (`SELECT ... FOR
 * UPDATE` first, so no takeover can slip in before the commit).
 *
 * @example const store = openPostgresStore('postgres://merchant@db.internal/wallet'); await store.claim(key, text)
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly leaseMs: number;
  readonly #pool: pg.Pool;
  /**
   * Claims, renewals and releases commit without waiting for the disk (`synchronous_commit=off`):
   * one lost in a crash is a claim never made, which the next delivery makes again. Done marks go
   * through `#pool` and wait for the disk, and WAL order means a durable done mark carries its claim
   * with it. Half the flushes per event, so the store is not the bottleneck before decryption is.
   */
  readonly #claims: pg.Pool;
  readonly #names: Names;
  readonly #where: string;
  readonly #url: string;
  #schema: Promise<void> | undefined;
  /** The LISTEN connection, opened on the first wait. */
  #listener: Promise<pg.Client> | undefined;
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const table = options.table ?? 'wallet_processed_events';
    if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table)) throw new ConfigError('bad-store', `the merchant store's table name must be lower-case letters, digits and _, not ${JSON.stringify(table)}`);
    this.#names = { table, tokens: `${table}_token`, order: `${table}_seq`, channel: `${table}_settled` };
    this.#where = redact(url);
    this.#url = url;
    const pg = pgDriver();
    this.#pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
    this.#claims = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, options: '-c synchronous_commit=off' });
    // An idle client's error (the server restarted) must not crash the merchant; the next query reconnects.
    this.#pool.on('error', () => undefined);
    this.#claims.on('error', () => undefined);
  }

  /** Connects and creates the schema when missing; a failure names the server without its password. */
  async ready(): Promise<void> {
    this.#schema ??= this.#createSchema().catch((error: unknown) => {
      this.#schema = undefined;
      throw new ConfigError('bad-store', `cannot use the merchant store ${this.#where}: ${(error as Error).message.split('\n')[0]}`);
    });
    return this.#schema;
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    await this.ready();
    const { table, tokens } = this.#names;
    // New key → insert; a processing row whose lease ran out by the server's clock → take it over
    // with a new token and this delivery's text. Anything else leaves the row and returns nothing.
    const taken = await this.#claims.query<{ token: string }>(
      `INSERT INTO ${table} AS t (key, state, token, payload, claimed_at) VALUES ($1, 'processing', nextval('${tokens}'), $2, clock_timestamp())
       ON CONFLICT (key) DO UPDATE SET token = nextval('${tokens}'), payload = EXCLUDED.payload, claimed_at = clock_timestamp()
       WHERE t.state = 'processing' AND t.claimed_at <= clock_timestamp() - make_interval(secs => $3::double precision / 1000)
       RETURNING token`,
      [key, payloadText, this.leaseMs],
    );
    if (taken.rows[0]) return { state: 'claimed', token: Number(taken.rows[0].token) };
    const row = await this.#claims.query<{ state: string }>(`SELECT state FROM ${table} WHERE key = $1`, [key]);
    return row.rows[0]?.state === 'done' ? { state: 'processed' } : { state: 'busy' };
  }

  async renew(key: string, token: number): Promise<boolean> {
    await this.ready();
    const result = await this.#claims.query(`UPDATE ${this.#names.table} SET claimed_at = clock_timestamp() WHERE key = $1 AND token = $2 AND state = 'processing'`, [key, token]);
    return result.rowCount === 1;
  }

  async complete(key: string, token: number): Promise<boolean> {
    await this.ready();
    return this.#markDone(this.#pool, key, token);
  }

  async release(key: string, token: number): Promise<void> {
    await this.ready();
    // The row stays with an expired lease: the next claim takes it with a fresh token. Waiting
    // deliveries in other instances are told at once.
    const { table, channel } = this.#names;
    await this.#claims.query(
      `WITH released AS (UPDATE ${table} SET claimed_at = '-infinity' WHERE key = $1 AND token = $2 AND state = 'processing' RETURNING key)
       SELECT pg_notify('${channel}', key) FROM released`,
      [key, token],
    );
  }

  async settled(key: string, timeoutMs: number): Promise<'settled' | 'timeout'> {
    try {
      await this.#listen();
    } catch {
      // No notifications (the LISTEN connection failed): the caller's poll still finds the change.
      return new Promise((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, timeoutMs)).unref());
    }
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(key) ?? new Set<() => void>();
      this.#waiters.set(key, waiters);
      const done = (outcome: 'settled' | 'timeout') => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiters.get(key) === waiters) this.#waiters.delete(key);
        resolve(outcome);
      };
      const wake = () => done('settled');
      const timer = setTimeout(() => done('timeout'), Math.max(0, timeoutMs));
      timer.unref();
      waiters.add(wake);
    });
  }

  /** One connection LISTENing on the store's channel; a broken one is replaced on the next wait. */
  #listen(): Promise<pg.Client> {
    this.#listener ??= (async () => {
      await this.ready();
      const pg = pgDriver();
      const client = new pg.Client({ connectionString: this.#url });
      client.on('notification', (message) => {
        for (const wake of [...(this.#waiters.get(message.payload ?? '') ?? [])]) wake();
      });
      client.on('error', () => {
        this.#listener = undefined;
        client.end().catch(() => undefined);
      });
      await client.connect();
      await client.query(`LISTEN ${this.#names.channel}`);
      if (this.#closed) await client.end();
      return client;
    })().catch((error: unknown) => {
      this.#listener = undefined;
      throw error;
    });
    return this.#listener;
  }

  async completeInTransaction<T>(key: string, token: number, work: (tx: StoreTransaction) => T | Promise<T>): Promise<TransactionOutcome<T>> {
    await this.ready();
    const client = await this.#pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      // The row lock holds off any takeover until this transaction ends; then it sees `done`.
      const held = await client.query(`SELECT 1 FROM ${this.#names.table} WHERE key = $1 AND token = $2 AND state = 'processing' FOR UPDATE`, [key, token]);
      if (held.rowCount !== 1) {
        await client.query('ROLLBACK');
        return { state: 'lost' };
      }
      const value = await work({ kind: 'postgres', client });
      if (!(await this.#markDone(client, key, token))) throw new Error('the claim was lost inside the transaction; nothing was committed');
      await client.query('COMMIT');
      return { state: 'done', value };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async processed(): Promise<string[]> {
    await this.ready();
    const result = await this.#pool.query<{ payload: string }>(`SELECT payload FROM ${this.#names.table} WHERE state = 'done' ORDER BY seq`);
    return result.rows.map((row) => row.payload);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener) await listener.then((client) => client.end()).catch(() => undefined);
    await Promise.all([this.#pool.end().catch(() => undefined), this.#claims.end().catch(() => undefined)]);
  }

  async #markDone(db: pg.Pool | pg.PoolClient, key: string, token: number): Promise<boolean> {
    const { table, order, channel } = this.#names;
    // The notification goes out when this commits (at once outside a transaction).
    const done = await db.query(
      `WITH done AS (UPDATE ${table} SET state = 'done', seq = nextval('${order}'), completed_at = clock_timestamp() WHERE key = $1 AND token = $2 AND state = 'processing' RETURNING key)
       SELECT pg_notify('${channel}', key) FROM done`,
      [key, token],
    );
    if (done.rowCount === 1) return true;
    const again = await db.query(`SELECT 1 FROM ${table} WHERE key = $1 AND token = $2 AND state = 'done'`, [key, token]);
    return again.rowCount === 1;
  }

  async #createSchema(): Promise<void> {
    const { table, tokens, order } = this.#names;
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      // Several instances starting at once: one creates, the others wait and find it there.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
      await client.query(`CREATE SEQUENCE IF NOT EXISTS ${tokens}`);
      await client.query(`CREATE SEQUENCE IF NOT EXISTS ${order}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
        key          text PRIMARY KEY,
        state        text NOT NULL CHECK (state IN ('processing', 'done')),
        token        bigint NOT NULL,
        payload      text NOT NULL,
        claimed_at   timestamptz NOT NULL,
        seq          bigint UNIQUE,
        completed_at timestamptz
      )`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

/**
 * Opens a PostgreSQL store at `url` (`postgres://user:password@host:port/database`). It connects
 * lazily; `await store.ready()` to fail fast. Messages never show the password.
 */
export function openPostgresStore(url: string, options: PostgresStoreOptions = {}): PostgresIdempotencyStore {
  return new PostgresIdempotencyStore(url, options);
}

/** Is this store setting a PostgreSQL URL? */
export function isPostgresUrl(store: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(store);
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
