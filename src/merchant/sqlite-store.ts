import { openSqlite, sqliteDriver, type SqliteDatabase, type SqliteStatement } from '../platform/sqlite.js';
import { ConfigError } from '../core/errors.js';
import {
  DEFAULT_LEASE_MS,
  type ClaimResult,
  type IdempotencyStore,
  type ProcessedEntry,
  type StoreOptions,
  type StoreTransaction,
  type TransactionOutcome,
} from './store.js';

/** Options of the SQLite store. */
interface SqliteStoreOptions extends StoreOptions {
  /**
   * `full` (default) syncs every `done` mark to disk before it is acknowledged, so it survives a
   * power cut; `normal` survives a process crash only, and is faster. Claims are never synced on
   * their own: a claim lost in a power cut is only taken again.
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
CREATE TABLE IF NOT EXISTS claim_tokens (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO claim_tokens (id, last) VALUES (1, 0);
`;

/** Default lock bound on SQLite: one write lock for the whole file, taken by every claim and mark. */
const DEFAULT_SQLITE_LOCK_TIMEOUT_MS = 5_000;

/** Did SQLite refuse because another connection holds a lock (busy_timeout is 0: it never waits)? */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** SQLite's clock in ms since the epoch; a test clock is passed as @now instead. */
const NOW = "COALESCE(@now, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER))";

/** A `complete` waiting for the next group commit. */
interface PendingDone {
  key: string;
  token: number;
  now: number | null;
  resolve: (done: boolean) => void;
  reject: (error: unknown) => void;
}

interface Row {
  state: 'processing' | 'done';
  token: number;
  expired: 0 | 1;
}

/**
 * The reference merchant's {@link IdempotencyStore} on SQLite (node:sqlite or better-sqlite3, src/core/sqlite.ts): one row per
 * idempotency key with its state, fencing token and, once done, a sequence number. WAL mode; every
 * claim runs in a `BEGIN IMMEDIATE` transaction, so it is atomic even between processes sharing the
 * file, and lease ages are read from SQLite's clock. A restart (close, reopen the same file) keeps
 * every `done` key, so nothing is processed twice.
 *
 * Waiting for another process's lock never blocks the event loop: `busy_timeout` is 0, so SQLite
 * refuses at once, and the store tries again after a timer (1 ms, doubling to 50 ms) until
 * `lockTimeoutMs`; a claim then answers `busy`, anything else fails. Other requests of this
 * process (other events, the probe) are answered meanwhile (docs/stores.md).
 *
 * @example const store = openSqliteStore('merchant.sqlite'); await store.claim(key, text)
 */
class SqliteIdempotencyStore implements IdempotencyStore {
  readonly leaseMs: number;
  readonly lockTimeoutMs: number;
  readonly #db: SqliteDatabase;
  readonly #now: (() => number) | undefined;
  readonly #claim: (key: string, text: string, now: number | null) => ClaimResult;
  readonly #renew: SqliteStatement<{ key: string; token: number; now: number | null }>;
  readonly #markDone: (key: string, token: number, now: number | null) => boolean;
  readonly #completeMany: (batch: readonly PendingDone[]) => boolean[];
  readonly #durable: boolean;
  #pending: PendingDone[] = [];
  readonly #release: SqliteStatement<{ key: string; token: number }>;
  readonly #held: SqliteStatement<{ key: string; token: number }, { one: 1 }>;
  readonly #processed: SqliteStatement<[], { payload: string }>;
  readonly #page: SqliteStatement<{ after: number; limit: number }, { seq: number; payload: string }>;

  constructor(db: SqliteDatabase, options: SqliteStoreOptions = {}) {
    this.#db = db;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.lockTimeoutMs = Math.max(0, options.lockTimeoutMs ?? DEFAULT_SQLITE_LOCK_TIMEOUT_MS);
    this.#now = options.now;
    // Never wait inside SQLite: its busy handler sleeps on the event loop's thread, so every other
    // request of this process would wait too. #retry waits on a timer instead.
    db.pragma('busy_timeout = 0');
    this.#retryingSync(() => db.pragma('journal_mode = WAL'));
    // Claims commit without a sync (NORMAL); a done mark is synced (FULL) by the commit that writes
    // it, which also syncs the claims before it in the WAL.
    this.#durable = options.synchronous !== 'normal';
    db.pragma('synchronous = NORMAL');
    this.#retryingSync(() => db.exec(SCHEMA));
    // A file written before fencing tokens: add the column (old claims hold token 0).
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(processed_events)').all();
    if (!columns.some((column) => column.name === 'token'))
      db.exec('ALTER TABLE processed_events ADD COLUMN token INTEGER NOT NULL DEFAULT 0');

    const select = db.prepare<{ key: string; now: number | null; lease: number }, Row>(
      `SELECT state, token, (claimed_at <= ${NOW} - @lease) AS expired FROM processed_events WHERE key = @key`,
    );
    const nextToken = db.prepare<[], { last: number }>(
      'UPDATE claim_tokens SET last = last + 1 WHERE id = 1 RETURNING last',
    );
    const insert = db.prepare<{ key: string; text: string; token: number; now: number | null }>(
      `INSERT INTO processed_events (key, state, payload, token, claimed_at) VALUES (@key, 'processing', @text, @token, ${NOW})`,
    );
    // A stale claim is taken over with the new delivery's text: that delivery is the one processed.
    const takeOver = db.prepare<{ key: string; text: string; token: number; now: number | null }>(
      `UPDATE processed_events SET payload = @text, token = @token, claimed_at = ${NOW} WHERE key = @key AND state = 'processing'`,
    );
    const markDone = db.prepare<{ key: string; token: number; now: number | null }>(
      `UPDATE processed_events SET state = 'done', completed_at = ${NOW}, seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM processed_events)
       WHERE key = @key AND token = @token AND state = 'processing'`,
    );
    const doneBy = db.prepare<{ key: string; token: number }, { one: 1 }>(
      "SELECT 1 AS one FROM processed_events WHERE key = @key AND token = @token AND state = 'done'",
    );
    this.#claim = db.transaction((key: string, text: string, now: number | null): ClaimResult => {
      const row = select.get({ key, now, lease: this.leaseMs });
      if (row?.state === 'done') return { state: 'processed' };
      if (row && !row.expired) return { state: 'busy' };
      const token = nextToken.get()!.last;
      (row ? takeOver : insert).run({ key, text, token, now });
      return { state: 'claimed', token };
    }).immediate;
    this.#markDone = (key, token, now) =>
      markDone.run({ key, token, now }).changes === 1 || doneBy.get({ key, token }) !== undefined;
    this.#completeMany = db.transaction((batch: readonly PendingDone[]) =>
      batch.map((done) => this.#markDone(done.key, done.token, done.now)),
    ).immediate;
    this.#renew = db.prepare(
      `UPDATE processed_events SET claimed_at = ${NOW} WHERE key = @key AND token = @token AND state = 'processing'`,
    );
    // The row stays with an expired lease: the next claim takes it with a fresh token.
    this.#release = db.prepare(
      "UPDATE processed_events SET claimed_at = -9223372036854775807 WHERE key = @key AND token = @token AND state = 'processing'",
    );
    this.#held = db.prepare(
      "SELECT 1 AS one FROM processed_events WHERE key = @key AND token = @token AND state = 'processing'",
    );
    this.#processed = db.prepare<[], { payload: string }>(
      "SELECT payload FROM processed_events WHERE state = 'done' ORDER BY seq",
    );
    this.#page = db.prepare<{ after: number; limit: number }, { seq: number; payload: string }>(
      "SELECT seq, payload FROM processed_events WHERE state = 'done' AND seq > @after ORDER BY seq LIMIT @limit",
    );
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    const now = this.#clock();
    const claimed = await this.#retry(() => this.#claim(key, payloadText, now));
    // Another process held the write lock past the bound: it is writing, maybe this very event.
    return claimed ?? { state: 'busy' };
  }

  async renew(key: string, token: number): Promise<boolean> {
    const now = this.#clock();
    const renewed = await this.#retry(() => this.#renew.run({ key, token, now }).changes === 1);
    // Not renewed within the bound: the lease may still hold; the next renewal tries again.
    return renewed ?? true;
  }

  /**
   * Runs `op` (synchronous, one short transaction) until SQLite lets it through; between tries the
   * event loop is free. Undefined when the lock stayed taken for `lockTimeoutMs`.
   */
  async #retry<T>(op: () => T): Promise<T | undefined> {
    const deadline = performance.now() + this.lockTimeoutMs;
    let pause = 1;
    for (;;) {
      try {
        return op();
      } catch (error) {
        if (!isBusy(error)) throw error;
      }
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      pause = Math.min(pause * 2, 50);
    }
  }

  /** The same, for the few statements of opening the store, where nothing else can run yet. */
  #retryingSync<T>(op: () => T): T {
    const deadline = performance.now() + this.lockTimeoutMs;
    for (;;) {
      try {
        return op();
      } catch (error) {
        if (!isBusy(error) || performance.now() >= deadline) throw error;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }

  /** `#retry` for an operation that must happen: running out of the bound is an error. */
  async #must<T>(op: () => T, what: string): Promise<T> {
    const result = await this.#retry(() => ({ value: op() }));
    if (result === undefined)
      throw new Error(`the merchant store is locked by another process for over ${this.lockTimeoutMs} ms (${what})`);
    return result.value;
  }

  /**
   * Group commit: the done marks of every delivery that completes in the same turn of the event
   * loop are written in one transaction with one sync, then each is answered. Under concurrent
   * load that is one fsync for many events instead of one each.
   */
  complete(key: string, token: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ key, token, now: this.#clock(), resolve, reject });
      if (this.#pending.length === 1) setImmediate(() => void this.#flush());
    });
  }

  #flushing: Promise<void> = Promise.resolve();

  /** Writes the waiting done marks (one at a time: a flush waiting for the lock holds the next). */
  #flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      const batch = this.#pending;
      this.#pending = [];
      if (batch.length === 0) return;
      try {
        const results = await this.#must(() => this.#synced(() => this.#completeMany(batch)), 'done mark');
        batch.forEach((done, i) => done.resolve(results[i]!));
      } catch (error) {
        for (const done of batch) done.reject(error);
      }
    });
    return this.#flushing;
  }

  /** Runs a write whose commit must reach the disk (synchronous=FULL) when the store is durable. */
  #synced<T>(write: () => T): T {
    if (!this.#durable || !this.#db.open) return write();
    this.#db.pragma('synchronous = FULL');
    try {
      return write();
    } finally {
      this.#db.pragma('synchronous = NORMAL');
    }
  }

  async release(key: string, token: number): Promise<void> {
    // Not released within the bound: the claim ends with its lease instead.
    await this.#retry(() => this.#release.run({ key, token }));
  }

  /**
   * Runs `work` and the fenced `done` mark in one `BEGIN IMMEDIATE` transaction. SQLite is
   * synchronous: `work` must write synchronously; a returned promise is refused and rolled back.
   */
  async completeInTransaction<T>(
    key: string,
    token: number,
    work: (tx: StoreTransaction) => T | Promise<T>,
  ): Promise<TransactionOutcome<T>> {
    const now = this.#clock();
    const run = this.#db.transaction((): TransactionOutcome<T> => {
      // BEGIN IMMEDIATE holds the write lock: nobody can take the claim over between this check and the mark.
      if (this.#held.get({ key, token }) === undefined) return { state: 'lost' };
      const value = work({ kind: 'sqlite', db: this.#db });
      if (value !== null && typeof (value as { then?: unknown } | undefined)?.then === 'function') {
        throw new TypeError(
          'process must write synchronously in a SQLite transaction (SQLite is synchronous here); nothing was committed',
        );
      }
      if (!this.#markDone(key, token, now))
        throw new Error('the claim was lost inside the transaction; nothing was committed');
      return { state: 'done', value: value as T };
    });
    // A refused BEGIN IMMEDIATE ran nothing of `work`, so trying again is safe.
    return this.#must(() => this.#synced(() => run.immediate()), 'transaction');
  }

  async processed(): Promise<string[]> {
    return (await this.#must(() => this.#processed.all(), 'probe')).map((row) => row.payload);
  }

  async processedPage(after: number, limit: number): Promise<ProcessedEntry[]> {
    return this.#page.all({ after, limit }).map((row) => ({ seq: row.seq, text: row.payload }));
  }

  async close(): Promise<void> {
    // Done marks waiting for their group commit are written first.
    if (this.#pending.length > 0 && this.#db.open) await this.#flush();
    else await this.#flushing;
    if (this.#db.open) this.#db.close();
  }

  #clock(): number | null {
    return this.#now ? this.#now() : null;
  }
}

/**
 * Opens (creating when needed) a SQLite store at `path`, or an in-memory database for `':memory:'`.
 * An unusable file is a ConfigError with one clear line.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteIdempotencyStore {
  // No driver (better-sqlite3 missing where Node has no node:sqlite) is its own one-line error, not the file's.
  sqliteDriver();
  let db: SqliteDatabase | undefined;
  try {
    db = openSqlite(path);
    return new SqliteIdempotencyStore(db, options);
  } catch (error) {
    db?.close();
    throw new ConfigError(
      'bad-store',
      `cannot open the merchant store ${path}: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}
