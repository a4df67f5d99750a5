/**
 * A long synthetic stream through observe's judge, tally, stream and metrics, with no socket: the
 * memory bound of a run that lasts weeks (test/observe-memory.test.ts). Run as a script
 * (`node --expose-gc --import tsx test/support/observe-soak.ts N WINDOW PER-CHECK CHECKPOINT...`) it prints one JSON
 * line per checkpoint: the heap after a full collection and the sizes of the bounded structures.
 *
 * The mix, per 500 exchanges: a callback of a new event (a new trackingId and requestUUID; some
 * refused and so awaiting a retry, some never answered), an accepted withdrawal with a new
 * callBackId (its order callback awaited), order requests judged on the wire, card close, upstream
 * failures, and paths of no endpoint for the rest. Every memory of the stream fills and turns over;
 * the RSA work is kept to the two sealed exchanges so a million run in seconds.
 */
import { LosslessNumber } from '../../src/core/exact-json.js';
import type { ObservedExchange, ObserveFinding } from '../../src/observe/exchange.js';
import { createJudge } from '../../src/observe/judge.js';
import { createObserveMetrics } from '../../src/observe/metrics.js';
import { sealJson } from '../../src/crypto/codec.js';
import { sealCallback, withRequestUUID } from '../../src/wire/callback-delivery.js';
import { testKeys } from './check-context.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const ORDER = '/api/v1/api/order/withdrawWithoutVerify';
const CARD = '/api/v1/api/card/close';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': 'ak-soak-1' };
const JSON_TYPE = { 'content-type': 'application/json' };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const ACK = b64('{"errCode":0,"message":""}');
const REFUSE = b64('{"errCode":1,"message":"busy"}');
const NO_ERRCODE = b64('{"code":0}');
/** An order request body whose `data` is not Base64: judged on the wire, never handed to RSA. */
const FORM_BODY = b64(`data=${'not-base64!'.repeat(12)}`);

/** A callback of a new event (its own trackingId and requestUUID), sealed as the service seals one. */
function callback(i: number): string {
  const payload = withRequestUUID({
    type: new LosslessNumber('4'),
    trackingId: `soak-${i}`,
    tenantUserId: `u-${i % 1000}`,
    business: new LosslessNumber('0'),
    chain: 'TRON',
    address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  });
  return b64(sealCallback(payload, testKeys));
}

/** An accepted withdrawal: the plain request (sealed for the private key) and the service's result (sealed by it). */
function withdrawal(i: number): Pick<ObservedExchange, 'request' | 'response'> {
  const callBackId = `cb-soak-${i}`;
  const plain = {
    callBackId,
    tenantUserId: String(i % 1000),
    tenantType: 1,
    symbol: 'USDT',
    chainName: 'TRON',
    amount: '1.5',
    address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  };
  const data = sealJson(plain, 'request', testKeys.publicKey);
  const result = sealJson({ id: callBackId, tenantUserId: i % 1000 }, 'response', testKeys);
  return {
    request: { method: 'POST', path: ORDER, headers: FORM, bodyBase64: b64(new URLSearchParams({ data }).toString()) },
    response: {
      status: 200,
      headers: JSON_TYPE,
      bodyBase64: b64(JSON.stringify({ code: 0, message: '', data: result })),
    },
  };
}

/** The i-th exchange of the stream (seq i + 1, 10 ms of observed time apart). */
function exchangeAt(i: number): ObservedExchange {
  const at = 1_700_000_000_000 + i * 10;
  const base = { v: 1 as const, seq: i + 1, startedAt: at, endedAt: at + 3 };
  const slot = i % 500;
  if (slot === 0) {
    const request = { method: 'POST', path: '/callback', headers: FORM, bodyBase64: callback(i) };
    const reply = [ACK, REFUSE, NO_ERRCODE][(i / 500) % 3]!;
    return {
      ...base,
      kind: 'callback',
      direction: 'service→merchant',
      request,
      ...(i % 3500 === 0
        ? { upstreamError: { message: 'connect ECONNREFUSED', gatewayStatus: 502 as const } }
        : { response: { status: 200, headers: JSON_TYPE, bodyBase64: reply } }),
    };
  }
  if (slot === 250) return { ...base, kind: 'withdraw', direction: 'merchant→service', ...withdrawal(i) };
  if (slot % 100 === 1)
    return { ...base, kind: 'energy', direction: 'merchant→service', request: ENERGY_REQUEST, response: ANSWER_401 };
  if (slot % 100 === 2)
    return { ...base, kind: 'card-close', direction: 'merchant→service', request: CARD_REQUEST, response: CARD_CLOSED };
  if (slot % 100 === 3)
    return {
      ...base,
      kind: 'energy',
      direction: 'merchant→service',
      request: ENERGY_REQUEST,
      upstreamError: { message: 'the upstream gave no complete answer', gatewayStatus: 504 },
    };
  return {
    ...base,
    kind: 'other',
    direction: 'merchant→service',
    request: OTHER_REQUESTS[i % 7]!,
    response: ANSWER_404,
  };
}

function answer(
  status: number,
  body = '{"code":401,"message":"unauthorized"}',
): NonNullable<ObservedExchange['response']> {
  return { status, headers: JSON_TYPE, bodyBase64: b64(body) };
}

/** The answers and requests most exchanges share, made once (the stream is long). */
const ANSWER_401 = answer(401);
const ANSWER_404 = answer(404);
const CARD_CLOSED = answer(200, '{"code":0}');
const ENERGY_REQUEST = { method: 'POST', headers: FORM, bodyBase64: FORM_BODY, path: ENERGY };
const CARD_REQUEST = { ...ENERGY_REQUEST, path: CARD };
const OTHER_REQUESTS = Array.from({ length: 7 }, (_, i) => ({ ...ENERGY_REQUEST, path: `/unknown/${i}` }));

/** What a checkpoint reports: the judge's counts and the sizes of everything that must stay bounded. */
export interface SoakCheckpoint {
  exchanges: number;
  heapUsed?: number;
  results: number;
  series: number;
  forgotten: number;
}

/**
 * Drives `total` exchanges through a judge (a window of `window` events, `perCheckLimit` results
 * of one check kept) and the metrics; calls `checkpoint` after each count in `at`.
 */
export async function soak(
  total: number,
  at: readonly number[],
  checkpoint: (seen: SoakCheckpoint) => void,
  { window, perCheckLimit }: { window: number; perCheckLimit: number },
): Promise<void> {
  const judge = createJudge({
    keys: {
      publicKeyPem: testKeys.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: testKeys.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
      apiKey: 'ak-soak-1',
    },
    strict: false,
    window,
    perCheckLimit,
    limits: { retryWaitMs: 20_000, orderCallbackWaitMs: 20_000, maxEventAgeMs: 60_000 },
  });
  const metrics = createObserveMetrics();
  const marks = new Set(at);
  for (let i = 0; i < total; i++) {
    const exchange = exchangeAt(i);
    metrics.exchange(exchange);
    const settled: ObserveFinding[] = judge.accept(exchange);
    metrics.findings(settled);
    if (i % 50_000 === 0) metrics.notJudged('shed');
    if (!marks.has(i + 1)) continue;
    globalThis.gc?.();
    const snapshot = judge.snapshot!();
    const text = await metrics.text();
    checkpoint({
      exchanges: snapshot.exchanges,
      ...(globalThis.gc ? { heapUsed: process.memoryUsage().heapUsed } : {}),
      results: snapshot.report.results.length,
      series: text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length,
      forgotten: snapshot.forgottenEvents,
    });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  const [total, window, perCheckLimit, ...at] = process.argv.slice(2).map(Number);
  await soak(total!, at, (seen) => process.stdout.write(`${JSON.stringify(seen)}\n`), {
    window: window!,
    perCheckLimit: perCheckLimit!,
  });
}
