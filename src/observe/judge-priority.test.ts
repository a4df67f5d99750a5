import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JudgeQueue } from './judge-queue.js';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function niceValues(): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    nice.set(Number(tid), Number(fields[16]));
  }
  return nice;
}

const quiet = { onFindings: () => undefined, onError: () => undefined };

describe.runIf(process.platform === 'linux')("the judge thread's priority (decision 0116)", () => {
  it('is nice 19 by default, so forwarding has the CPU first', async () => {
    const before = niceValues();
    const queue = JudgeQueue.start({ keys: {}, strict: false }, quiet);
    await queue.ready();
    const started = [...niceValues()].filter(([tid]) => !before.has(tid));
    await queue.close({ deadline: Date.now() + 5_000 });
    expect(started.map(([, nice]) => nice)).toContain(19);
  }, 30_000);

  it('keeps the priority of the rest of observe with priority normal', async () => {
    const own = niceValues().get(Number(readdirSync('/proc/self/task')[0]))!;
    const before = niceValues();
    const queue = JudgeQueue.start({ keys: {}, strict: false }, { ...quiet, priority: 'normal' });
    await queue.ready();
    const started = [...niceValues()].filter(([tid]) => !before.has(tid));
    await queue.close({ deadline: Date.now() + 5_000 });
    expect(started.length).toBeGreaterThan(0);
    expect(started.every(([, nice]) => nice === own)).toBe(true);
  }, 30_000);
});
