/**
 * At most `slots` pieces of work at once, first come first served: for `describe.concurrent` files
 * whose cases each start a target and a CLI (vitest's own limit, maxConcurrency, is per worker and
 * 5 by default). A queued case waits inside its test, so its timeout must cover the wait too.
 */
export function limit(slots: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = slots;
  const waiting: (() => void)[] = [];
  return async (work) => {
    // A freed slot is handed straight to the first in line, so a newcomer never overtakes it.
    if (free > 0) free--;
    else await new Promise<void>((go) => waiting.push(go));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}
