import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { Exchange, ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import { refusedCheck } from './refused.js';
import { GOOD_ORDER, ORDER_URL } from '../../../test/support/order-request.js';

const run = (response: ReceivedResponse | undefined): Finding[] =>
  refusedCheck.run(checkContext({ outcome: { exchanges: response ? [exchange(response)] : [] } }));

describe('refused: bad input is not accepted, by a 4xx or a failure envelope (U-CODES)', () => {
  it('is registered as refused under ENV-CODE', () => {
    expect([refusedCheck.id, refusedCheck.rules]).toEqual(['refused', ['ENV-CODE']]);
  });

  it.each([
    ['HTTP 400', answer(400, 'bad request'), [{ status: 'passed', message: 'HTTP 400: bad request' }]],
    ['HTTP 499, the last client error', answer(499, ''), [{ status: 'passed', message: 'HTTP 499: ' }]],
    ['HTTP 399', answer(399, 'x'), [{ status: 'failed', message: 'HTTP 399 (neither a refusal nor an envelope): x' }]],
    [
      'HTTP 500: the service broke',
      answer(500, 'boom'),
      [{ status: 'failed', message: 'HTTP 500 (neither a refusal nor an envelope): boom' }],
    ],
    [
      'HTTP 201',
      answer(201, '{}'),
      [{ status: 'failed', message: 'HTTP 201 (neither a refusal nor an envelope): {}' }],
    ],
    [
      'a failure envelope with error text',
      answer(200, '{"code":40011,"message":"tenantType must be 1","data":""}'),
      [{ status: 'passed', message: 'failure envelope, code 40011: tenantType must be 1' }],
    ],
    [
      'HTTP 200 with a body that is not JSON',
      answer(200, 'refused'),
      [{ status: 'failed', message: 'HTTP 200 with a body that is not JSON: refused' }],
    ],
    [
      'HTTP 200 with an invalid envelope',
      answer(200, '{"code":"40011","message":"x"}'),
      [
        {
          status: 'failed',
          message: 'HTTP 200 with an invalid envelope: /code must be integer [ENV-CODE]',
          rules: ['ENV-CODE'],
        },
      ],
    ],
    [
      "HTTP 200 whose data is URL-safe Base64: the answer's rule only (CRYPTO-ENVELOPE), once, not the request's ENERGY-DATA/ORDER-DATA",
      answer(200, '{"code":0,"message":"","data":"ab-_cd=="}'),
      [
        {
          status: 'failed',
          message:
            'HTTP 200 with data that is not standard Base64: /data must match pattern "^[A-Za-z0-9+/]+={0,2}$" [CRYPTO-ENVELOPE]',
          rules: ['CRYPTO-ENVELOPE'],
        },
      ],
    ],
    [
      'an accepted request (code 0)',
      answer(200, '{"code":0,"message":"","data":"AQID"}'),
      [{ status: 'failed', message: 'accepted (code 0)' }],
    ],
    [
      'an accepted request with its result',
      decryptedAnswer(200, '{"code":0,"message":"","data":"AQID"}', '{"id":"cb-1"}'),
      [{ status: 'failed', message: 'accepted (code 0), result {"id":"cb-1"}' }],
    ],
    [
      'a failure code without error text',
      answer(200, '{"code":7,"message":"","data":""}'),
      [{ status: 'failed', message: 'failure code 7 without error text (ENV-MSG)', rules: ['ENV-MSG'] }],
    ],
    ['no request', undefined, [{ status: 'failed', message: 'the step made no request' }]],
  ])('judges %s', (_label, response, findings) => {
    expect(run(response)).toEqual(findings);
  });

  it('cuts a long error text at 160 characters', () => {
    const text = 'r'.repeat(200);
    expect(run(answer(200, `{"code":7,"message":"${text}","data":""}`))).toEqual([
      { status: 'passed', message: `failure envelope, code 7: ${text.slice(0, 160)}…` },
    ]);
    expect(run(answer(404, text))).toEqual([{ status: 'passed', message: `HTTP 404: ${text.slice(0, 160)}…` }]);
  });

  describe('what a service may accept (leniency.ts): judged under the open point, not failed', () => {
    const ORDER = ORDER_URL;
    const good = GOOD_ORDER;
    const accepted = answer(200, '{"code":0,"message":"","data":"AQID"}');
    const sent = (
      data: string,
      plain: Record<string, unknown> | string = good,
      contentType = 'application/x-www-form-urlencoded',
    ): Exchange => ({
      request: {
        method: 'POST',
        url: ORDER,
        headers: { 'content-type': contentType },
        body: new URLSearchParams({ data }).toString(),
        plain: typeof plain === 'string' ? plain : JSON.stringify(plain),
      },
      response: accepted,
    });
    const judge = (ex: Exchange) => refusedCheck.run(checkContext({ outcome: { exchanges: [ex] } }));
    const open = (why: string, rules: string[]) => [
      { status: 'failed', message: `accepted (code 0); ${why}: no rule obliges a service to refuse it`, rules },
    ];
    const plainFailure = [{ status: 'failed', message: 'accepted (code 0)' }];

    it.each([
      [
        'data without its = padding',
        sent('AQI'),
        open(
          'data is Base64 with missing-padding: the pattern of ENERGY-DATA/ORDER-DATA allows it and common decoders read it (U-CRYPTO)',
          ['U-CRYPTO'],
        ),
      ],
      [
        'data with non-zero unused bits',
        sent('AQJ='),
        open(
          'data is Base64 with non-canonical-base64: the pattern of ENERGY-DATA/ORDER-DATA allows it and common decoders read it (U-CRYPTO)',
          ['U-CRYPTO'],
        ),
      ],
      [
        'tenantType "1" (a string)',
        sent('AQID', { ...good, tenantType: '1' }),
        open(
          'tenantType "1": a JSON binder reads it as the type the interface names; how a service answers a mistyped field is open (U-CODES)',
          ['U-CODES'],
        ),
      ],
      [
        'userId "42" and tenantUserId 20931',
        sent('AQID', { ...good, userId: '42', tenantUserId: 20931 }),
        open(
          'userId "42", tenantUserId 20931: a JSON binder reads them as the type the interface names; how a service answers a mistyped field is open (U-CODES)',
          ['U-CODES'],
        ),
      ],
      [
        'unpadded data and a coerced field at once',
        sent('AQI', { ...good, tenantType: '1' }),
        open(
          'data is Base64 with missing-padding: the pattern of ENERGY-DATA/ORDER-DATA allows it and common decoders read it (U-CRYPTO); tenantType "1": a JSON binder reads it as the type the interface names; how a service answers a mistyped field is open (U-CODES)',
          ['U-CRYPTO', 'U-CODES'],
        ),
      ],
    ])('warns on an accepted order with %s', (_label, ex, findings) => {
      expect(judge(ex)).toEqual(findings);
    });

    it.each([
      ['data in the URL-safe alphabet (outside the pattern)', sent('AQ-_')],
      ['data with a line break (outside the pattern)', sent('AQID\nAQID')],
      ['unpadded data of an order without userId (a missing field)', sent('AQI', { ...good, userId: undefined })],
      ['tenantType "2": still not 1 once coerced (ORDER-TENANT-TYPE)', sent('AQID', { ...good, tenantType: '2' })],
      ['amount "lots" (no binder makes it a decimal)', sent('AQID', { ...good, amount: 'lots' })],
      ['a plain request that is not JSON', sent('AQI', 'symbol=ENERGY')],
      ['unpadded data under a wrong Content-Type (ORDER-CT)', sent('AQI', good, 'text/plain')],
      [
        'a coerced field under a wrong Content-Type (ORDER-CT)',
        sent('AQID', { ...good, tenantType: '1' }, 'application/json'),
      ],
      ['a valid order in standard Base64', sent('AQID')],
    ])('fails an accepted order with %s', (_label, ex) => {
      expect(judge(ex)).toEqual(plainFailure);
    });
  });
});
