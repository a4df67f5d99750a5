/**
 * The receiver's sense of time for its own waits: how long a delivery waits for a concurrent
 * delivery of the same event, how often it re-checks a store shared with other processes, and when
 * it renews the lease of the claim it holds. The default is the real one (`performance.now` and
 * `setTimeout`); a test passes a {@link ManualScheduler} (`manual-scheduler.ts`) and moves its time
 * by hand, so no test waits on the wall clock.
 *
 * Lease ages are not measured here: they are the store's business (its `now`, see StoreOptions).
 */
export interface Scheduler {
  /** A monotonic clock in ms (only differences count). */
  now(): number;
  /** Calls `run` once, `ms` from now; the returned function cancels it (a no-op once it ran). */
  after(ms: number, run: () => void): () => void;
}

/** Real time: `performance.now` and `setTimeout`. */
export const realScheduler: Scheduler = {
  now: () => performance.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

/**
 * Calls `run` every `ms` until the returned function is called: each call is set when the one before
 * it runs, so the period holds whatever `run` starts.
 */
export function every(scheduler: Scheduler, ms: number, run: () => void): () => void {
  let stopped = false;
  let cancel = (): void => undefined;
  const next = (): void => {
    cancel = scheduler.after(ms, () => {
      if (stopped) return;
      next();
      run();
    });
  };
  next();
  return () => {
    stopped = true;
    cancel();
  };
}
