import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import { observeJudgeOptions, sealedDelivery } from '../../test/support/observe-exchanges.js';
import type { ObserveFinding, ObservedExchange } from './exchange.js';
import { createJudge } from './judge.js';
import { JudgeQueue } from './judge-queue.js';

/**
 * The judge on its own thread (src/observe/judge-worker.ts) gives the report the same judge gives
 * on the main thread: the same results, findings and notes, byte for byte in report.json's form.
 */

/** Address events under four trackingIds (a third under another API key), with exact amounts. */
function delivery(seq: number, trackingId: string, answer: string, at: number): ObservedExchange {
  return sealedDelivery(seq, trackingId, answer, at, {
    ...(seq % 3 === 0 ? { apiKey: 'another-key' } : {}),
    payload: { amount: new LosslessNumber('12345678901234567890.10') },
  });
}

describe('the judge on its own thread', () => {
  it('judges to the same findings and report as on the main thread', async () => {
    const options = observeJudgeOptions();
    const answers = ['{"errCode":0,"message":""}', '{"errCode":1,"message":"busy"}', '{"code":0}'];
    const exchanges = Array.from({ length: 12 }, (_, i) =>
      delivery(i + 1, `t-${i % 4}`, answers[i % 3]!, 1_000 + i * 40_000),
    );

    const here = createJudge(options);
    const hereFindings = exchanges.flatMap((exchange) => here.accept(exchange));
    const hereResult = here.finish();

    const threadFindings: ObserveFinding[] = [];
    const errors: unknown[] = [];
    const queue = JudgeQueue.start(options, {
      onFindings: (findings) => threadFindings.push(...findings),
      onError: (error) => errors.push(error),
    });
    await queue.ready();
    for (const exchange of exchanges) queue.submit(exchange);
    const threadResult = await queue.close({ deadline: Date.now() + 60_000 });

    expect(errors).toEqual([]);
    expect(hereFindings.length).toBeGreaterThan(0);
    expect(stringifyExact(threadFindings)).toBe(stringifyExact(hereFindings));
    expect(stringifyExact(threadResult)).toBe(stringifyExact(hereResult));
    expect(queue.notJudged).toBe(0);
  }, 60_000);

  it('judges every exchange within a small share of a core too (--judge-cpu 10), resting between batches', async () => {
    const options = observeJudgeOptions();
    const exchanges = Array.from({ length: 100 }, (_, i) =>
      delivery(i + 1, `t-${i % 4}`, '{"errCode":0,"message":""}', 1_000 + i * 40_000),
    );
    const queue = JudgeQueue.start(options, { onFindings: () => undefined, onError: () => undefined, cpuShare: 0.1 });
    await queue.ready();
    for (const exchange of exchanges) queue.submit(exchange);
    const result = await queue.close({ deadline: Date.now() + 60_000 });

    expect(queue.notJudged).toBe(0);
    expect(result.exchanges).toBe(100);
  }, 90_000);

  it('steps back to a tenth of its share while the forwarding thread is busy', async () => {
    // Two judges side by side, alike but for what they read of forwarding's load: a stat file in
    // /proc's form, one advancing at a whole core (busy), one still. A loaded machine slows both alike.
    const dir = mkdtempSync(join(tmpdir(), 'wc-judge-busy-'));
    const stat = (name: string, ticks: number) =>
      writeFileSync(
        join(dir, name),
        `1 (node) R ${Array.from({ length: 40 }, (_, i) => (i === 10 ? ticks : 0)).join(' ')}\n`,
      );
    stat('busy', 0);
    stat('idle', 0);
    const started = performance.now();
    const ticking = setInterval(() => stat('busy', Math.floor((performance.now() - started) / 10)), 20);
    const base = delivery(1, 't-0', '{"errCode":0,"message":""}', 1_000);
    const queues = ['busy', 'idle'].map((name) =>
      JudgeQueue.start(observeJudgeOptions(), {
        onFindings: () => undefined,
        onError: () => undefined,
        cpuShare: 0.25,
        forwardingStat: join(dir, name),
      }),
    );
    try {
      await Promise.all(queues.map((queue) => queue.ready()));
      for (const queue of queues)
        for (let seq = 1; seq <= 10_000; seq++)
          queue.submit({ ...base, seq, startedAt: seq * 40_000, endedAt: seq * 40_000 + 1 });
      const [busy, idle] = queues as [JudgeQueue, JudgeQueue];
      const judged = (queue: JudgeQueue) => 10_000 - queue.pending;
      // How many each has judged once the judge beside a still forwarding thread has judged `count`
      // (at most 30 s from the start).
      const when = async (count: number) => {
        while (judged(idle) < count && performance.now() - started < 30_000)
          await new Promise((resolve) => setTimeout(resolve, 50));
        return { busy: judged(busy), idle: judged(idle) };
      };
      // From the first thousand on: by then the busy judge has measured a window and stepped back.
      const first = await when(1_000);
      const then = await when(8_000);
      expect(then.idle).toBeGreaterThanOrEqual(8_000);
      expect(then.busy - first.busy).toBeLessThan((then.idle - first.idle) / 3);
    } finally {
      clearInterval(ticking);
      await Promise.all(queues.map((queue) => queue.close({ deadline: Date.now() })));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
