import { describe, expect, it } from 'vitest';
import { answersCheck } from './answers.js';
import { paramsProblem } from '../params.js';
import { CHECKS, CHECKS_BY_ID, findCheck, type TypedExpectation } from './index.js';
import { processedCheck, processedExactCheck } from './processed.js';

describe('the check registry', () => {
  it('registers each check under a unique id', () => {
    const ids = CHECKS.map((check) => check.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(19);
  });

  it.each(CHECKS.map((check) => [check.id, check] as const))('finds %s by its id', (id, check) => {
    expect(findCheck(id)).toBe(check);
  });

  it('finds the merchant-side checks', () => {
    expect([findCheck('answers'), findCheck('processed'), findCheck('processed-exact')]).toEqual([
      answersCheck,
      processedCheck,
      processedExactCheck,
    ]);
  });

  it.each([
    ['answers', 'merchant answers', ['CB-ERRCODE'], 'exchange'],
    ['callback-decrypts', 'callback decrypts with the public key', ['CB-DECRYPT', 'CRYPTO-SAME'], 'callbacks'],
    ['callback-headers', 'callback headers', ['CB-HEADERS', 'CB-KEY-SAME'], 'callbacks'],
    ['callback-request-uuid', 'fresh requestUUID per delivery', ['CB-UUID'], 'callbacks'],
    ['callback-tracking-id', 'stable trackingId across deliveries', ['CB-ID-OTHER'], 'callbacks'],
    ['callback-attempts', 'retries until errCode 0 and never after', ['CB-ERRCODE'], 'callbacks'],
    ['callback-raw-body', 'callback body is raw Base64', ['CB-RAW-BODY'], 'callbacks'],
    ['card-response', 'card close response', ['CARD-RES'], 'exchange'],
    ['energy-floor', 'energyMaxCount from the live balance', ['ENERGY-FLOOR'], 'exchange'],
    ['envelope', 'response envelope', ['ENV-CODE', 'ENV-MSG', 'ENV-DATA'], 'exchange'],
    ['error-body', 'HTTP error body', ['ERR-401'], 'exchange'],
    ['processed', 'business processing count (probe)', ['CB-ONCE'], 'probe'],
    ['processed-exact', 'processed payloads are exact (probe)', ['CB-RAW-BODY'], 'probe'],
    ['refused', 'bad input is refused', ['ENV-CODE'], 'exchange'],
    ['result', 'decrypted result', ['ORDER-RES'], 'exchange'],
    ['status', 'HTTP status', ['ENERGY-PATH'], 'exchange'],
  ])('registers %s as "%s" with its rules and what it needs', (id, title, rules, needs) => {
    const check = findCheck(id);
    expect([check?.title, check?.rules, check?.needs]).toEqual([title, rules, needs]);
  });

  it('files each check under its own id', () => {
    expect(Object.entries(CHECKS_BY_ID).filter(([id, check]) => check.id !== id)).toEqual([]);
  });

  it('types an expectation built in code by its check, as the loader judges a suite file', () => {
    const good: TypedExpectation[] = [
      { check: 'status', equals: 200, rules: ['ENERGY-PATH'] },
      { check: 'refused' },
      { check: 'energy-floor', balance: [1, '2'], costPerTx: 3 },
    ];
    // @ts-expect-error a typo in a parameter's name
    const typo: TypedExpectation = { check: 'status', equal: 200 };
    // @ts-expect-error a status given as text
    const text: TypedExpectation = { check: 'status', equals: '200' };
    // @ts-expect-error a parameter of another check
    const other: TypedExpectation = { check: 'refused', outcome: 'failure' };
    const problems = [...good, typo, text, other].map(
      ({ check, rules: _rules, title: _title, ...params }) => paramsProblem(findCheck(check)!, params)?.message,
    );
    expect(problems).toEqual([
      undefined,
      undefined,
      undefined,
      'unknown parameter "equal" (known: equals)',
      'parameter "equals" must be an integer, not "200"',
      'unknown parameter "outcome" (it takes none)',
    ]);
  });

  it('finds nothing under an unknown id', () => {
    expect(findCheck('statuz')).toBeUndefined();
    expect(findCheck('')).toBeUndefined();
  });
});
