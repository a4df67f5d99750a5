/**
 * A ring of the latest entries, bounded by count and by weight (bytes): pushing past either bound
 * forgets the oldest entries first, so the live page's memory stays flat however long observe runs.
 * Entries are found by key (an exchange's seq) in constant time.
 */
export class Ring<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>();
  #weight = 0;
  /** Entries forgotten so far (pushed out by a newer one). */
  forgotten = 0;

  constructor(
    readonly capacity: number,
    readonly maxWeight: number = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a ring holds at least one entry, not ${capacity}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The sum of the weights held. */
  get weight(): number {
    return this.#weight;
  }

  /** Adds (or replaces) the entry of `key` as the newest, then forgets the oldest beyond the bounds (never the newest). */
  push(key: K, value: V, weight = 0): void {
    const old = this.#entries.get(key);
    if (old) {
      this.#weight -= old.weight;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.capacity && this.#weight <= this.maxWeight) break;
      if (oldest === key) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
      this.forgotten++;
    }
  }

  get(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** The values, oldest first. */
  values(): V[] {
    return [...this.#entries.values()].map((entry) => entry.value);
  }
}
