import { describe, expect, it } from 'vitest';
import type { Suite } from '../runner/suite.js';
import { filterCases } from './case-filter.js';
import { refusal } from '../../test/support/refusal.js';

const suite = (name: string, ...ids: string[]): Suite => ({
  name,
  title: name,
  side: 'merchant',
  cases: ids.map((id) => ({ id, title: id, rules: [], steps: [] })),
});
const SUITES = [
  suite('merchant/raw-body', 'valid-deposit', 'plus-sign'),
  suite('merchant/idempotency', 'duplicate-deposit', 'replayed-withdrawal'),
  suite('service/energy', 'success'),
];
const ids = (suites: Suite[]) => suites.flatMap((s) => s.cases.map((c) => `${s.name}/${c.id}`));

describe('--case', () => {
  it.each<[string[], string[]]>([
    [['merchant/raw-body/plus-sign'], ['merchant/raw-body/plus-sign']],
    [['plus-sign'], ['merchant/raw-body/plus-sign']],
    [
      ['merchant/idempotency/*'],
      ['merchant/idempotency/duplicate-deposit', 'merchant/idempotency/replayed-withdrawal'],
    ],
    [['*-deposit'], ['merchant/raw-body/valid-deposit', 'merchant/idempotency/duplicate-deposit']],
    [
      ['merchant/**'],
      [
        'merchant/raw-body/valid-deposit',
        'merchant/raw-body/plus-sign',
        'merchant/idempotency/duplicate-deposit',
        'merchant/idempotency/replayed-withdrawal',
      ],
    ],
    [
      ['success', 'plus-sign'],
      ['merchant/raw-body/plus-sign', 'service/energy/success'],
    ],
    [['su?cess'], ['service/energy/success']],
  ])("%j keeps %j, in the suites' order, and drops emptied suites", (patterns, kept) => {
    const { suites, generated } = filterCases(SUITES, patterns);
    expect(ids(suites)).toEqual(kept);
    expect(suites.every((s) => s.cases.length > 0)).toBe(true);
    expect(generated).toEqual([]);
  });

  it('hands patterns under generated/ to the property run, unchecked', () => {
    const { suites, generated } = filterCases(SUITES, ['generated/merchant/callbacks-once', 'generated/', 'plus-sign']);
    expect(ids(suites)).toEqual(['merchant/raw-body/plus-sign']);
    expect(generated).toEqual(['callbacks-once', 'generated/']);
  });

  it.each<[string, string]>([
    ['plus-sing', '--case "plus-sing" names no case; did you mean merchant/raw-body/plus-sign?'],
    [
      'merchant/raw-body/valid-deposti',
      '--case "merchant/raw-body/valid-deposti" names no case; did you mean merchant/raw-body/valid-deposit?',
    ],
    [
      'deposit',
      '--case "deposit" names no case; did you mean merchant/idempotency/duplicate-deposit, merchant/raw-body/valid-deposit?',
    ],
    [
      'zzzzzzzzzzzzzzzzzzzzzz',
      '--case "zzzzzzzzzzzzzzzzzzzzzz" names no case (5 cases; ids are suite/case, e.g. merchant/raw-body/valid-deposit)',
    ],
  ])('a typo %j is one line with the closest ids', (pattern, message) => {
    expect(refusal(() => filterCases(SUITES, [pattern]))).toEqual(['no-case', message]);
  });

  it('names the first known id as the example, or a default without suites', () => {
    expect(refusal(() => filterCases([], ['x']))).toEqual([
      'no-case',
      '--case "x" names no case (0 cases; ids are suite/case, e.g. merchant/raw-body/valid-deposit)',
    ]);
  });

  it('narrows without the check when told (run checks once over both sides)', () => {
    expect(ids(filterCases(SUITES, ['plus-sign', 'nothing-here'], { check: false }).suites)).toEqual([
      'merchant/raw-body/plus-sign',
    ]);
  });
});
