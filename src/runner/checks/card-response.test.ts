import { describe, expect, it } from 'vitest';
import { answer, checkContext, exchange } from '../../../test/support/check-context.js';
import type { ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import { cardResponseCheck } from './card-response.js';

const success =
  '{"success":true,"data":{"bizId":"b","status":"CLOSED"},"errorCode":"","errorMessage":"","errorMessageEn":"","detailMessage":"","requestId":"r"}';
const failure =
  '{"success":false,"data":null,"errorCode":"CARD_NOT_FOUND","errorMessage":"x","errorMessageEn":"x","detailMessage":"x","requestId":"r"}';
const run = (outcome: string | undefined, response: ReceivedResponse | undefined): Finding[] =>
  cardResponseCheck.run(
    checkContext({ params: outcome ? { outcome } : {}, outcome: { exchanges: response ? [exchange(response)] : [] } }),
  );

describe('card-response: the card close answer has the response shape and the expected outcome', () => {
  it('is registered as card-response under CARD-RES', () => {
    expect([cardResponseCheck.id, cardResponseCheck.rules]).toEqual(['card-response', ['CARD-RES']]);
  });

  it.each([
    [
      'a success (outcome success by default)',
      undefined,
      answer(200, success),
      [{ status: 'passed', message: `HTTP 200, ${success}` }],
    ],
    [
      'a failure where a failure is expected, on any HTTP status',
      'failure',
      answer(404, failure),
      [{ status: 'passed', message: `HTTP 404, ${failure}` }],
    ],
    [
      'a success where any outcome will do',
      'any',
      answer(200, success),
      [{ status: 'passed', message: `HTTP 200, success true: ${success.slice(0, 160)}` }],
    ],
    [
      'a failure where any outcome will do',
      'any',
      answer(200, failure),
      [{ status: 'passed', message: `HTTP 200, success false: ${failure}` }],
    ],
    [
      'a failure where a success is expected',
      'success',
      answer(200, failure),
      [{ status: 'failed', message: `expected success true, got false: ${failure}` }],
    ],
    [
      'a success where a failure is expected',
      'failure',
      answer(200, success),
      [{ status: 'failed', message: `expected success false, got true: ${success.slice(0, 160)}` }],
    ],
    [
      'a body that is not JSON',
      undefined,
      answer(502, 'Bad Gateway'),
      [{ status: 'failed', message: 'HTTP 502, body is not JSON: Bad Gateway', rules: ['CARD-RES'] }],
    ],
    [
      'a failure without errorMessageEn: a CARD-ERR failure, once for the step',
      'failure',
      answer(200, failure.replace(',"errorMessageEn":"x"', '')),
      [
        {
          status: 'failed',
          message: `HTTP 200, ${failure.replace(',"errorMessageEn":"x"', '')}: (root) must have required property 'errorMessageEn' [CARD-RES, CARD-ERR]`,
          rules: ['CARD-ERR'],
          cause: 'malformed-card-response',
        },
      ],
    ],
    [
      'a success without data: a CARD-RES failure',
      undefined,
      answer(
        200,
        '{"success":true,"errorCode":"","errorMessage":"","errorMessageEn":"","detailMessage":"","requestId":"r"}',
      ),
      [
        {
          status: 'failed',
          message: `HTTP 200, {"success":true,"errorCode":"","errorMessage":"","errorMessageEn":"","detailMessage":"","requestId":"r"}: (root) must have required property 'data' [CARD-RES]`,
          rules: ['CARD-RES'],
          cause: 'malformed-card-response',
        },
      ],
    ],
    [
      'a success without errorMessageEn: CARD-RES only (CARD-ERR is the failure rule)',
      undefined,
      answer(200, success.replace(',"errorMessageEn":""', '')),
      [
        {
          status: 'failed',
          message: `HTTP 200, ${success.replace(',"errorMessageEn":""', '')}: (root) must have required property 'errorMessageEn' [CARD-RES, CARD-ERR]`,
          rules: ['CARD-RES'],
          cause: 'malformed-card-response',
        },
      ],
    ],
    ['no request', undefined, undefined, [{ status: 'failed', message: 'the step made no request' }]],
  ])('judges %s', (_label, outcome, response, findings) => {
    expect(run(outcome, response)).toEqual(findings);
  });
});

describe('card-response when card close wants an authentication the toolkit does not send (U-CARD-AUTH)', () => {
  it.each([401, 403])('skips an HTTP %i answer instead of counting it as a refusal of the close', (status) => {
    expect(run('failure', answer(status, failure))).toEqual([
      {
        status: 'skipped',
        message: `card close answered HTTP ${status}: it needs an authentication the interface does not show (U-CARD-AUTH), and the toolkit sends none; ${failure.slice(0, 80)}…`,
      },
    ]);
  });
});
