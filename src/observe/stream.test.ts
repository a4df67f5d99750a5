import { describe, expect, it } from 'vitest';
import type { ExactJson } from '../core/exact-json.js';
import type { DeliveryFacts } from './judge-callbacks.js';
import { Stream } from './stream.js';
import { callbackExchange } from '../../test/support/observe-exchanges.js';

/**
 * The stream's memory is bounded by construction: however many events, requestUUIDs, callBackIds
 * and withdrawals pass, each memory stays within its limit (docs/observe-judging.md, "Bounded
 * memory"). Driven with facts as the judge hands them over, no crypto, so a long stream is quick.
 */

const exchange = (seq: number, at: number) => callbackExchange(seq, at, { endedAt: at + 2 });

function facts(payload: Record<string, ExactJson>, acknowledged: boolean, plus: boolean): DeliveryFacts {
  return {
    payload,
    ack: acknowledged
      ? { verdict: 'acknowledged', reason: 'errCode 0' }
      : { verdict: 'not-acknowledged', reason: 'errCode 1', errCode: '1' },
    valid: true,
    plus,
    keyRefused: false,
    evidence: {},
  };
}

describe('the stream stays within its limits over a long run', () => {
  it('200,000 events: every memory at most its bound, the overflow forgotten and counted', () => {
    const maxEvents = 100;
    const stream = new Stream({
      maxEvents,
      maxEventAgeMs: 3_600_000,
      retryWaitMs: 300_000,
      orderCallbackWaitMs: 600_000,
    });
    const largest: Record<string, number> = {};
    for (let i = 0; i < 200_000; i++) {
      const at = 1_000 + i * 5;
      stream.advance(at);
      if (i % 2 === 0) {
        // A deposit (keyed on its own fields) or an address event (keyed on trackingId); a third refused, awaiting its retry.
        const deposit = i % 4 === 0;
        const payload: Record<string, ExactJson> = {
          type: deposit ? '1' : '4',
          trackingId: `t-${i}`,
          requestUUID: `uuid-${i}`,
          ...(deposit
            ? { txid: `tx-${i}`, chain: 'TRON', symbol: 'USDT', toAddress: 'T1' }
            : { chain: 'TRON', address: `T-${i}` }),
        };
        stream.delivery(exchange(i + 1, at), facts(payload, i % 3 !== 0, i % 10 === 0));
      } else {
        const callBackId = `cb-${i}`;
        stream.order(
          exchange(i + 1, at),
          {
            acceptedWithdrawal: callBackId,
            requestCallBackId: callBackId,
            requestPlain: `{"callBackId":"${callBackId}"}`,
          },
          {},
        );
      }
      for (const [name, size] of Object.entries(stream.sizes)) largest[name] = Math.max(largest[name] ?? 0, size);
    }
    expect(largest).toEqual({
      events: maxEvents,
      requestUuids: maxEvents * 4,
      trackingIds: maxEvents,
      retryDeadlines: expect.any(Number) as number,
      pendingOrders: maxEvents,
      callBackIds: maxEvents,
      refusedPlus: expect.any(Number) as number,
    });
    expect(largest.retryDeadlines).toBeLessThanOrEqual(maxEvents * 2 + 1);
    expect(largest.refusedPlus).toBeLessThanOrEqual(200);
    expect(stream.forgotten).toBeGreaterThan(190_000);
  });
});
