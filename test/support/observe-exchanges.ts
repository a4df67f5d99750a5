import { LosslessNumber, type ExactJson } from '../../src/core/exact-json.js';
import type { ObservedExchange } from '../../src/observe/exchange.js';
import type { JudgeOptions } from '../../src/observe/judge.js';
import { sealCallback, withRequestUUID } from '../../src/wire/callback-delivery.js';
import { testKeys } from './check-context.js';

/**
 * Hand-made observed exchanges for the observe unit tests (judge, stream, the judge's thread): what
 * the proxy records of a callback delivery, and the keys and limits the judge judges them with.
 */

/** The merchant's API key in these exchanges (a report must show only its fingerprint). */
export const OBSERVE_API_KEY = 'ak-unit-5f2e8c';

/** The service's public key, to open the sealed callbacks. */
export const OBSERVE_PUBLIC_KEY_PEM = testKeys.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString();

/** The judge's options of these tests: a minute's wait for a retry and for an order's callback. */
export function observeJudgeOptions(strict = false): JudgeOptions {
  return {
    keys: { publicKeyPem: OBSERVE_PUBLIC_KEY_PEM, apiKey: OBSERVE_API_KEY },
    strict,
    limits: { retryWaitMs: 60_000, orderCallbackWaitMs: 60_000 },
  };
}

/** A callback as the proxy records it: POST /callback from the service, with the merchant's answer. */
export function callbackExchange(
  seq: number,
  at: number,
  parts: { headers?: Record<string, string>; body?: string; status?: number; answer?: string; endedAt?: number } = {},
): ObservedExchange {
  return {
    v: 1,
    seq,
    kind: 'callback',
    direction: 'service→merchant',
    startedAt: at,
    endedAt: parts.endedAt ?? at + 5,
    request: {
      method: 'POST',
      path: '/callback',
      headers: parts.headers ?? {},
      bodyBase64: Buffer.from(parts.body ?? '').toString('base64'),
    },
    response: {
      status: parts.status ?? 200,
      headers: parts.answer === undefined ? {} : { 'content-type': 'application/json' },
      bodyBase64: Buffer.from(parts.answer ?? '').toString('base64'),
    },
  };
}

/**
 * A delivery of an address event (type 4) for `trackingId`, sealed with the test keys under the
 * merchant's API key (or `apiKey`), answered with `answer`; `payload` adds fields to the event.
 */
export function sealedDelivery(
  seq: number,
  trackingId: string,
  answer: string,
  at: number,
  options: { requestUUID?: string; status?: number; apiKey?: string; payload?: Record<string, ExactJson> } = {},
): ObservedExchange {
  const payload = withRequestUUID(
    {
      type: new LosslessNumber('4'),
      trackingId,
      tenantUserId: 'u-1',
      business: new LosslessNumber('0'),
      ...options.payload,
      chain: 'TRON',
      address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    },
    options.requestUUID,
  );
  return callbackExchange(seq, at, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': options.apiKey ?? OBSERVE_API_KEY },
    body: sealCallback(payload, testKeys),
    status: options.status ?? 200,
    answer,
  });
}
