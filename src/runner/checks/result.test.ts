import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import { resultCheck } from './result.js';

const ok = '{"code":0,"message":"","data":"AQID"}';
const request = '{"callBackId":"cb-1","tenantUserId":20931,"amount":"12.5"}';
const run = (
  params: Record<string, unknown>,
  response: ReceivedResponse | undefined,
  plain: string | undefined = request,
): Finding[] =>
  resultCheck.run(
    checkContext({
      params,
      outcome: { exchanges: response ? [exchange(response, plain === undefined ? {} : { plain })] : [] },
    }),
  );
const echo = { id: 'callBackId', tenantUserId: 'tenantUserId' };

describe('result: the decrypted data has the result shape and echoes the request (ORDER-RES)', () => {
  it('is registered as result under ORDER-RES', () => {
    expect([resultCheck.id, resultCheck.rules]).toEqual(['result', ['ORDER-RES']]);
  });

  it.each([
    [
      'a result that echoes the request',
      { schema: 'OrderResult', echo },
      decryptedAnswer(200, ok, '{"id":"cb-1","tenantUserId":20931}'),
      [{ status: 'passed', message: 'decrypted {"id":"cb-1","tenantUserId":20931}' }],
    ],
    [
      'a valid result when nothing is echoed',
      { schema: 'OrderResult' },
      decryptedAnswer(200, ok, '{"id":"other","tenantUserId":1}'),
      [{ status: 'passed', message: 'decrypted {"id":"other","tenantUserId":1}' }],
    ],
    [
      'tenantUserId as a string',
      { schema: 'OrderResult', echo },
      decryptedAnswer(200, ok, '{"id":"cb-1","tenantUserId":"20931"}'),
      [
        {
          status: 'failed',
          message:
            'decrypted {"id":"cb-1","tenantUserId":"20931"} does not match OrderResult: /tenantUserId must be integer [ORDER-RES]',
          rules: ['ORDER-RES'],
        },
      ],
    ],
    [
      'an echo of a field the request does not carry: named absent, not a crash',
      { schema: 'OrderResult', echo: { id: 'orderId' } },
      decryptedAnswer(200, ok, '{"id":"cb-1","tenantUserId":20931}'),
      [{ status: 'failed', message: "result id is cb-1, expected the request's orderId (absent)" }],
    ],
    [
      'an id that is not the callBackId',
      { schema: 'OrderResult', echo },
      decryptedAnswer(200, ok, '{"id":"cb-1-x","tenantUserId":20931}'),
      [{ status: 'failed', message: "result id is cb-1-x, expected the request's callBackId cb-1" }],
    ],
    [
      'another tenantUserId',
      { schema: 'OrderResult', echo },
      decryptedAnswer(200, ok, '{"id":"cb-1","tenantUserId":20932}'),
      [{ status: 'failed', message: "result tenantUserId is 20932, expected the request's tenantUserId 20931" }],
    ],
    [
      'data that does not decrypt',
      { schema: 'OrderResult' },
      answer(200, ok, { decryptError: 'the text uses the URL-safe Base64 alphabet [url-safe-alphabet]' }),
      [
        {
          status: 'failed',
          message:
            "data does not decrypt with the merchant's key: the text uses the URL-safe Base64 alphabet [url-safe-alphabet]",
          rules: ['CRYPTO-ENVELOPE'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'an answer without encrypted data',
      { schema: 'OrderResult' },
      answer(200, '{"code":1,"message":"no","data":""}'),
      [{ status: 'failed', message: 'no encrypted data in the answer: {"code":1,"message":"no","data":""}' }],
    ],
    [
      'an internal error where a result or a refusal is due',
      { schema: 'OrderResult', ifAccepted: true },
      answer(500, '{"error":"NumberFormatException"}'),
      [
        {
          status: 'failed',
          message:
            'HTTP 500: the service failed on the request, which is no refusal: {"error":"NumberFormatException"}',
        },
      ],
    ],
    ['no request', { schema: 'OrderResult' }, undefined, [{ status: 'failed', message: 'the step made no request' }]],
  ])('judges %s', (_label, params, response, findings) => {
    expect(run(params, response)).toEqual(findings);
  });

  it('compares a string echo by its text', () => {
    const params = { schema: 'OrderResult', echo: { id: 'callBackId' } };
    expect(run(params, decryptedAnswer(200, ok, '{"id":"cb-1","tenantUserId":1}'), '{"callBackId":"cb-1"}')).toEqual([
      { status: 'passed', message: 'decrypted {"id":"cb-1","tenantUserId":1}' },
    ]);
    expect(run(params, decryptedAnswer(200, ok, '{"id":"cb-2","tenantUserId":1}'), '{"callBackId":"cb-1"}')).toEqual([
      { status: 'failed', message: "result id is cb-2, expected the request's callBackId cb-1" },
    ]);
  });
});

describe('result echoes compare the request as sent, digit for digit', () => {
  it('reads the request without a float: 12345678901234567890.123 echoed as text matches', () => {
    const plain = '{"callBackId":"cb-1","amount":12345678901234567890.123}';
    const findings = run(
      { schema: 'OrderResult', echo: { id: 'amount' } },
      decryptedAnswer(200, ok, '{"id":"12345678901234567890.123","tenantUserId":1}'),
      plain,
    );
    expect(findings).toEqual([
      { status: 'passed', message: 'decrypted {"id":"12345678901234567890.123","tenantUserId":1}' },
    ]);
  });
});

describe('result with ifAccepted: only an accepted request has a result to judge', () => {
  const params = { schema: 'OrderResult', echo: { id: 'callBackId' }, ifAccepted: true };

  it.each([
    ['a failure envelope', answer(200, '{"code":2013,"message":"too long","data":""}'), 'code 2013'],
    ['an HTTP 4xx', answer(413, '{"code":"TOO_LARGE","message":"too large"}'), 'HTTP 413'],
  ])('skips %s', (_label, response, why) => {
    expect(run(params, response)).toEqual([
      { status: 'skipped', message: expect.stringContaining(`the service refused the request (${why})`) as unknown },
    ]);
  });

  it('still fails an accepted order whose id lost its leading zeros, or came back as a number', () => {
    const plain = '{"callBackId":"000123"}';
    expect(run(params, decryptedAnswer(200, ok, '{"id":"123","tenantUserId":1}'), plain)).toEqual([
      { status: 'failed', message: "result id is 123, expected the request's callBackId 000123" },
    ]);
    const big = '{"callBackId":"9007199254740993"}';
    expect(run(params, decryptedAnswer(200, ok, '{"id":9007199254740993,"tenantUserId":1}'), big)).toEqual([
      expect.objectContaining({
        status: 'failed',
        rules: ['ORDER-RES'],
        message: expect.stringContaining('/id must be string') as unknown,
      }),
    ]);
  });
});
