import { describe, expect, it } from 'vitest';
import { checkContext, merchantTarget } from '../../../test/support/check-context.js';
import type { StepOutcome } from '../observation.js';
import type { Finding } from '../types.js';
import { decimalValue, processedCheck, processedExactCheck } from './processed.js';

const passed = (message: string): Finding[] => [{ status: 'passed', message }];
const failed = (message: string): Finding[] => [{ status: 'failed', message }];
const failedUnder = (rule: string, message: string): Finding[] => [{ status: 'failed', message, rules: [rule] }];
const noProbe: Finding[] = [{ status: 'skipped', message: 'needs --probe-url or --probe-cmd' }];

describe('processed: the probe shows exactly the business processings the step should cause (CB-ONCE)', () => {
  const run = (count: unknown, processed: string[] | undefined): Finding[] =>
    processedCheck.run(
      checkContext({ target: merchantTarget, params: { count }, outcome: processed ? { processed } : {} }),
    );

  it('enforces CB-ONCE under the id processed', () => {
    expect([processedCheck.id, processedCheck.title, processedCheck.rules, processedCheck.needs]).toEqual([
      'processed',
      'business processing count (probe)',
      ['CB-ONCE'],
      'probe',
    ]);
  });

  it.each([
    ['no probe', 1, undefined, noProbe],
    ['one processing where one is expected', 1, ['{"a":1}'], passed('1 processing(s)')],
    ['no processing where none is expected (a refused callback)', 0, [], passed('0 processing(s)')],
    ['no processing where one is expected', 1, [], failed('expected 1 processing(s), the probe shows 0')],
    [
      'two processings of one event (a duplicate processed twice)',
      1,
      ['{"a":1}', '{"a":1}'],
      failed('expected 1 processing(s), the probe shows 2: {"a":1} | {"a":1}'),
    ],
    [
      'one processing where none is expected',
      0,
      ['{"a":2}'],
      failed('expected 0 processing(s), the probe shows 1: {"a":2}'),
    ],
  ])('judges %s', (_label, count, processed, findings) => {
    expect(run(count, processed)).toEqual(findings);
  });

  it('shows the processed entries cut at 240 characters', () => {
    const entry = `{"note":"${'n'.repeat(300)}"}`;
    expect(run(0, [entry])).toEqual(failed(`expected 0 processing(s), the probe shows 1: ${entry.slice(0, 240)}…`));
  });
});

describe('processed-exact: every processed entry is a delivered payload, every digit intact (CB-RAW-BODY)', () => {
  const run = (outcome: Partial<StepOutcome>): Finding[] =>
    processedExactCheck.run(checkContext({ target: merchantTarget, outcome }));
  const delivered = ['{"type":3, "amount": 12345678901234567890.123, "txid":"ab"}', '{"type":4,"amount":0.10}'];

  it('enforces CB-RAW-BODY under the id processed-exact', () => {
    expect([
      processedExactCheck.id,
      processedExactCheck.title,
      processedExactCheck.rules,
      processedExactCheck.needs,
    ]).toEqual(['processed-exact', 'processed payloads are exact (probe)', ['CB-RAW-BODY'], 'probe']);
  });

  it.each([
    ['no probe', { delivered }, noProbe],
    [
      'the delivered payload, compared as exact JSON (spacing aside)',
      { delivered, processed: ['{"type":3,"amount":12345678901234567890.123,"txid":"ab"}'] },
      passed('1 entries match delivered payloads exactly'),
    ],
    [
      'both delivered payloads',
      {
        delivered,
        processed: ['{"type":4,"amount":0.10}', '{"type":3,"amount":12345678901234567890.123,"txid":"ab"}'],
      },
      passed('2 entries match delivered payloads exactly'),
    ],
    [
      'an amount parsed as a binary float',
      { delivered, processed: ['{"type":3,"amount":12345678901234567000,"txid":"ab"}'] },
      failedUnder(
        'U-CB-FIELDS',
        'amount 12345678901234567890.123 sent as a JSON number was booked as 12345678901234567000: a JSON number amount loses digits in this receiver; the interface leaves number vs string open (U-CB-FIELDS)',
      ),
    ],
    [
      'a decimal string amount parsed as a binary float',
      {
        delivered: ['{"type":3,"amount":"12345678901234567890.123","txid":"ab"}'],
        processed: ['{"type":3,"amount":"12345678901234567000","txid":"ab"}'],
      },
      failedUnder(
        'ORDER-FIELDS',
        'amount "12345678901234567890.123" sent as a decimal string was booked as "12345678901234567000": digits lost, as through a binary float (ORDER-FIELDS: an amount is a BigDecimal, never rounded through a binary float)',
      ),
    ],
    [
      'a decimal string amount booked as a rounded JSON number',
      { delivered: ['{"type":3,"amount":"0.1000000000000000000001"}'], processed: ['{"type":3,"amount":0.1}'] },
      failedUnder(
        'ORDER-FIELDS',
        'amount "0.1000000000000000000001" sent as a decimal string was booked as 0.1: digits lost, as through a binary float (ORDER-FIELDS: an amount is a BigDecimal, never rounded through a binary float)',
      ),
    ],
    [
      'a trailing zero dropped from the second entry: the same value, not a difference',
      { delivered, processed: ['{"type":3,"amount":12345678901234567890.123,"txid":"ab"}', '{"type":4,"amount":0.1}'] },
      passed(
        '2 entries match delivered payloads exactly; amount 0.10 booked as 0.1 (the same value; no rule fixes its scale or form)',
      ),
    ],
    [
      'a decimal string "1.10" booked as the number 1.1: the same value',
      { delivered: ['{"type":4,"amount":"1.10"}'], processed: ['{"type":4,"amount":1.1}'] },
      passed(
        '1 entries match delivered payloads exactly; amount "1.10" booked as 1.1 (the same value; no rule fixes its scale or form)',
      ),
    ],
    [
      "another field changed beside a float-rounded number amount: the field, under the expectation's rules",
      { delivered, processed: ['{"type":3,"amount":12345678901234567000,"txid":"ax"}'] },
      failed(
        'amount 12345678901234567890.123 sent as a JSON number was booked as 12345678901234567000: a JSON number amount loses digits in this receiver; the interface leaves number vs string open (U-CB-FIELDS); txid: sent "ab", the probe shows "ax"',
      ),
    ],
    [
      'an entry when nothing was delivered',
      { processed: ['{"type":4,"amount":0.10}'] },
      failed(
        'the probe shows {"type":4,"amount":0.10}, which is not a payload that was delivered (a field or digit changed)',
      ),
    ],
    ['no entry at all', { delivered, processed: [] }, failed('nothing was processed')],
    [
      'a field renamed and one missing, matched by trackingId',
      {
        delivered: [
          '{"type":1,"trackingId":"t-1","txid":"ab","chain":"TRON"}',
          '{"type":1,"trackingId":"t-2","txid":"cd","chain":"TRON"}',
        ],
        processed: ['{"type":1,"trackingId":"t-2","txId":"cd"}'],
      },
      failed(
        'txid: sent "cd", the probe shows nothing; chain: sent "TRON", the probe shows nothing; txId: not sent, the probe shows "cd"',
      ),
    ],
    [
      'a decimal string whose digits a float rounded',
      { delivered, processed: ['{"type":3,"amount":"12345678901234567000","txid":"ab"}'] },
      failedUnder(
        'U-CB-FIELDS',
        'amount 12345678901234567890.123 sent as a JSON number was booked as "12345678901234567000": a JSON number amount loses digits in this receiver; the interface leaves number vs string open (U-CB-FIELDS)',
      ),
    ],
    [
      'another number: no float in sight',
      { delivered: ['{"type":4,"amount":5}'], processed: ['{"type":4,"amount":6}'] },
      failedUnder(
        'ORDER-FIELDS',
        'amount: sent 5, the probe shows 6 (ORDER-FIELDS: an amount is a BigDecimal, kept exactly)',
      ),
    ],
    [
      'a number turned into true',
      { delivered: ['{"type":4,"amount":1}'], processed: ['{"type":4,"amount":true}'] },
      failedUnder(
        'ORDER-FIELDS',
        'amount: sent 1, the probe shows true (ORDER-FIELDS: an amount is a BigDecimal, kept exactly)',
      ),
    ],
    [
      'a string sent and a number shown',
      { delivered: ['{"type":4,"txid":"5"}'], processed: ['{"type":4,"txid":5}'] },
      failed('txid: sent "5", the probe shows 5'),
    ],
    [
      'another string',
      { delivered: ['{"type":4,"txid":"ab"}'], processed: ['{"type":4,"txid":"ac"}'] },
      failed('txid: sent "ab", the probe shows "ac"'),
    ],
    [
      'an entry that is JSON null',
      { delivered, processed: ['null'] },
      failed('the probe shows null, which is not a payload that was delivered (a field or digit changed)'),
    ],
    [
      'a delivered payload that is not an object, beside one that is',
      { delivered: ['null', '7', '{"type":4,"amount":0.10}'], processed: ['{"type":4,"amount":0.2}'] },
      failedUnder(
        'ORDER-FIELDS',
        'amount: sent 0.10, the probe shows 0.2 (ORDER-FIELDS: an amount is a BigDecimal, kept exactly)',
      ),
    ],
  ])('judges %s', (_label, outcome, findings) => {
    expect(run(outcome)).toEqual(findings);
  });

  it('shows a changed entry cut at 240 characters', () => {
    const entry = `{"note":"${'n'.repeat(300)}"}`;
    expect(run({ delivered, processed: [entry] })).toEqual(
      failed(
        `the probe shows ${entry.slice(0, 240)}…, which is not a payload that was delivered (a field or digit changed)`,
      ),
    );
  });
});

describe('processed-exact: a digit lost from one entry and a float reading of another', () => {
  it("reports the failure under the amount's rule before the U-CB-FIELDS reading", () => {
    const outcome = {
      delivered: [
        '{"type":3,"trackingId":"a","amount":12345678901234567890.123}',
        '{"type":3,"trackingId":"b","amount":"0.30"}',
      ],
      processed: [
        '{"type":3,"trackingId":"a","amount":12345678901234567000}',
        '{"type":3,"trackingId":"b","amount":"0.3000000000000000444"}',
      ],
    };
    const findings = processedExactCheck.run(checkContext({ target: merchantTarget, outcome }));
    expect(findings.map((f) => f.rules)).toEqual([['ORDER-FIELDS'], ['U-CB-FIELDS']]);
  });
});

describe('decimalValue: one text per exact value', () => {
  it.each([
    ['1.10', '11e-1'],
    ['1.1', '11e-1'],
    ['11E-1', '11e-1'],
    ['0.0', '0'],
    ['-0', '0'],
    ['+5', '5e0'],
    ['500', '5e2'],
    ['.5', '5e-1'],
    ['-12345678901234567890.123', '-12345678901234567890123e-3'],
    ['', undefined],
    ['.', undefined],
    ['1.1.1', undefined],
    ['abc', undefined],
    ['1e', undefined],
  ])('reads %j as %j', (text, value) => {
    expect(decimalValue(text)).toBe(value);
  });
});
