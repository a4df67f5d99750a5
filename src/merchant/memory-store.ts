import { DEFAULT_LEASE_MS, type ClaimResult, type IdempotencyStore, type StoreOptions } from './store.js';

interface Entry {
  state: 'processing' | 'done';
  text: string;
  claimedAt: number;
}

/**
 * An in-memory {@link IdempotencyStore} for tests and benches: one process, lost on exit. Every
 * method body runs synchronously before its promise settles, so a claim is atomic within the
 * process.
 *
 * @example const store = new MemoryIdempotencyStore(); await store.claim('withdrawal:ab12', text) // 'claimed'
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #done: string[] = [];
  readonly #leaseMs: number;
  readonly #now: () => number;
  #closed = false;

  constructor(options: StoreOptions = {}) {
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#now = options.now ?? Date.now;
  }

  async claim(key: string, payloadText: string): Promise<ClaimResult> {
    this.#open();
    const entry = this.#entries.get(key);
    const now = this.#now();
    if (entry?.state === 'done') return 'processed';
    if (entry && now - entry.claimedAt < this.#leaseMs) return 'busy';
    this.#entries.set(key, { state: 'processing', text: payloadText, claimedAt: now });
    return 'claimed';
  }

  async complete(key: string): Promise<void> {
    this.#open();
    const entry = this.#entries.get(key);
    if (!entry || entry.state === 'done') return;
    entry.state = 'done';
    this.#done.push(entry.text);
  }

  async release(key: string): Promise<void> {
    this.#open();
    if (this.#entries.get(key)?.state === 'processing') this.#entries.delete(key);
  }

  async processed(): Promise<string[]> {
    this.#open();
    return [...this.#done];
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new Error('the idempotency store is closed');
  }
}
