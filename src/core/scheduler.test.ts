import { describe, expect, it } from 'vitest';
import { ManualScheduler } from './manual-scheduler.js';
import { every } from './scheduler.js';

describe('manual scheduler', () => {
  it('runs the timers that fall due, earliest first and ties in the order set, with the clock at each due time', async () => {
    const scheduler = new ManualScheduler(100);
    const runs: string[] = [];
    const at = (name: string) => () => runs.push(`${name}@${scheduler.now()}`);
    scheduler.after(30, at('c'));
    scheduler.after(10, at('a'));
    scheduler.after(10, at('b'));
    scheduler.after(31, at('late'));
    await scheduler.advance(30);
    expect(runs).toEqual(['a@110', 'b@110', 'c@130']);
    expect(scheduler.now()).toBe(130);
    expect(scheduler.pending).toBe(1);
  });

  it('runs a timer set by a timer when it falls due in the same advance, and never a cancelled one', async () => {
    const scheduler = new ManualScheduler();
    const runs: number[] = [];
    scheduler.after(5, () => scheduler.after(5, () => runs.push(scheduler.now())));
    const cancel = scheduler.after(7, () => runs.push(-1));
    cancel();
    await scheduler.advance(10);
    expect(runs).toEqual([10]);
    expect(scheduler.pending).toBe(0);
  });

  it('lets the promises a timer starts settle before the next one runs', async () => {
    const scheduler = new ManualScheduler();
    const seen: string[] = [];
    scheduler.after(
      1,
      () =>
        void Promise.resolve()
          .then(() => new Promise((resolve) => setImmediate(resolve)))
          .then(() => seen.push('first settled')),
    );
    scheduler.after(2, () => seen.push('second'));
    await scheduler.advance(2);
    expect(seen).toEqual(['first settled', 'second']);
  });
});

describe('every', () => {
  it('repeats at its period until stopped', async () => {
    const scheduler = new ManualScheduler();
    const runs: number[] = [];
    const stop = every(scheduler, 10, () => runs.push(scheduler.now()));
    await scheduler.advance(35);
    stop();
    await scheduler.advance(100);
    expect(runs).toEqual([10, 20, 30]);
    expect(scheduler.pending).toBe(0);
  });
});
