import { describe, expect, it } from 'vitest';
import { answer, checkContext, exchange } from '../../../test/support/check-context.js';
import type { Exchange } from '../observation.js';
import type { Finding } from '../types.js';
import { errorBodyCheck } from './error-body.js';

const run = (schema: unknown, exchanges: Exchange[]): Finding[] =>
  errorBodyCheck.run(checkContext({ params: schema === undefined ? {} : { schema }, outcome: { exchanges } }));
const body401 = '{"code":"UNAUTHORIZED","message":"unauthorized"}';

describe('error-body: an HTTP error body is the JSON the interface shows for it', () => {
  it('is registered as error-body under ERR-401', () => {
    expect([errorBodyCheck.id, errorBodyCheck.rules, errorBodyCheck.needs]).toEqual([
      'error-body',
      ['ERR-401'],
      'exchange',
    ]);
  });

  it.each([
    [
      'the 401 body',
      'UnauthorizedError',
      [exchange(answer(401, body401))],
      [{ status: 'passed', message: `body ${body401}` }],
    ],
    [
      'the 404 body',
      'NotFoundError',
      [exchange(answer(404, '{"code":"NOT FOUND","message":"not found"}'))],
      [{ status: 'passed', message: 'body {"code":"NOT FOUND","message":"not found"}' }],
    ],
    [
      'a 401 body with another code',
      'UnauthorizedError',
      [exchange(answer(401, '{"code":"UNAUTHENTICATED","message":"unauthorized"}'))],
      [
        {
          status: 'failed',
          message:
            'body {"code":"UNAUTHENTICATED","message":"unauthorized"} does not match UnauthorizedError: /code must be equal to constant [ERR-401]',
          rules: ['ERR-401'],
        },
      ],
    ],
    [
      'the 401 body where the 403 body is expected',
      'ForbiddenError',
      [exchange(answer(403, body401))],
      [
        {
          status: 'failed',
          message: `body ${body401} does not match ForbiddenError: /code must be equal to constant [ERR-403]; /message must be equal to constant [ERR-403]`,
          rules: ['ERR-403'],
        },
      ],
    ],
    [
      'a body that is not JSON',
      'UnauthorizedError',
      [exchange(answer(401, 'Unauthorized'))],
      [{ status: 'failed', message: 'the body is not JSON: Unauthorized' }],
    ],
    [
      'an empty body',
      'UnauthorizedError',
      [exchange(answer(401, ''))],
      [{ status: 'failed', message: 'the body is not JSON: ' }],
    ],
    [
      'HTTP 200 where the 401 body is expected: the status check judges it',
      'UnauthorizedError',
      [exchange(answer(200, '{"code":0}'))],
      [
        {
          status: 'skipped',
          message:
            'HTTP 200, not 401: no UnauthorizedError body to judge (the status is judged on its own): {"code":0}',
        },
      ],
    ],
    [
      'HTTP 400 where the 404 body is expected',
      'NotFoundError',
      [exchange(answer(400, 'bad'))],
      [
        {
          status: 'skipped',
          message: 'HTTP 400, not 404: no NotFoundError body to judge (the status is judged on its own): bad',
        },
      ],
    ],
    [
      'any status for the generic ErrorBody',
      'ErrorBody',
      [exchange(answer(400, 'bad'))],
      [{ status: 'failed', message: 'the body is not JSON: bad' }],
    ],
    ['no request', 'UnauthorizedError', [], [{ status: 'failed', message: 'the step made no request' }]],
    [
      'a transport failure',
      'UnauthorizedError',
      [exchange(undefined, { error: 'socket hang up' })],
      [{ status: 'failed', message: 'no answer: socket hang up', cause: 'no-answer' }],
    ],
  ])('judges %s', (_label, schema, exchanges, findings) => {
    expect(run(schema, exchanges)).toEqual(findings);
  });

  it.each([
    [
      'order',
      '{"code":401,"msg":"no key"}',
      [
        {
          status: 'failed',
          message:
            'body {"code":401,"msg":"no key"} does not match UnauthorizedError: (root) must have required property \'message\'; /code must be string; /code must be equal to constant [ERR-401] (the error bodies of order submission and card close are open, U-CODES)',
          rules: ['U-CODES'],
        },
      ],
    ],
    [
      'card',
      'denied',
      [
        {
          status: 'failed',
          message:
            'the body is not JSON: denied (the error bodies of order submission and card close are open, U-CODES)',
          rules: ['U-CODES'],
        },
      ],
    ],
    ['energy', 'denied', [{ status: 'failed', message: 'the body is not JSON: denied' }]],
  ])("names U-CODES, not the schema's rules, for a wrong error body of the %s endpoint", (endpoint, body, findings) => {
    const ctx = checkContext({
      params: { schema: 'UnauthorizedError' },
      outcome: { exchanges: [exchange(answer(401, body))] },
      step: { request: { endpoint } },
    });
    expect(errorBodyCheck.run(ctx)).toEqual(findings);
  });
});
