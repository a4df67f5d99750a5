import { describe, expect, it } from 'vitest';
import type { SchemaIssue } from '../../core/schemas.js';
import { answer, checkContext, exchange } from '../../../test/support/check-context.js';
import {
  describeIssues,
  fail,
  isFinding,
  issueRules,
  lastExchange,
  pass,
  preview,
  undecryptable,
  undecryptableCallback,
} from './check.js';

const issue = (message: string, rules: string[]): SchemaIssue => ({
  path: '/x',
  message,
  keyword: 'type',
  schemaPath: '/properties/x/type',
  rules,
});

describe('findings', () => {
  it('passes with a message, or none', () => {
    expect(pass('HTTP 200')).toEqual({ status: 'passed', message: 'HTTP 200' });
    expect(pass()).toEqual({ status: 'passed', message: '' });
  });

  it('fails with the rules the observation breaks, each once, or none', () => {
    expect(fail('bad')).toEqual({ status: 'failed', message: 'bad' });
    expect(fail('bad', [])).toEqual({ status: 'failed', message: 'bad' });
    expect(fail('bad', ['ENV-MSG', 'ENV-CODE', 'ENV-MSG'])).toEqual({
      status: 'failed',
      message: 'bad',
      rules: ['ENV-MSG', 'ENV-CODE'],
    });
  });

  it('tells a finding from an exchange', () => {
    expect(isFinding(pass('x'))).toBe(true);
    expect(isFinding(exchange(answer(200, '')))).toBe(false);
    expect(isFinding({ status: 'failed', message: 'x', request: {} })).toBe(false);
    expect(isFinding(null)).toBe(false);
    expect(isFinding('failed')).toBe(false);
    expect(isFinding({ message: 'x' })).toBe(false);
  });
});

describe('undecryptable envelope data: one failure under the rule of its cause', () => {
  it.each([
    'empty',
    'data-prefix',
    'plus-as-space',
    'percent-encoded',
    'url-safe-alphabet',
    'line-breaks',
    'whitespace',
    'invalid-character',
    'missing-padding',
    'bad-base64-length',
    'misplaced-padding',
    'non-canonical-base64',
    'not-utf8',
    'not-json',
  ])('files the malformed-text reason %s under CRYPTO-ENVELOPE', (reason) => {
    expect(undecryptable(`why [${reason}]`)).toEqual({
      status: 'failed',
      message: `data does not decrypt with the merchant's key: why [${reason}]`,
      rules: ['CRYPTO-ENVELOPE'],
      cause: 'undecryptable-answer',
    });
  });

  it.each(['wrong-key', 'padding-mismatch', 'bad-padding', 'corrupted-block', 'ciphertext-length'])(
    'files the key or padding reason %s under CRYPTO-SAME',
    (reason) => {
      expect(undecryptable(`why [${reason}]`).rules).toEqual(['CRYPTO-SAME']);
    },
  );

  it('files an error without a reason, or with one before the end, under CRYPTO-SAME', () => {
    expect(undecryptable('no reason').rules).toEqual(['CRYPTO-SAME']);
    expect(undecryptable('[empty] then more').rules).toEqual(['CRYPTO-SAME']);
  });
});

describe('undecryptable callbacks: one failure under the rule of its cause', () => {
  it.each([
    'data-prefix',
    'plus-as-space',
    'percent-encoded',
    'url-safe-alphabet',
    'line-breaks',
    'whitespace',
    'missing-padding',
    'empty',
  ])('files the body-shape reason %s under CB-RAW-BODY', (reason) => {
    expect(undecryptableCallback(2, `why [${reason}]`)).toEqual({
      status: 'failed',
      message: `delivery 2 does not decrypt with the public key: why [${reason}]`,
      rules: ['CB-RAW-BODY'],
      cause: 'undecryptable-callback',
    });
  });

  it.each(['not-utf8', 'not-json', 'wrong-key', 'padding-mismatch', 'unknown'])(
    'files %s under CB-DECRYPT',
    (reason) => {
      expect(undecryptableCallback(1, `why [${reason}]`).rules).toEqual(['CB-DECRYPT']);
    },
  );

  it('files an error without a reason under CB-DECRYPT', () => {
    expect(undecryptableCallback(1, 'no reason').rules).toEqual(['CB-DECRYPT']);
  });
});

describe('schema issues', () => {
  it('lists the rules of the issues once each, or none', () => {
    expect(issueRules([issue('a', ['ENV-CODE']), issue('b', ['ENV-MSG', 'ENV-CODE'])])).toEqual([
      'ENV-CODE',
      'ENV-MSG',
    ]);
    expect(issueRules([issue('a', [])])).toBeUndefined();
    expect(issueRules([])).toBeUndefined();
  });

  it('describes each issue with its rules on one line', () => {
    expect(
      describeIssues([
        issue('/code must be integer', ['ENV-CODE']),
        issue('/x must be string', []),
        issue('/y bad', ['A', 'B']),
      ]),
    ).toBe('/code must be integer [ENV-CODE]; /x must be string; /y bad [A, B]');
    expect(describeIssues([])).toBe('');
  });
});

describe('the last exchange of a step', () => {
  it('is the last one made', () => {
    const last = exchange(answer(401, ''));
    expect(lastExchange(checkContext({ outcome: { exchanges: [exchange(answer(500, '')), last] } }))).toBe(last);
  });

  it.each([
    ['no request', [], { status: 'failed', message: 'the step made no request' }],
    [
      'a transport error',
      [exchange(undefined, { error: 'timeout after 5000 ms' })],
      { status: 'failed', message: 'no answer: timeout after 5000 ms', cause: 'no-answer' },
    ],
    [
      'an error beside an answer',
      [exchange(answer(200, ''), { error: 'reset' })],
      { status: 'failed', message: 'no answer: reset', cause: 'no-answer' },
    ],
    [
      'neither answer nor error',
      [exchange(undefined)],
      { status: 'failed', message: 'no answer: unknown transport failure', cause: 'no-answer' },
    ],
  ])('is a failure when there is %s', (_label, exchanges, finding) => {
    expect(lastExchange(checkContext({ outcome: { exchanges } }))).toEqual(finding);
  });
});

describe('previews', () => {
  it.each([
    ['', 160, ''],
    ['a'.repeat(160), 160, 'a'.repeat(160)],
    ['a'.repeat(161), 160, `${'a'.repeat(160)}…`],
    ['abcdef', 5, 'abcde…'],
    ['abcde', 5, 'abcde'],
  ])('cut %j at %i characters', (text, max, shown) => {
    expect(preview(text, max)).toBe(shown);
  });

  it('cut at 160 characters by default', () => {
    expect(preview('b'.repeat(200))).toBe(`${'b'.repeat(160)}…`);
  });
});
