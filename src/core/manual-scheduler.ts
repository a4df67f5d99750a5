import type { Scheduler } from './scheduler.js';

interface Timer {
  at: number;
  run: () => void;
}

/**
 * A {@link Scheduler} whose time moves only when a test says so: `advance(ms)` runs every timer that
 * falls due, earliest first, with the clock set to its due time. Give a store the same clock
 * (`now: () => scheduler.now()`) and leases, renewals and waits all follow one hand-moved time.
 *
 * @example const scheduler = new ManualScheduler(); createCallbackReceiver({ ...options, scheduler }); await scheduler.advance(30_000)
 */
export class ManualScheduler implements Scheduler {
  #now: number;
  #ids = 0;
  readonly #timers = new Map<number, Timer>();

  /** @param start the clock's first reading (ms) */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, run: () => void): () => void {
    const id = this.#ids++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), run });
    return () => void this.#timers.delete(id);
  }

  /** Timers set and neither run nor cancelled yet. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves the clock forward by `ms`, running each timer that falls due on the way (ties in the order
   * they were set), and lets the work each one starts settle before the next (see {@link settle}).
   */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#next(until);
      if (next === undefined) break;
      const [id, timer] = next;
      this.#timers.delete(id);
      this.#now = timer.at;
      timer.run();
      await settle();
    }
    this.#now = until;
  }

  /** The earliest timer due at or before `until` (Map order is the order they were set). */
  #next(until: number): [number, Timer] | undefined {
    let found: [number, Timer] | undefined;
    for (const entry of this.#timers) {
      if (entry[1].at <= until && (found === undefined || entry[1].at < found[1].at)) found = entry;
    }
    return found;
  }
}

/**
 * Lets the work in progress run as far as it can without time passing: a few turns of the event
 * loop (promise chains, `setImmediate`, ready I/O such as SQLite's group commit). No wall-clock wait.
 */
export async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise opened by hand: holds a step (a `process`, a stalled store call) until the test opens it. */
interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

/** @example const started = gate(); process: () => started.open(); await started.promise */
export function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open: () => open() };
}
