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
});
