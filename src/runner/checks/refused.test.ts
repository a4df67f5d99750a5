import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { ReceivedResponse } from '../context.js';
import type { Finding } from '../types.js';
import { refusedCheck } from './refused.js';

const run = (response: ReceivedResponse | undefined): Finding[] => refusedCheck.run(checkContext({ outcome: { exchanges: response ? [exchange(response)] : [] } }));

describe('refused: bad input is not accepted, by a 4xx or a failure envelope (U-CODES)', () => {
  it('is registered as refused under ENV-CODE', () => {
    expect([refusedCheck.id, refusedCheck.rules]).toEqual(['refused', ['ENV-CODE']]);
  });

  it.each([
    ['HTTP 400', answer(400, 'bad request'), [{ status: 'passed', message: 'HTTP 400: bad request' }]],
    ['HTTP 499, the last client error', answer(499, ''), [{ status: 'passed', message: 'HTTP 499: ' }]],
    ['HTTP 399', answer(399, 'x'), [{ status: 'failed', message: 'HTTP 399 (neither a refusal nor an envelope): x' }]],
    ['HTTP 500: the service broke', answer(500, 'boom'), [{ status: 'failed', message: 'HTTP 500 (neither a refusal nor an envelope): boom' }]],
    ['HTTP 201', answer(201, '{}'), [{ status: 'failed', message: 'HTTP 201 (neither a refusal nor an envelope): {}' }]],
    ['a failure envelope with error text', answer(200, '{"code":40011,"message":"tenantType must be 1","data":""}'), [{ status: 'passed', message: 'failure envelope, code 40011: tenantType must be 1' }]],
    ['HTTP 200 with a body that is not JSON', answer(200, 'refused'), [{ status: 'failed', message: 'HTTP 200 with a body that is not JSON: refused' }]],
    [
      'HTTP 200 with an invalid envelope',
      answer(200, '{"code":"40011","message":"x"}'),
      [{ status: 'failed', message: 'HTTP 200 with an invalid envelope: /code must be integer [ENV-CODE]', rules: ['ENV-CODE'] }],
    ],
    ['an accepted request (code 0)', answer(200, '{"code":0,"message":"","data":"AQID"}'), [{ status: 'failed', message: 'accepted (code 0)' }]],
    ['an accepted request with its result', decryptedAnswer(200, '{"code":0,"message":"","data":"AQID"}', '{"id":"cb-1"}'), [{ status: 'failed', message: 'accepted (code 0), result {"id":"cb-1"}' }]],
    ['a failure code without error text', answer(200, '{"code":7,"message":"","data":""}'), [{ status: 'failed', message: 'failure code 7 without error text (ENV-MSG)', rules: ['ENV-MSG'] }]],
    ['no request', undefined, [{ status: 'failed', message: 'the step made no request' }]],
  ])('judges %s', (_label, response, findings) => {
    expect(run(response)).toEqual(findings);
  });

  it('cuts a long error text at 160 characters', () => {
    const text = 'r'.repeat(200);
    expect(run(answer(200, `{"code":7,"message":"${text}","data":""}`))).toEqual([{ status: 'passed', message: `failure envelope, code 7: ${text.slice(0, 160)}…` }]);
    expect(run(answer(404, text))).toEqual([{ status: 'passed', message: `HTTP 404: ${text.slice(0, 160)}…` }]);
  });
});
