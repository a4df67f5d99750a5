import { describe, expect, it } from 'vitest';
import { answer, checkContext, exchange } from '../../../test/support/check-context.js';
import type { Exchange } from '../observation.js';
import type { Finding } from '../types.js';
import { statusCheck } from './status.js';

const run = (equals: unknown, exchanges: Exchange[]): Finding[] =>
  statusCheck.run(checkContext({ params: { equals }, outcome: { exchanges } }));

describe('status: the HTTP status of the last answer equals the one expected', () => {
  it('is registered as status', () => {
    expect([statusCheck.id, statusCheck.needs]).toEqual(['status', 'exchange']);
  });

  it.each([
    [
      'the expected status',
      401,
      [exchange(answer(401, '{"code":"UNAUTHORIZED"}'))],
      [{ status: 'passed', message: 'HTTP 401' }],
    ],
    [
      'another status',
      401,
      [exchange(answer(200, '{"code":0}'))],
      [{ status: 'failed', message: 'expected HTTP 401, got 200: {"code":0}' }],
    ],
    [
      'a 2xx where 200 is expected',
      200,
      [exchange(answer(204, ''))],
      [{ status: 'failed', message: 'expected HTTP 200, got 204: ' }],
    ],
    [
      'the last of several answers',
      401,
      [exchange(answer(500, 'x')), exchange(answer(401, ''))],
      [{ status: 'passed', message: 'HTTP 401' }],
    ],
    ['no request', 200, [], [{ status: 'failed', message: 'the step made no request' }]],
    [
      'a transport failure',
      200,
      [exchange(undefined, { error: 'connect ECONNREFUSED 127.0.0.1:9' })],
      [{ status: 'failed', message: 'no answer: connect ECONNREFUSED 127.0.0.1:9', cause: 'no-answer' }],
    ],
    [
      'an exchange with neither answer nor error',
      200,
      [exchange(undefined)],
      [{ status: 'failed', message: 'no answer: unknown transport failure', cause: 'no-answer' }],
    ],
  ])('judges %s', (_label, equals, exchanges, findings) => {
    expect(run(equals, exchanges)).toEqual(findings);
  });

  it('shows the unexpected body cut at 160 characters', () => {
    expect(run(200, [exchange(answer(500, 'x'.repeat(161)))])).toEqual([
      { status: 'failed', message: `expected HTTP 200, got 500: ${'x'.repeat(160)}…` },
    ]);
  });
});
