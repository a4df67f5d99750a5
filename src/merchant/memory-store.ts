import {
  DEFAULT_LEASE_MS,
  type ClaimResult,
  type IdempotencyStore,
  type ProcessedEntry,
  type StoreOptions,
  type StoreTransaction,
  type TransactionOutcome,
} from './store.js';

interface Entry {
  state: 'processing' | 'done';
  text: string;
  token: number;
  claimedAt: number;
}

/**
 * An in-memory {@link IdempotencyStore} for tests and benches: one process, lost on exit. Every
 * method body runs synchronously before its promise settles, so a claim is atomic within the
 * process; the process's clock is the store's clock.
 *
 * @example const store = new MemoryIdempotencyStore(); await store.claim('withdrawal:ab12', text) // { state: 'claimed', token: 1 }
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly leaseMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #done: string[] = [];
  readonly #now: () => number;
  /** Fencing tokens grow across every key and every claim, so a stale token never matches again. */
  #tokens = 0;
  #closed = false;

  constructor(options: StoreOptions = {}) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#now = options.now ?? Date.now;
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    this.#open();
    const entry = this.#entries.get(key);
    const now = this.#now();
    if (entry?.state === 'done') return { state: 'processed' };
    if (entry && now - entry.claimedAt < this.leaseMs) return { state: 'busy' };
    const token = ++this.#tokens;
    this.#entries.set(key, { state: 'processing', text: payloadText, token, claimedAt: now });
    return { state: 'claimed', token };
  }

  async renew(key: string, token: number): Promise<boolean> {
    this.#open();
    const entry = this.#held(key, token);
    if (entry) entry.claimedAt = this.#now();
    return entry !== undefined;
  }

  async complete(key: string, token: number): Promise<boolean> {
    this.#open();
    const entry = this.#entries.get(key);
    if (entry?.token !== token) return false;
    if (entry.state === 'processing') {
      entry.state = 'done';
      this.#done.push(entry.text);
    }
    return true;
  }

  async release(key: string, token: number): Promise<void> {
    this.#open();
    // The row stays with an expired lease: the next claim takes it with a fresh token.
    const entry = this.#held(key, token);
    if (entry) entry.claimedAt = -Infinity;
  }

  async completeInTransaction<T>(
    key: string,
    token: number,
    work: (tx: StoreTransaction) => T | Promise<T>,
  ): Promise<TransactionOutcome<T>> {
    this.#open();
    if (!this.#held(key, token)) return { state: 'lost' };
    const value = await work({ kind: 'memory' });
    return (await this.complete(key, token)) ? { state: 'done', value } : { state: 'lost' };
  }

  async processed(): Promise<string[]> {
    this.#open();
    return [...this.#done];
  }

  async processedPage(after: number, limit: number): Promise<ProcessedEntry[]> {
    this.#open();
    // The sequence number of #done[i] is i + 1.
    const from = Math.max(0, Math.floor(after));
    return this.#done.slice(from, from + limit).map((text, i) => ({ seq: from + i + 1, text }));
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** The entry while `token` holds its claim. */
  #held(key: string, token: number): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry?.state === 'processing' && entry.token === token ? entry : undefined;
  }

  #open(): void {
    if (this.#closed) throw new Error('the idempotency store is closed');
  }
}
