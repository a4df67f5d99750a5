import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ConfigError } from '../core/errors.js';
import { pgDriver } from './pg-driver.js';
import {
  DEFAULT_LEASE_MS,
  type ClaimResult,
  type IdempotencyStore,
  type ProcessedEntry,
  type StoreOptions,
  type StoreTransaction,
  type TransactionOutcome,
} from './store.js';

/** Options of the PostgreSQL store. */
interface PostgresStoreOptions extends Omit<StoreOptions, 'now'> {
  /** Table name (default `wallet_processed_events`); its sequences take the same prefix. */
  table?: string;
  /** Connections in each of the two pools, claims and business work (default 10). */
  poolSize?: number;
  /**
   * Transactional mode: how long a business transaction may sit idle, waiting for its merchant
   * process, before the server ends it and rolls it back (`idle_in_transaction_session_timeout`,
   * ms; default: the lease). A holder stopped (SIGSTOP, a long GC pause, a frozen VM) with its
   * transaction open thus releases its locks after this bound, its claim's lease runs out, and
   * another instance takes the event over; when the holder resumes, its commit fails.
   */
  transactionIdleMs?: number;
}

/** Default lock bound on PostgreSQL: row locks are held only from a done mark to its commit. */
const DEFAULT_PG_LOCK_TIMEOUT_MS = 1_000;

/** SQLSTATE of a statement that gave up waiting for a lock (`lock_timeout`). */
const LOCK_NOT_AVAILABLE = '55P03';

function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
}

/** Table and sequence names of one store. */
interface Names {
  table: string;
  tokens: string;
  order: string;
}

/**
 * The NOTIFY channel of one key of one table: `wc` and the MD5 of `table:key` in hex (34
 * characters, under PostgreSQL's 63; the same in SQL, see {@link channelSql}). One channel per key,
 * so a completed claim wakes only the instances waiting for that key, not every instance.
 */
function channelOf(table: string, key: string): string {
  return `wc${createHash('md5').update(`${table}:${key}`, 'utf8').digest('hex')}`;
}

/** {@link channelOf} in SQL, for the key in the column or parameter `key`. */
const channelSql = (table: string, key: string): string => `'wc' || md5('${table}:' || ${key})`;

/**
 * The reference merchant's {@link IdempotencyStore} on PostgreSQL: the store for several merchant
 * instances behind a load balancer on one database. One table (primary key on the idempotency key,
 * state, fencing token, payload, claim time, sequence), created on first use. Every claim is one
 * `INSERT ... ON CONFLICT DO UPDATE ... WHERE` statement, atomic across instances; fencing tokens
 * and the processing order come from sequences; lease ages are read from the server's clock
 * (`clock_timestamp()`), so instances with skewed clocks agree on who holds a claim.
 *
 * A stalled instance delays only its own event (docs/stores.md): claims and business work use two
 * pools; every statement waits at most `lockTimeoutMs` for another instance's lock (a claim that
 * runs out answers `busy`); no lock is held while the business work runs. In transactional mode
 * the fenced `done` mark is the last statement before COMMIT, so a holder whose claim was taken
 * over finds its token gone and rolls back, and the server ends a transaction left idle longer
 * than `transactionIdleMs`, so a stopped holder cannot keep its locks.
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
  readonly lockTimeoutMs: number;
  readonly #names: Names;
  readonly #where: string;
  readonly #url: string;
  #schema: Promise<void> | undefined;
  /** The LISTEN connection, opened on the first wait. */
  #listener: Promise<pg.Client> | undefined;
  /** The LISTEN connection's statements, one after another (pg does not queue them itself). */
  #listenerQueue: Promise<unknown> = Promise.resolve();
  /** Keys this instance waits for: the channel listened on, its waiters, whether the row was still held once listening. */
  readonly #waits = new Map<string, { channel: string; waiters: Set<() => void>; held: Promise<boolean> }>();
  #closed = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const table = options.table ?? 'wallet_processed_events';
    if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table))
      throw new ConfigError(
        'bad-store',
        `the merchant store's table name must be lower-case letters, digits and _, not ${JSON.stringify(table)}`,
      );
    this.#names = { table, tokens: `${table}_token`, order: `${table}_seq` };
    this.#where = redact(url);
    this.#url = url;
    this.lockTimeoutMs = Math.max(1, Math.round(options.lockTimeoutMs ?? DEFAULT_PG_LOCK_TIMEOUT_MS));
    const idleMs = Math.max(1, Math.round(options.transactionIdleMs ?? this.leaseMs));
    const bounded = `-c lock_timeout=${this.lockTimeoutMs}`;
    const pg = pgDriver();
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      options: `${bounded} -c idle_in_transaction_session_timeout=${idleMs}`,
    });
    this.#claims = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      options: `${bounded} -c synchronous_commit=off`,
    });
    // An idle client's error (the server restarted) must not crash the merchant; the next query reconnects.
    this.#pool.on('error', () => undefined);
    this.#claims.on('error', () => undefined);
  }

  /** Connects and creates the schema when missing; a failure names the server without its password. */
  async ready(): Promise<void> {
    this.#schema ??= this.#createSchema().catch((error: unknown) => {
      this.#schema = undefined;
      throw new ConfigError(
        'bad-store',
        `cannot use the merchant store ${this.#where}: ${(error as Error).message.split('\n')[0]}`,
      );
    });
    return this.#schema;
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    await this.ready();
    const { table, tokens } = this.#names;
    // One round trip. New key → insert; a processing row whose lease ran out by the server's clock
    // → take it over with a new token and this delivery's text. Anything else leaves the row, and
    // the second branch reads its state (from the statement's snapshot: a row committed since is
    // not seen and counts as busy, so the caller asks again).
    let rows: { token: string | null; state: string | null }[];
    try {
      ({ rows } = await this.#claims.query<{ token: string | null; state: string | null }>(
        `WITH taken AS (
           INSERT INTO ${table} AS t (key, state, token, payload, claimed_at) VALUES ($1, 'processing', nextval('${tokens}'), $2, clock_timestamp())
           ON CONFLICT (key) DO UPDATE SET token = nextval('${tokens}'), payload = EXCLUDED.payload, claimed_at = clock_timestamp()
           WHERE t.state = 'processing' AND t.claimed_at <= clock_timestamp() - make_interval(secs => $3::double precision / 1000)
           RETURNING token)
         SELECT token::text, NULL::text AS state FROM taken
         UNION ALL SELECT NULL, state FROM ${table} WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM taken)`,
        [key, payloadText, this.leaseMs],
      ));
    } catch (error) {
      // Another instance holds the row (between its done mark and its commit) longer than the
      // lock bound: someone is processing this event.
      if (isLockTimeout(error)) return { state: 'busy' };
      throw error;
    }
    const row = rows[0];
    if (row?.token) return { state: 'claimed', token: Number(row.token) };
    return row?.state === 'done' ? { state: 'processed' } : { state: 'busy' };
  }

  async renew(key: string, token: number): Promise<boolean> {
    await this.ready();
    const result = await this.#claims.query(
      `UPDATE ${this.#names.table} SET claimed_at = clock_timestamp() WHERE key = $1 AND token = $2 AND state = 'processing'`,
      [key, token],
    );
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
    const { table } = this.#names;
    try {
      await this.#claims.query(
        `WITH released AS (UPDATE ${table} SET claimed_at = '-infinity' WHERE key = $1 AND token = $2 AND state = 'processing' RETURNING key)
         SELECT pg_notify(${channelSql(table, 'key')}, key) FROM released`,
        [key, token],
      );
    } catch (error) {
      // The row is locked past the bound by a newer holder's commit: this claim is gone anyway.
      if (!isLockTimeout(error)) throw error;
    }
  }

  async settled(key: string, timeoutMs: number): Promise<'settled' | 'timeout'> {
    let client: pg.Client;
    try {
      client = await this.#listen();
    } catch {
      // No notifications (the LISTEN connection failed): the caller's poll still finds the change.
      return new Promise((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, timeoutMs)).unref());
    }
    const { table } = this.#names;
    let wait = this.#waits.get(key);
    if (!wait) {
      // The first waiter for this key listens on its channel, then looks at the row once, in one
      // round trip: the explicit COMMIT makes the LISTEN take effect before the SELECT's snapshot,
      // so a claim settled before the LISTEN is seen by the SELECT and one settled after it is
      // notified. Nothing is missed in between.
      const channel = channelOf(table, key);
      const held = this.#onListener(() =>
        client.query(
          `LISTEN ${channel}; COMMIT; SELECT 1 FROM ${table} WHERE key = ${client.escapeLiteral(key)} AND state = 'processing' ` +
            `AND claimed_at > clock_timestamp() - make_interval(secs => ${this.leaseMs} / 1000.0)`,
        ),
      ).then(
        // Three statements answer with three results; the SELECT's is the last.
        (results: pg.QueryResult | pg.QueryResult[]) =>
          (Array.isArray(results) ? results.at(-1) : results)?.rowCount === 1,
        // Treated as still held: the caller's slower poll finds the change.
        () => true,
      );
      wait = { channel, waiters: new Set(), held };
      this.#waits.set(key, wait);
    }
    const current = wait;
    return new Promise((resolve) => {
      const done = (outcome: 'settled' | 'timeout') => {
        clearTimeout(timer);
        current.waiters.delete(wake);
        if (current.waiters.size === 0 && this.#waits.get(key) === current) {
          // The last waiter leaves: stop listening, so this connection is told nothing it does not wait for.
          this.#waits.delete(key);
          this.#onListener(() => client.query(`UNLISTEN ${current.channel}`)).catch(() => undefined);
        }
        resolve(outcome);
      };
      const wake = () => done('settled');
      const timer = setTimeout(() => done('timeout'), Math.max(0, timeoutMs));
      timer.unref();
      current.waiters.add(wake);
      void current.held.then((held) => (held ? undefined : wake()));
    });
  }

  /** Runs `statement` on the LISTEN connection after the ones queued before it. */
  #onListener<T>(statement: () => Promise<T>): Promise<T> {
    const run = this.#listenerQueue.then(statement);
    this.#listenerQueue = run.catch(() => undefined);
    return run;
  }

  /** One connection for LISTEN, opened on the first wait; a broken one is replaced on the next wait. */
  #listen(): Promise<pg.Client> {
    this.#listener ??= (async () => {
      await this.ready();
      const pg = pgDriver();
      const client = new pg.Client({ connectionString: this.#url });
      client.on('notification', (message) => {
        for (const wake of [...(this.#waits.get(message.payload ?? '')?.waiters ?? [])]) wake();
      });
      client.on('error', () => {
        this.#listener = undefined;
        // Its channels are gone with it: the waiters look at the store again (a wasted claim at worst).
        const waits = [...this.#waits.values()];
        this.#waits.clear();
        for (const wait of waits) for (const wake of [...wait.waiters]) wake();
        client.end().catch(() => undefined);
      });
      await client.connect();
      if (this.#closed) await client.end();
      return client;
    })().catch((error: unknown) => {
      this.#listener = undefined;
      throw error;
    });
    return this.#listener;
  }

  async completeInTransaction<T>(
    key: string,
    token: number,
    work: (tx: StoreTransaction) => T | Promise<T>,
  ): Promise<TransactionOutcome<T>> {
    await this.ready();
    const { table, order } = this.#names;
    const client = await this.#pool.connect();
    // The server may end this session while it is checked out (idle in transaction past
    // transactionIdleMs, the holder stalled): that is an error of this transaction, not of the process.
    let ended: unknown;
    const onError = (error: unknown) => (ended ??= error);
    client.on('error', onError);
    let broken = false;
    try {
      await client.query('BEGIN');
      // A cheap early answer for a claim already lost; no lock: a takeover may still happen while
      // `work` runs, and the fenced mark below then finds the token gone.
      const held = await client.query(`SELECT 1 FROM ${table} WHERE key = $1 AND token = $2 AND state = 'processing'`, [
        key,
        token,
      ]);
      if (held.rowCount !== 1) {
        await client.query('ROLLBACK');
        return { state: 'lost' };
      }
      const value = await work({ kind: 'postgres', client });
      if (ended) throw ended;
      // The fence: the mark is the last statement, and takes the row lock, so from here to COMMIT
      // no takeover can happen, and a takeover that happened before leaves nothing to mark.
      const marked = await client.query(
        `WITH done AS (UPDATE ${table} SET state = 'done', seq = nextval('${order}'), completed_at = clock_timestamp() WHERE key = $1 AND token = $2 AND state = 'processing' RETURNING key)
         SELECT pg_notify(${channelSql(table, 'key')}, key) FROM done`,
        [key, token],
      );
      if (marked.rowCount !== 1) {
        await client.query('ROLLBACK');
        return { state: 'lost' };
      }
      await client.query('COMMIT');
      return { state: 'done', value };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      if (ended) broken = true;
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  async processed(): Promise<string[]> {
    await this.ready();
    const result = await this.#pool.query<{ payload: string }>(
      `SELECT payload FROM ${this.#names.table} WHERE state = 'done' ORDER BY seq`,
    );
    return result.rows.map((row) => row.payload);
  }

  async processedPage(after: number, limit: number): Promise<ProcessedEntry[]> {
    await this.ready();
    // seq is a bigint: pg returns it as a string.
    const result = await this.#pool.query<{ seq: string; payload: string }>(
      `SELECT seq, payload FROM ${this.#names.table} WHERE state = 'done' AND seq > $1 ORDER BY seq LIMIT $2`,
      [after, limit],
    );
    return result.rows.map((row) => ({ seq: Number(row.seq), text: row.payload }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener) await listener.then((client) => client.end()).catch(() => undefined);
    await Promise.all([this.#pool.end().catch(() => undefined), this.#claims.end().catch(() => undefined)]);
  }

  async #markDone(db: pg.Pool | pg.PoolClient, key: string, token: number): Promise<boolean> {
    const { table, order } = this.#names;
    // The notification goes out when this commits (at once outside a transaction).
    const done = await db.query(
      `WITH done AS (UPDATE ${table} SET state = 'done', seq = nextval('${order}'), completed_at = clock_timestamp() WHERE key = $1 AND token = $2 AND state = 'processing' RETURNING key)
       SELECT pg_notify(${channelSql(table, 'key')}, key) FROM done`,
      [key, token],
    );
    if (done.rowCount === 1) return true;
    const again = await db.query(`SELECT 1 FROM ${table} WHERE key = $1 AND token = $2 AND state = 'done'`, [
      key,
      token,
    ]);
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
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
