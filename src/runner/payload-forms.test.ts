import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import type { Rule } from '../core/rules.js';
import { mergeAmountForms, mergeSpellings } from './form-merge.js';
import { withAmountForm } from './merchant-steps.js';
import type { CheckResult, Status } from './types.js';

const rules = new Map<string, Rule>([
  ['CB-RAW-BODY', { id: 'CB-RAW-BODY', severity: 'MUST', text: 'raw body' } as Rule],
  ['ORDER-FIELDS', { id: 'ORDER-FIELDS', severity: 'MUST', text: 'amount' } as Rule],
  ['U-CB-FIELDS', { id: 'U-CB-FIELDS', severity: 'UNSPECIFIED', text: 'fields' } as Rule],
]);
const result = (status: Status, message: string, ruleIds = ['CB-RAW-BODY']): CheckResult => ({
  id: 'processed-exact',
  suite: 'merchant/raw-body',
  case: 'valid-deposit',
  title: 't',
  rules: ruleIds,
  status,
  message,
});

describe('mergeAmountForms: one verdict from the run with JSON-number amounts and the run with decimal strings (U-CB-FIELDS)', () => {
  it.each([
    ['both pass', result('passed', 'ok'), result('passed', 'ok'), result('passed', 'ok')],
    ['both fail alike', result('failed', 'x'), result('failed', 'x'), result('failed', 'x (with both amount forms)')],
    [
      'digits lost from the number form only: the U-CB-FIELDS warning stands as judged',
      result('warning', 'amount sent as a JSON number was booked as …', ['U-CB-FIELDS']),
      result('passed', 'ok'),
      result('warning', 'amount sent as a JSON number was booked as …', ['U-CB-FIELDS']),
    ],
    [
      'digits lost from the string form only: the ORDER-FIELDS failure stands as judged',
      result('passed', 'ok'),
      result('failed', 'amount sent as a decimal string …', ['ORDER-FIELDS']),
      result('failed', 'amount sent as a decimal string …', ['ORDER-FIELDS']),
    ],
    [
      'a warning from the number form and a failure from the string form: the failure',
      result('warning', 'w', ['U-CB-FIELDS']),
      result('failed', 'f', ['ORDER-FIELDS']),
      result('failed', 'f', ['ORDER-FIELDS']),
    ],
    [
      'a string amount refused, numbers processed: passes with one form only, a U-CB-FIELDS warning naming the form',
      result('passed', 'ok'),
      result('failed', 'expected 1 processing(s), the probe shows 0'),
      result(
        'warning',
        'passes with one amount form only: with amounts as decimal strings: expected 1 processing(s), the probe shows 0',
        ['CB-RAW-BODY', 'U-CB-FIELDS'],
      ),
    ],
    [
      'one run skipped: the judged verdict stands',
      result('skipped', 'no probe'),
      result('failed', 'f'),
      result('failed', 'f'),
    ],
  ])('%s', (_label, asNumber, asString, merged) => {
    expect(mergeAmountForms(asNumber, asString, rules, false)).toEqual(merged);
  });

  it('fails a one-form-only target under --strict', () => {
    expect(mergeAmountForms(result('failed', 'f'), result('passed', 'ok'), rules, true).status).toBe('failed');
  });
});

describe('mergeSpellings: unchanged by the generalisation', () => {
  it.each([
    ['both fail', result('failed', 'x'), result('failed', 'x'), result('failed', 'x (with both field spellings)')],
    [
      'the provider spelling only fails',
      result('passed', 'ok'),
      result('failed', 'f'),
      result(
        'warning',
        "passes with one spelling only: with txId/chainName (the provider documentation's spelling): f",
        ['CB-RAW-BODY', 'U-CB-FIELDS'],
      ),
    ],
    [
      'the interface spelling only fails',
      result('failed', 'f'),
      result('passed', 'ok'),
      result('warning', "passes with one spelling only: with txid/chain (the interface's spelling): f", [
        'CB-RAW-BODY',
        'U-CB-FIELDS',
      ]),
    ],
  ])('%s', (_label, asInterface, asProvider, merged) => {
    expect(mergeSpellings(asInterface, asProvider, rules, false)).toEqual(merged);
  });
});

describe('withAmountForm: the same digits as a JSON number or a decimal string', () => {
  const payload = { type: new LosslessNumber('1'), amount: new LosslessNumber('12345678901234567890.123'), txid: '5' };
  it.each([
    ['as written', undefined, '{"type":1,"amount":12345678901234567890.123,"txid":"5"}'],
    ['as a decimal string', 'string' as const, '{"type":1,"amount":"12345678901234567890.123","txid":"5"}'],
    ['as a JSON number', 'number' as const, '{"type":1,"amount":12345678901234567890.123,"txid":"5"}'],
  ])('writes the amount %s, and only the amount', (_label, form, text) => {
    expect(stringifyExact(withAmountForm(payload, form))).toBe(text);
  });

  it('turns a decimal string into a JSON number only when its text is a JSON number', () => {
    expect(stringifyExact(withAmountForm({ amount: '250.000001' }, 'number'))).toBe('{"amount":250.000001}');
    expect(stringifyExact(withAmountForm({ amount: '.5' }, 'number'))).toBe('{"amount":".5"}');
  });
});
