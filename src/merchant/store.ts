/**
 * Where the reference merchant records which events it has processed (CB-ONCE, CB-DUP-ACK).
 *
 * The contract is a claim/complete/release protocol, so that exactly one of many concurrent
 * deliveries of an event runs the business processing, and a crash mid-processing never loses the
 * event:
 *
 * 1. `claim(key, text)`: atomically
 *    - no row, or a `processing` row whose lease expired (its process crashed) → take it: `claimed`;
 *    - a `done` row → `processed` (a duplicate: answer errCode 0, do nothing);
 *    - a live `processing` row → `busy` (another delivery is processing it right now).
 * 2. After the business processing succeeded: `complete(key)` marks it `done` and gives it the
 *    next sequence number (the probe's processing order).
 * 3. After it failed: `release(key)` forgets the claim, so the service's retry processes it.
 *
 * Every method is async so that a store over a network database (PostgreSQL: one table with a
 * primary key on `key`, `claim` as `INSERT ... ON CONFLICT DO UPDATE ... WHERE state =
 * 'processing' AND claimed_at < now() - lease RETURNING`) implements the same interface.
 *
 * Exactly-once across a crash *between* the business effect and `complete` needs the business
 * effect and `complete` in one transaction of the same database; without that, an expired lease
 * makes the event run again (at-least-once), which is the safe side for a money event.
 */
export interface IdempotencyStore {
  /** Tries to take the event for processing; `payloadText` is kept for the probe. */
  claim(key: string, payloadText: string): Promise<ClaimResult>;
  /** Marks a claimed event processed (idempotent for a key already done). */
  complete(key: string): Promise<void>;
  /** Gives up a claim after failed processing, so a retry can claim it again. */
  release(key: string): Promise<void>;
  /** Decrypted payload texts of the processed events, in processing order (the probe). */
  processed(): Promise<string[]>;
  /** Releases the store's resources; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** What `claim` found: see {@link IdempotencyStore}. */
export type ClaimResult = 'claimed' | 'processed' | 'busy';

/** Options every store takes. */
export interface StoreOptions {
  /**
   * How long a `processing` claim holds before another delivery may take it over (ms). It must be
   * longer than any business processing; it only matters when a process died mid-claim.
   */
  leaseMs?: number;
  /** The clock (ms since the epoch); tests swap it. */
  now?: () => number;
}

/** Default lease of a claim: 30 s. */
export const DEFAULT_LEASE_MS = 30_000;
