/**
 * Where the reference merchant records which events it has processed (CB-ONCE, CB-DUP-ACK).
 *
 * The contract is a claim/complete/release protocol with fencing tokens, so that exactly one of
 * many concurrent deliveries of an event runs the business processing, a crash mid-processing
 * never loses the event, and a holder that lost its claim can never mark or release another's:
 *
 * 1. `claim(key, text)`: atomically
 *    - no row, or a `processing` row whose lease expired (its holder crashed or stalled) → take it
 *      with a new fencing token, larger than every token given before: `claimed`;
 *    - a `done` row → `processed` (a duplicate: answer errCode 0, do nothing);
 *    - a live `processing` row → `busy` (another delivery is processing it right now).
 * 2. While processing runs, `renew(key, token)` extends the lease; it answers false once another
 *    delivery took the claim over, and the holder then knows it lost.
 * 3. After the business processing succeeded: `complete(key, token)` marks it `done` and gives it
 *    the next sequence number (the probe's processing order), but only while `token` is the current
 *    one; false means the claim was lost (the caller answers non-zero, the service retries).
 * 4. After it failed: `release(key, token)` ends the claim (only the current token's), so the
 *    service's retry processes it.
 *
 * Lease age is measured by the store's own clock (SQLite's and PostgreSQL's `now`, in SQL), never
 * by the clock of each merchant process, so instances with skewed clocks agree on who holds a claim.
 *
 * Exactly-once across a crash or a stall *between* the business effect and `complete` needs the
 * business effect and the `done` mark in one transaction of the same database:
 * `completeInTransaction(key, token, work)` runs `work(tx)` and the fenced `done` mark in one
 * transaction, and rolls both back when the token is no longer current. Without it, an expired
 * lease makes the event run again (at-least-once), which is the safe side for a money event.
 */
export interface IdempotencyStore {
  /** How long a claim holds without renewal (ms); the receiver renews at a third of it. */
  readonly leaseMs: number;
  /** Tries to take the event for processing; `payloadText` is kept for the probe. */
  claim(key: string, payloadText: string): Promise<ClaimResult>;
  /** Extends the lease of a claim; false when `token` no longer holds it. */
  renew(key: string, token: number): Promise<boolean>;
  /**
   * Marks a claimed event processed; true when `token` held the claim (or already completed it),
   * false when the claim was lost to another delivery.
   */
  complete(key: string, token: number): Promise<boolean>;
  /** Gives up a claim after failed processing, so a retry can claim it again; a stale token does nothing. */
  release(key: string, token: number): Promise<void>;
  /**
   * Transactional mode: runs `work` with the store's transaction, then the fenced `done` mark in
   * that same transaction. `lost` (and nothing committed) when `token` no longer holds the claim;
   * a throwing `work` rolls back and rethrows.
   */
  completeInTransaction?<T>(
    key: string,
    token: number,
    work: (tx: StoreTransaction) => T | Promise<T>,
  ): Promise<TransactionOutcome<T>>;
  /**
   * Resolves when a claim on `key` is completed or released by any instance, or after
   * `timeoutMs`. Optional: a store without it is polled. The PostgreSQL store listens for the
   * other instances' notifications, so a duplicate racing across instances is answered as soon as
   * the first delivery commits.
   */
  settled?(key: string, timeoutMs: number): Promise<'settled' | 'timeout'>;
  /** Decrypted payload texts of the processed events, in processing order (the probe). */
  processed(): Promise<string[]>;
  /**
   * One page of the processed events after sequence number `after` (0: from the start), in
   * processing order, at most `limit` of them: what the paged probe serves without loading the
   * whole history. Optional: the server pages over `processed()` for a store without it.
   */
  processedPage?(after: number, limit: number): Promise<ProcessedEntry[]>;
  /** Releases the store's resources; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** A processed event as the paged probe reads it: its sequence number (the cursor) and payload text. */
export interface ProcessedEntry {
  seq: number;
  text: string;
}

/** What `claim` found: see {@link IdempotencyStore}. */
export type ClaimResult = { state: 'claimed'; token: number } | { state: 'processed' } | { state: 'busy' };

/** The result of a transactional completion. */
export type TransactionOutcome<T> = { state: 'done'; value: T } | { state: 'lost' };

/**
 * The transaction handed to `process(event, tx)` in transactional mode: write the business effect
 * through it, and it commits together with the `done` mark.
 *
 * - `postgres`: a `pg` client inside `BEGIN ... COMMIT` (`await tx.client.query(...)`).
 * - `sqlite`: the SQLite database (better-sqlite3's API, either driver) inside `BEGIN IMMEDIATE`; it is synchronous,
 *   so `process` must do its writes synchronously (a returned promise is refused and rolled back).
 * - `memory`: no database; `process` runs and the mark follows only when it succeeds.
 */
export type StoreTransaction =
  | {
      kind: 'postgres';
      client: { query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }> };
    }
  | { kind: 'sqlite'; db: import('../platform/sqlite.js').SqliteDatabase }
  | { kind: 'memory' };

/** Options every store takes. */
export interface StoreOptions {
  /**
   * How long a `processing` claim holds without renewal before another delivery may take it over
   * (ms). The receiver renews it while `process` runs, so it only matters when a process died or
   * stalled mid-claim.
   */
  leaseMs?: number;
  /**
   * A test clock (ms since the epoch) standing in for the store's own clock. Production leaves it
   * unset: SQLite and PostgreSQL then read the time in SQL.
   */
  now?: () => number;
  /**
   * How long one store operation waits for a lock another instance holds (ms) before it gives up:
   * a claim then answers `busy` (the receiver waits and tries again, or answers 409), any other
   * operation fails. A holder stalled while it holds a lock therefore delays only deliveries of its
   * own event, each by at most this bound. Default: 1 s on PostgreSQL (its row locks are held only
   * from the done mark to the commit), 5 s on SQLite (one write lock for the whole file).
   */
  lockTimeoutMs?: number;
}

/** Default lease of a claim: 30 s. */
export const DEFAULT_LEASE_MS = 30_000;
