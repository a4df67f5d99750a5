import { describe, expect, it } from 'vitest';
import { fingerprint } from '../secrets/scrub.js';
import { testKeys } from '../../test/support/check-context.js';
import {
  observeJudgeOptions,
  OBSERVE_API_KEY,
  OBSERVE_PUBLIC_KEY_PEM,
  sealedDelivery,
} from '../../test/support/observe-exchanges.js';
import { sealJson } from '../crypto/codec.js';
import type { ObservedExchange } from './exchange.js';
import { createJudge } from './judge.js';
import { replayHeaders, scrubbedHeader } from './replay.js';
import { renderReports } from '../reporters/write-reports.js';

/**
 * The judge's verdicts that depend on observed time and on memory, on hand-made exchanges (the
 * end-to-end tests in test/observe-*.test.ts judge real traffic): missing retries, a delivery after
 * an acknowledgement, the window, the cap on individual results; the capture reader's errors; the
 * replay's key header.
 */

const apiKey = OBSERVE_API_KEY;
const publicKeyPem = OBSERVE_PUBLIC_KEY_PEM;
const ACK = '{"errCode":0,"message":""}';
const REFUSE = '{"errCode":1,"message":"busy"}';

let seq = 0;
const delivery = (
  trackingId: string,
  answer: string,
  at: number,
  options: { requestUUID?: string; status?: number } = {},
): ObservedExchange => sealedDelivery(++seq, trackingId, answer, at, options);

function judged(
  exchanges: ObservedExchange[],
  options: { strict?: boolean; window?: number; perCheckLimit?: number } = {},
) {
  const judge = createJudge({
    ...observeJudgeOptions(options.strict),
    ...(options.window ? { window: options.window } : {}),
    ...(options.perCheckLimit ? { perCheckLimit: options.perCheckLimit } : {}),
  });
  const live = exchanges.flatMap((exchange) => judge.accept(exchange));
  return { live, result: judge.finish() };
}

const byCheck = (results: Array<{ id: string; status: string; message: string }>, check: string) =>
  results.filter((r) => r.id.endsWith(`/${check}`) || r.id.includes(`/${check}/`));

describe('retries, in observed time (CB-ERRCODE, U-RETRY)', () => {
  it('a refusal followed by a retry passes; the retry is judged when it comes', () => {
    const refused = delivery('t-1', REFUSE, 1_000);
    const retry = delivery('t-1', ACK, 2_000);
    const { result } = judged([refused, retry]);
    expect(byCheck(result.report.results, 'callback-retry').map((r) => [r.status, r.message])).toEqual([
      ['passed', `passed on 1 judgement (seq ${retry.seq})`],
    ]);
  });

  it('a refusal with no retry within the wait warns under U-RETRY, live, once a later exchange shows the time passed', () => {
    const first = delivery('t-2', REFUSE, 1_000);
    const later = delivery('t-other', ACK, 70_000);
    const { live, result } = judged([first, later]);
    expect(live.map((r) => [r.id, r.status, r.rules])).toEqual([
      [`observe/seq-${first.seq}/callback-retry`, 'warning', ['U-RETRY']],
    ]);
    expect(live[0]!.message).toMatch(
      /^event t-2 was not acknowledged \(seq \d+\) and not retried within 60 s: CB-ERRCODE wants a retry when processing failed; how soon is open \(U-RETRY\)$/,
    );
    expect(result.report.summary.warnings).toBe(1);
  });

  it('the same, under --strict, fails', () => {
    const { result } = judged([delivery('t-3', REFUSE, 1_000), delivery('t-other', ACK, 70_000)], { strict: true });
    expect(result.report.results.filter((r) => r.status === 'failed').map((r) => r.rules)).toEqual([['U-RETRY']]);
  });

  it('a refusal at the end of the observation, before a retry was due, is skipped, not failed', () => {
    const { result } = judged([delivery('t-4', REFUSE, 1_000)]);
    const retry = byCheck(result.report.results, 'callback-retry');
    expect(retry.map((r) => r.status)).toEqual(['skipped']);
    expect(retry[0]!.message).toMatch(
      /the observation ended 0 s after delivery 1 of event t-4 was refused, before a retry was due \(the judge waits 60 s\)/,
    );
  });

  it('a delivery after an acknowledgement warns: a retry CB-ERRCODE forbids, or a resend CB-ONCE allows', () => {
    const { result } = judged([delivery('t-5', ACK, 1_000), delivery('t-5', ACK, 1_500)]);
    expect(
      result.report.results
        .filter((r) => r.status === 'warning')
        .map((r) => [r.rules, r.message.replace(/seq \d+/, 'seq N')]),
    ).toEqual([
      [
        ['U-RETRY'],
        'delivery 2 of event t-5 follows an acknowledgement (seq N): CB-ERRCODE retries only a failed delivery, CB-ONCE allows an identical resend, and traffic cannot tell which this is (U-RETRY)',
      ],
    ]);
  });
});

describe('the stream window (bounded memory)', () => {
  it('forgets the oldest events past the window, counts them, and skips a retry it can no longer judge', () => {
    const { result } = judged(
      [delivery('w-1', REFUSE, 1_000), delivery('w-2', ACK, 1_100), delivery('w-3', ACK, 1_200)],
      { window: 2 },
    );
    expect(result.forgottenEvents).toBe(1);
    expect(result.report.notes).toContain(
      '1 event was forgotten by the stream window (2 events, 3600 s): a resend or retry of one of them after that is judged as a new event',
    );
    expect(byCheck(result.report.results, 'callback-retry').map((r) => r.message)).toEqual([
      expect.stringMatching(/^1 judgement \(seq \d+\): not judged: event w-1 was forgotten by the stream window/),
    ]);
  });

  it('judges a reused requestUUID across events (CB-UUID) as long as it remembers it', () => {
    const uuid = '6f9b0d4e-3a51-4c7e-9b2f-0d8e1c6a4b37';
    const { result } = judged([
      delivery('u-1', ACK, 1_000, { requestUUID: uuid }),
      delivery('u-2', ACK, 1_100, { requestUUID: uuid }),
    ]);
    expect(result.report.results.filter((r) => r.status === 'failed').map((r) => [r.rules, r.message])).toEqual([
      [
        ['CB-UUID'],
        expect.stringMatching(new RegExp(`^requestUUID ${uuid} was already sent on the delivery of seq \\d+$`)),
      ],
    ]);
  });
});

describe('results: one per (check, exchange) for failures, aggregated passes, a cap', () => {
  it('keeps the first N failures of a check individually and counts the rest into one result', () => {
    const exchanges = [1, 2, 3, 4].map((n) => delivery(`c-${n}`, '{"code":0}', 1_000 + n, { status: 200 }));
    const { result } = judged(exchanges, { perCheckLimit: 2 });
    const answers = result.report.results.filter((r) => r.id.includes('callback-answer') && r.status === 'failed');
    expect(answers.map((r) => r.case)).toEqual([`seq-${exchanges[0]!.seq}`, `seq-${exchanges[1]!.seq}`, 'all']);
    expect(answers[2]!.message).toMatch(
      /^2 judgements \(seq \d+…\d+\): more failures of this check past the first 2 \(each listed above\); the last: HTTP 200 without errCode/,
    );
    expect(result.report.summary.failed).toBe(3);
  });

  it("writes the four reports of verify from the judge's report, each naming a failure under its rule", () => {
    const { result } = judged([delivery('rep-1', '{"code":0}', 1_000)]);
    const files = renderReports(result.report, { startedAt: new Date(0), hostname: 'unit' });
    expect(files.map((file) => file.path)).toEqual(['report.json', 'junit.xml', 'summary.md', 'report.html']);
    for (const file of files) expect(file.contents, file.path).toContain('CB-ERRCODE');
  });

  it('never shows the API key: evidence shows its fingerprint', () => {
    const { result } = judged([delivery('s-1', '{"code":0}', 1_000)]);
    const text = JSON.stringify(result.report);
    expect(text).not.toContain(apiKey);
    expect(text).toContain(fingerprint(apiKey, 'ak'));
  });
});

describe('ORDER-CALLBACK-ID: the merchant keeps callBackId unique (seen only in traffic)', () => {
  const privateKeyPem = testKeys.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString();
  const orderExchange = (callBackId: string, amount: string, at: number): ObservedExchange => {
    const plain = `{"userId":10086,"tenantUserId":"20931","tenantType":1,"callBackId":"${callBackId}","symbol":"USDT","chainName":"TRON","toAddr":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE","amount":${amount}}`;
    const body = new URLSearchParams({ data: sealJson(plain, 'request', testKeys.publicKey) }).toString();
    return {
      v: 1,
      seq: ++seq,
      kind: 'withdraw',
      direction: 'merchant→service',
      startedAt: at,
      endedAt: at + 3,
      request: {
        method: 'POST',
        path: '/api/v1/api/order/withdrawWithoutVerify',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
        bodyBase64: Buffer.from(body).toString('base64'),
      },
      response: {
        status: 200,
        headers: { 'content-type': 'application/json' },
        bodyBase64: Buffer.from('{"code":2001,"message":"insufficient balance","data":null}').toString('base64'),
      },
    };
  };
  const judgeOrders = (exchanges: ObservedExchange[]) => {
    const judge = createJudge({ keys: { publicKeyPem, privateKeyPem, apiKey }, strict: false });
    for (const exchange of exchanges) judge.accept(exchange);
    return judge.finish().report;
  };

  it('fails another order under a callBackId used before, against the merchant', () => {
    const first = orderExchange('cb-dup-1', '10.5', 1_000);
    const second = orderExchange('cb-dup-1', '99.5', 2_000);
    const report = judgeOrders([first, second]);
    expect(report.results.filter((r) => r.status === 'failed').map((r) => [r.id, r.rules, r.message])).toEqual([
      [
        `observe/seq-${second.seq}/order-callback-id`,
        ['ORDER-CALLBACK-ID'],
        `callBackId cb-dup-1 was already used by another order (seq ${first.seq}): the merchant keeps callBackId unique`,
      ],
    ]);
  });

  it('numbers two failures of one check on one exchange, as the engine numbers repeats', () => {
    const exchange = orderExchange('cb-bare', '10.5', 1_000);
    const bare = { ...exchange, request: { ...exchange.request, headers: {} } };
    const report = judgeOrders([bare]);
    expect(report.results.filter((r) => r.status === 'failed').map((r) => [r.id, r.rules])).toEqual([
      [`observe/seq-${bare.seq}/order-request`, ['ORDER-CT']],
      [`observe/seq-${bare.seq}/order-request#2`, ['ORDER-CT', 'AUTH-KEY']],
    ]);
    // The service refused it (a failure envelope): the `refused` check passes.
    expect(report.results.find((r) => r.id === 'observe/all/refused')?.status).toBe('passed');
  });

  it('fails a service that accepts a request the judge proved invalid (refused), against the service', () => {
    const exchange = orderExchange('cb-accepted', '10.5', 1_000);
    const accepted = {
      ...exchange,
      request: { ...exchange.request, headers: { 'x-api-key': apiKey } },
      response: {
        ...exchange.response!,
        bodyBase64: Buffer.from('{"code":0,"message":"","data":"AQID"}').toString('base64'),
      },
    };
    const refused = judgeOrders([accepted]).results.filter((r) => r.id.endsWith('/refused'));
    expect(refused.map((r) => [r.status, r.rules, r.title])).toEqual([
      ['failed', ['ORDER-CT'], "the service's order submission answer: bad input is refused"],
    ]);
    expect(refused[0]!.message).toMatch(/^accepted \(code 0\)/);
  });

  it('passes the same order submitted again, and distinct callBackIds', () => {
    const report = judgeOrders([
      orderExchange('cb-a', '10.5', 1_000),
      orderExchange('cb-a', '10.5', 2_000),
      orderExchange('cb-b', '10.5', 3_000),
    ]);
    expect(report.summary.failed, JSON.stringify(report.results.filter((r) => r.status === 'failed'))).toBe(0);
    expect(report.results.find((r) => r.id === 'observe/all/order-callback-id')?.message).toMatch(
      /^passed on 3 judgements/,
    );
  });
});

describe('a body the proxy truncated (ObservedMessage.truncated)', () => {
  it('is not judged (skipped, never failed): its first bytes are not the body', () => {
    const whole = delivery('big-1', ACK, 1_000);
    const cut = {
      ...whole,
      request: { ...whole.request, bodyBase64: whole.request.bodyBase64.slice(0, 40), truncated: true as const },
    };
    const { result } = judged([cut]);
    expect(result.report.summary.failed).toBe(0);
    expect(byCheck(result.report.results, 'callback-raw-body').map((r) => [r.status, r.message])).toEqual([
      [
        'skipped',
        `1 judgement (seq ${cut.seq}): not judged: the body was longer than the proxy records of one body (it was forwarded whole)`,
      ],
    ]);
  });
});

describe('replay headers', () => {
  it('sets the run key where the capture holds its fingerprint, drops hop-by-hop headers, keeps the rest as captured', () => {
    expect(
      replayHeaders(
        {
          'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
          'x-api-key': fingerprint(apiKey, 'ak'),
          host: 'observe:9',
          'content-length': '172',
          'x-trace': 'a1',
        },
        apiKey,
      ),
    ).toEqual({
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
      'x-trace': 'a1',
      'X-API-KEY': apiKey,
    });
  });
  it('keeps a delivery without a key without one, and cannot reproduce another key', () => {
    expect(replayHeaders({ 'content-type': 'text/plain' }, apiKey)).toEqual({ 'content-type': 'text/plain' });
    expect(replayHeaders({ 'x-api-key': fingerprint('another-key', 'ak') }, apiKey)).toBeUndefined();
  });
  it('finds a header whose secret the capture holds as a fingerprint (it cannot be resent), and no other', () => {
    expect(
      scrubbedHeader({ authorization: `Bearer ${fingerprint('tok_1234567890', 'au')}`, 'content-type': 'text/plain' }),
    ).toBe('authorization');
    expect(scrubbedHeader({ cookie: fingerprint('s=1234567890', 'au') })).toBe('cookie');
    expect(
      scrubbedHeader({ 'X-API-KEY': apiKey, 'x-trace': 'a1', authorization: 'Bearer plain-token' }),
    ).toBeUndefined();
  });
});
