import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import { testKeys } from '../../test/support/check-context.js';
import { sealCallback, withRequestUUID } from '../wire/callback-delivery.js';
import type { ObserveFinding, ObservedExchange } from './exchange.js';
import { createJudge, type JudgeOptions } from './judge.js';
import { JudgeQueue } from './judge-queue.js';

/**
 * The judge on its own thread (src/observe/judge-worker.ts) gives the report the same judge gives
 * on the main thread: the same results, findings and notes, byte for byte in report.json's form.
 */

const apiKey = 'ak-thread-41c7';
const publicKeyPem = testKeys.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString();

function delivery(seq: number, trackingId: string, answer: string, at: number): ObservedExchange {
  const payload = withRequestUUID({
    type: new LosslessNumber('4'),
    trackingId,
    tenantUserId: 'u-1',
    business: new LosslessNumber('0'),
    amount: new LosslessNumber('12345678901234567890.10'),
    chain: 'TRON',
    address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  });
  return {
    v: 1,
    seq,
    kind: 'callback',
    direction: 'service→merchant',
    startedAt: at,
    endedAt: at + 5,
    request: {
      method: 'POST',
      path: '/callback',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-api-key': seq % 3 === 0 ? 'another-key' : apiKey,
      },
      bodyBase64: Buffer.from(sealCallback(payload, testKeys)).toString('base64'),
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      bodyBase64: Buffer.from(answer).toString('base64'),
    },
  };
}

describe('the judge on its own thread', () => {
  it('judges to the same findings and report as on the main thread', async () => {
    const options: JudgeOptions = {
      keys: { publicKeyPem, apiKey },
      strict: false,
      limits: { retryWaitMs: 60_000, orderCallbackWaitMs: 60_000 },
    };
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
});
