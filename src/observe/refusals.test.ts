import { describe, expect, it } from 'vitest';
import type { ObservedExchange } from './exchange.js';
import { RefusalWatch } from './refusals.js';

/** An exchange as the watch reads it: its direction and its answer's status (none: the upstream failed). */
function exchange(direction: ObservedExchange['direction'], status: number | undefined): ObservedExchange {
  return {
    direction,
    ...(status === undefined
      ? { upstreamError: { message: 'ECONNREFUSED', gatewayStatus: 502 } }
      : { response: { status } }),
  } as ObservedExchange;
}
const callbacks = 'service→merchant';
const orders = 'merchant→service';
const summary = (watch: RefusalWatch) =>
  watch.warnings().map((w) => `${w.side} ${w.finding.status} [${w.labels.join(', ')}]`);

describe('a side that refuses everything, or answers nothing', () => {
  it('warns under CB-RAW-BODY when a merchant refused every one of 3 valid callbacks, and names its answers as evidence', () => {
    const watch = new RefusalWatch();
    for (let i = 0; i < 3; i++)
      watch.observe(exchange(callbacks, 200), { valid: true, refused: true, keyCompared: true }, { seq: i });
    expect(summary(watch)).toEqual(['merchant warning [CB-RAW-BODY]']);
    expect(watch.warnings()[0]!.evidence).toEqual({ exchanges: [{ seq: 0 }, { seq: 1 }, { seq: 2 }] });
    expect(watch.warnings()[0]!.finding.message).toBe(
      'the merchant refused every one of the 3 valid callbacks it was sent (each opens with the keys given and carries the right key): a receiver that cannot read the raw body (a form parser, a JSON body reader) refuses so (CB-RAW-BODY)',
    );
  });

  it('says CB-KEY-SAME when every refusal was a 401, AUTH-KEY or CRYPTO-SAME for a service', () => {
    const merchant = new RefusalWatch();
    const service = new RefusalWatch();
    const keyed = new RefusalWatch();
    for (let i = 0; i < 3; i++) {
      merchant.observe(exchange(callbacks, 401), { valid: true, refused: true }, {});
      service.observe(exchange(orders, 400), { valid: true, refused: true }, {});
      keyed.observe(exchange(orders, 401), { valid: true, refused: true }, {});
    }
    expect([...summary(merchant), ...summary(service), ...summary(keyed)]).toEqual([
      'merchant warning [CB-KEY-SAME]',
      'service warning [CRYPTO-SAME]',
      'service warning [AUTH-KEY]',
    ]);
  });

  it('says nothing for two refusals, one acknowledged delivery among refusals, or invalid deliveries refused', () => {
    const two = new RefusalWatch();
    const mixed = new RefusalWatch();
    const invalid = new RefusalWatch();
    for (let i = 0; i < 2; i++) two.observe(exchange(callbacks, 200), { valid: true, refused: true }, {});
    for (let i = 0; i < 5; i++) mixed.observe(exchange(callbacks, 200), { valid: true, refused: i !== 3 }, {});
    for (let i = 0; i < 5; i++) invalid.observe(exchange(callbacks, 400), { valid: false, refused: true }, {});
    expect([...summary(two), ...summary(mixed), ...summary(invalid)]).toEqual([]);
  });

  it('names the URL it forwards to when a side answered 404, 5xx or nothing to every exchange', () => {
    const watch = new RefusalWatch({ [callbacks]: 'http://merchant:9400/wallet/callback' });
    watch.observe(exchange(callbacks, 404), { valid: true, refused: true }, {});
    watch.observe(exchange(callbacks, 503), { valid: true, refused: true }, {});
    watch.observe(exchange(callbacks, undefined), { valid: false, refused: true }, {});
    const [warning] = watch.warnings();
    expect(warning).toMatchObject({ side: 'merchant', labels: ['CB-AVAILABLE'], finding: { status: 'warning' } });
    expect(warning!.finding.message).toBe(
      'every one of the 3 callbacks was answered HTTP 404 or HTTP 503 or no answer (ECONNREFUSED): likely a misconfigured upstream, check http://merchant:9400/wallet/callback (--merchant-url): the path each request was received on is appended to it',
    );
    // Answered 500 each: where they went and how they were read are both in question, so both warnings; 404s only name the URL.
    const failing = new RefusalWatch();
    const missing = new RefusalWatch();
    for (let i = 0; i < 3; i++) {
      failing.observe(exchange(callbacks, 500), { valid: true, refused: true }, {});
      missing.observe(exchange(callbacks, 404), { valid: true, refused: true }, {});
    }
    expect(summary(failing)).toEqual(['merchant warning [CB-AVAILABLE]', 'merchant warning [CB-RAW-BODY]']);
    expect(summary(missing)).toEqual(['merchant warning [CB-AVAILABLE]']);
    const answered = new RefusalWatch();
    for (const status of [404, 404, 200])
      answered.observe(exchange(orders, status), { valid: false, refused: false }, {});
    expect(summary(answered)).toEqual([]);
  });
});
