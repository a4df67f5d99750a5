import { describe, expect, it } from 'vitest';
import { answer, checkContext, exchange, merchantTarget } from '../../../test/support/check-context.js';
import type { Exchange } from '../observation.js';
import type { Finding } from '../types.js';
import { answersCheck } from './answers.js';

const ack = '{"errCode":0}';
const run = (params: Record<string, unknown>, exchanges: Exchange[]): Finding[] =>
  answersCheck.run(checkContext({ target: merchantTarget, params, outcome: { exchanges } }));
const passed = (message: string): Finding[] => [{ status: 'passed', message }];
const failed = (message: string): Finding[] => [{ status: 'failed', message }];
const openPoint = (message: string): Finding[] => [{ status: 'failed', message, rules: ['U-CB-RESPONSE'] }];

describe('answers: the merchant acknowledges what it processed and only that (CB-ERRCODE, read by src/wire/acknowledgement.ts)', () => {
  it('enforces CB-ERRCODE under the id answers', () => {
    expect([answersCheck.id, answersCheck.title, answersCheck.rules, answersCheck.needs]).toEqual([
      'answers',
      'merchant answers',
      ['CB-ERRCODE'],
      'exchange',
    ]);
  });

  it.each([
    ['no delivery at all', {}, [], failed('the step delivered nothing')],
    [
      'a delivery without an answer',
      {},
      [exchange(undefined, { error: 'connect ECONNREFUSED 127.0.0.1:9' })],
      failed('no answer: connect ECONNREFUSED 127.0.0.1:9'),
    ],
    ['a delivery without an answer or an error', {}, [exchange(undefined)], failed('no answer: unknown')],
    [
      'the second of two deliveries unanswered',
      {},
      [exchange(answer(200, ack)), exchange(undefined, { error: 'socket hang up' })],
      failed('delivery 2/2: no answer: socket hang up'),
    ],
    [
      'HTTP 500 where 200 is the default',
      {},
      [exchange(answer(500, 'oops'))],
      failed('expected HTTP 200, got 500: oops'),
    ],
    [
      'HTTP 200 where the suite expects 401',
      { status: 401 },
      [exchange(answer(200, ack))],
      failed('expected HTTP 401, got 200: {"errCode":0}'),
    ],
    [
      'HTTP 200 with any body when no errCode is asked',
      {},
      [exchange(answer(200, 'ok'))],
      passed('1 answer(s): HTTP 200; first ok'),
    ],
    [
      'errCode 0 when it is asked',
      { errCode: 'zero' },
      [exchange(answer(200, ack))],
      passed('1 answer(s): HTTP 200, errCode zero; first {"errCode":0}'),
    ],
    [
      'errCode 0 among other fields',
      { errCode: 'zero' },
      [exchange(answer(200, '{"msg":"ok","errCode":0}'))],
      passed('1 answer(s): HTTP 200, errCode zero; first {"msg":"ok","errCode":0}'),
    ],
    [
      'errCode 0.0 (the number 0 written another way) where errCode 0 is asked: ambiguous, U-CB-RESPONSE',
      { errCode: 'zero' },
      [exchange(answer(200, '{"errCode":0.0}'))],
      openPoint(
        'errCode 0 in a form the interface leaves open (U-CB-RESPONSE): errCode written 0.0 (a strictly typed service may not read it as 0): {"errCode":0.0}',
      ),
    ],
    [
      'errCode 0 on HTTP 201 where errCode 0 is asked: ambiguous, U-CB-RESPONSE',
      { errCode: 'zero' },
      [exchange(answer(201, ack))],
      openPoint(
        'errCode 0 in a form the interface leaves open (U-CB-RESPONSE): errCode 0 with HTTP 201 (a service that reads the status first counts it as a failure): {"errCode":0}',
      ),
    ],
    [
      'the string "0" where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, '{"errCode":"0"}'))],
      failed('expected errCode 0, got {"errCode":"0"} (errCode "0" is not a number)'),
    ],
    [
      '{"code":0} (no errCode) where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, '{"code":0}'))],
      failed('expected errCode 0, got {"code":0} (HTTP 200 without errCode)'),
    ],
    [
      'an empty body where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, ''))],
      failed('expected errCode 0, got an empty body (HTTP 200 with an empty body (no errCode))'),
    ],
    [
      'errCode 1 where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, '{"errCode":1}'))],
      failed('expected errCode 0, got {"errCode":1} (errCode 1)'),
    ],
    [
      'a body that is not JSON where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, 'OK'))],
      failed('expected errCode 0, got OK (HTTP 200 with a body that is not a JSON object (no errCode))'),
    ],
    [
      'a JSON body without errCode where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(200, '{}'))],
      failed('expected errCode 0, got {} (HTTP 200 without errCode)'),
    ],
    [
      'errCode 0 on HTTP 201 where HTTP 200 and errCode 0 are asked: ambiguous, not a wrong status',
      { status: 200, errCode: 'zero' },
      [exchange(answer(201, ack))],
      openPoint(
        'errCode 0 in a form the interface leaves open (U-CB-RESPONSE): errCode 0 with HTTP 201 (a service that reads the status first counts it as a failure): {"errCode":0}',
      ),
    ],
    [
      'HTTP 500 with errCode 1 where HTTP 200 and errCode 0 are asked',
      { status: 200, errCode: 'zero' },
      [exchange(answer(500, '{"errCode":1}'))],
      failed('expected HTTP 200, got 500: {"errCode":1} (errCode 1)'),
    ],
    [
      'HTTP 500 with errCode 1 where errCode 0 is asked',
      { errCode: 'zero' },
      [exchange(answer(500, '{"errCode":1}'))],
      failed('expected HTTP 200, got 500: {"errCode":1} (errCode 1)'),
    ],
    [
      'errCode 0 on HTTP 202 where the suite expects 202 and errCode 0: ambiguous',
      { status: 202, errCode: 'zero' },
      [exchange(answer(202, ack))],
      openPoint(
        'errCode 0 in a form the interface leaves open (U-CB-RESPONSE): errCode 0 with HTTP 202 (a service that reads the status first counts it as a failure): {"errCode":0}',
      ),
    ],
    [
      'HTTP 500 where a refusal is asked (any status refuses)',
      { errCode: 'nonzero' },
      [exchange(answer(500, 'down'))],
      passed('1 answer(s): HTTP any, errCode nonzero; first down'),
    ],
    [
      'errCode 1 where a refusal is asked',
      { errCode: 'nonzero' },
      [exchange(answer(200, '{"errCode":1}'))],
      passed('1 answer(s): HTTP any, errCode nonzero; first {"errCode":1}'),
    ],
    [
      'the string "0" where a refusal is asked (it does not acknowledge)',
      { errCode: 'nonzero' },
      [exchange(answer(200, '{"errCode":"0"}'))],
      passed('1 answer(s): HTTP any, errCode nonzero; first {"errCode":"0"}'),
    ],
    [
      'errCode 0 on HTTP 400 where a refusal is asked: a service reading errCode alone counts it (a possible false ack)',
      { errCode: 'nonzero' },
      [exchange(answer(400, ack))],
      failed(
        'answered a possible acknowledgement to a callback it could not have processed (errCode 0 with HTTP 400 (a service that reads the status first counts it as a failure)): {"errCode":0}',
      ),
    ],
    [
      'errCode -0 where a refusal is asked (a possible false ack)',
      { errCode: 'nonzero' },
      [exchange(answer(200, '{"errCode":-0}'))],
      failed(
        'answered a possible acknowledgement to a callback it could not have processed (errCode written -0 (a strictly typed service may not read it as 0)): {"errCode":-0}',
      ),
    ],
    [
      'no errCode on HTTP 200 where a refusal is asked',
      { errCode: 'nonzero' },
      [exchange(answer(200, '{"code":0}'))],
      passed('1 answer(s): HTTP any, errCode nonzero; first {"code":0}'),
    ],
    [
      'errCode 0 where a refusal is asked',
      { errCode: 'nonzero' },
      [exchange(answer(200, ack))],
      failed('answered errCode 0 to a callback it could not have processed: {"errCode":0}'),
    ],
    [
      'errCode 0 where HTTP 200 and a refusal are asked',
      { status: 200, errCode: 'nonzero' },
      [exchange(answer(200, ack))],
      failed('answered errCode 0 to a callback it could not have processed: {"errCode":0}'),
    ],
    [
      'HTTP 500 where HTTP 200 and a refusal are asked',
      { status: 200, errCode: 'nonzero' },
      [exchange(answer(500, ack))],
      failed('expected HTTP 200, got 500: {"errCode":0}'),
    ],
  ])('judges %s', (_label, params, exchanges, findings) => {
    expect(run(params, exchanges)).toEqual(findings);
  });

  it('judges every delivery and names the first that fails, with its position', () => {
    const exchanges = [
      exchange(answer(200, ack)),
      exchange(answer(200, ack)),
      exchange(answer(200, '{"errCode":"0"}')),
    ];
    expect(run({ errCode: 'zero' }, exchanges)).toEqual(
      failed('delivery 3/3: expected errCode 0, got {"errCode":"0"} (errCode "0" is not a number)'),
    );
    // An ambiguous answer warns only when no delivery fails outright.
    expect(run({ errCode: 'zero' }, [exchange(answer(200, '{"errCode":0.0}')), exchange(answer(200, '{}'))])).toEqual(
      failed('delivery 2/2: expected errCode 0, got {} (HTTP 200 without errCode)'),
    );
    expect(run({ errCode: 'zero' }, [exchange(answer(200, ack)), exchange(answer(200, '{"errCode":0.0}'))])).toEqual(
      openPoint(
        'errCode 0 in a form the interface leaves open (U-CB-RESPONSE): delivery 2/2: errCode written 0.0 (a strictly typed service may not read it as 0): {"errCode":0.0}',
      ),
    );
    expect(run({ errCode: 'nonzero' }, [exchange(answer(500, 'x')), exchange(answer(200, ack))])).toEqual(
      failed('delivery 2/2: answered errCode 0 to a callback it could not have processed: {"errCode":0}'),
    );
    expect(run({}, [exchange(answer(200, ack)), exchange(answer(503, 'busy'))])).toEqual(
      failed('delivery 2/2: expected HTTP 200, got 503: busy'),
    );
  });

  it('counts the answers and shows the first, cut at 80 characters', () => {
    const long = `{"errCode":0,"msg":"${'a'.repeat(100)}"}`;
    expect(run({ errCode: 'zero' }, [exchange(answer(200, long)), exchange(answer(200, ack))])).toEqual(
      passed(`2 answer(s): HTTP 200, errCode zero; first ${long.slice(0, 80)}…`),
    );
  });

  it('cuts a long body in a failure at 160 characters', () => {
    const long = 'e'.repeat(200);
    expect(run({}, [exchange(answer(500, long))])).toEqual(failed(`expected HTTP 200, got 500: ${'e'.repeat(160)}…`));
  });
  it('lenient: a Base64 form a decoder reads is judged by what became of the event (CB-NO-FALSE-ACK only when it was lost; else U-CRYPTO)', () => {
    const event = '{"type":1,"trackingId":"t-own","txid":"x"}';
    const other = '{"type":1,"trackingId":"t-other","txid":"y"}';
    const lenient = (exchanges: Exchange[], processed: string[] | undefined): Finding[] =>
      answersCheck.run(
        checkContext({
          target: merchantTarget,
          params: { errCode: 'nonzero', lenient: true },
          outcome: { exchanges, delivered: [event], ...(processed ? { processed } : {}) },
        }),
      );
    const refused = [exchange(answer(400, '{"errCode":400}'))];
    const acked = [exchange(answer(200, ack))];
    expect(lenient(refused, [])[0]!.status).toBe('passed');
    expect(lenient(refused, undefined)[0]!.status).toBe('passed');
    // Refused yet processed: the service would never resend it, the merchant holds an event it refused.
    expect(lenient(refused, [event])).toEqual([
      { status: 'failed', message: expect.stringMatching(/^refused the body, yet the probe shows 1 processing/) },
    ]);
    // Acknowledged and processed once, the event's own trackingId: leniency, U-CRYPTO.
    expect(lenient(acked, [event])).toEqual([
      { status: 'failed', rules: ['U-CRYPTO'], message: expect.stringMatching(/processed the event once/) },
    ]);
    // Acknowledged without a probe: not known to be lost, U-CRYPTO.
    expect(lenient(acked, undefined)).toEqual([
      { status: 'failed', rules: ['U-CRYPTO'], message: expect.stringMatching(/without a probe/) },
    ]);
    // Acknowledged and not processed, or something else processed: a false ack under the expectation's rules.
    expect(lenient(acked, [])).toEqual([
      { status: 'failed', message: expect.stringMatching(/the probe shows 0 processing\(s\) \(the event is lost\)$/) },
    ]);
    expect(lenient(acked, [other])).toEqual([
      { status: 'failed', message: expect.stringMatching(/did not process as the event: the probe shows 1/) },
    ]);
    expect(lenient(acked, [event, event])).toEqual([
      { status: 'failed', message: expect.stringMatching(/shows 2 processing/) },
    ]);
    // An ambiguous answer is read as a possible acknowledgement.
    expect(lenient([exchange(answer(200, '{"errCode":0.0}'))], [])[0]).toMatchObject({
      status: 'failed',
      message: expect.stringMatching(/^answered a possible acknowledgement/),
    });
    // Without lenient, the same acknowledgement is a false ack whatever the probe shows.
    expect(run({ errCode: 'nonzero' }, acked)[0]!.status).toBe('failed');
  });
});
