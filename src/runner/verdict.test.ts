import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog, type Rule } from '../core/rules.js';
import type { CheckResult } from './types.js';
import {
  assumptionsOf,
  failureStatus,
  judgedRules,
  judgeFailure,
  judgeFinding,
  notJudged,
  skipNotes,
} from './verdict.js';

const catalog = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const rules = new Map(catalog.map((rule) => [rule.id, rule]));
const result = (status: CheckResult['status'], message: string, extra: Partial<CheckResult> = {}): CheckResult => ({
  id: `s/c/${message.length}`,
  suite: 's',
  case: 'c',
  title: 't',
  rules: ['CB-ONCE'],
  status,
  message,
  ...extra,
});

describe('what a run did not judge, by reason', () => {
  it("groups skipped MUST checks by reason, one group for a cause another check reported, one for observe's events", () => {
    const results = [
      result('skipped', 'needs --probe-url or --probe-cmd'),
      result('skipped', 'needs --probe-url or --probe-cmd'),
      result('skipped', 'not judged: no answer (the cause is reported once, by status, under ENV-CODE, CB-ONCE)'),
      result('skipped', 'not judged: bad data (the cause is reported once, by envelope, under ENV-DATA)'),
      result(
        'skipped',
        '1 judgement (seq 7): not judged: the observation ended 0 s after delivery 2 of event dep-1 was refused',
      ),
      result(
        'skipped',
        '3 judgements (seq 8…12): not judged: the observation ended 4 s after delivery 1 of event wd-2 was refused',
      ),
      result('skipped', 'needs --restart CMD', { rules: ['U-RETRY'] }),
      result('passed', 'fine'),
    ];
    expect(skipNotes(results, rules).notes).toEqual([
      '2 MUST checks skipped: needs --probe-url or --probe-cmd',
      '2 MUST checks skipped: not judged: its cause is reported once, by another check of its step',
      '2 MUST checks skipped: not judged: the observation ended … s after a delivery of event … was refused',
    ]);
  });

  it('counts a check a setup, suite or toolkit error kept from judging, beside the skipped ones', () => {
    const results = [
      result('failed', 'suite error: no check named x', { fault: 'suite' }),
      result('skipped', 'needs --probe-url or --probe-cmd'),
      result('failed', 'expected 1'),
    ];
    expect(notJudged(results, rules)).toEqual({
      count: 2,
      groups: [
        { reason: 'suite error: no check named x', count: 1 },
        { reason: 'needs --probe-url or --probe-cmd', count: 1 },
      ],
    });
  });
});

describe('a finding judged under its rules', () => {
  it("judges a failure under the finding's own rules when it names them, else under the labels", () => {
    expect(judgedRules({ status: 'failed', message: 'm', rules: ['CRYPTO-SAME'] }, ['U-LIMITS'])).toEqual([
      'CRYPTO-SAME',
    ]);
    expect(judgedRules({ status: 'failed', message: 'm', rules: [] }, ['U-LIMITS'])).toEqual(['U-LIMITS']);
    expect(judgedRules({ status: 'failed', message: 'm' }, ['U-LIMITS'])).toEqual(['U-LIMITS']);
    expect(judgedRules({ status: 'passed', message: 'm', rules: ['CRYPTO-SAME'] }, ['U-LIMITS'])).toEqual(['U-LIMITS']);
  });

  it('keeps a finding that did not fail as it is, and says why a failure only warns', () => {
    expect(judgeFinding({ status: 'passed', message: 'fine' }, ['ENV-CODE'], rules, true, 'service')).toEqual({
      status: 'passed',
      message: 'fine',
    });
    expect(judgeFinding({ status: 'skipped', message: 'needs x' }, ['ENV-CODE'], rules, false, 'service')).toEqual({
      status: 'skipped',
      message: 'needs x',
    });
    expect(judgeFinding({ status: 'failed', message: 'no key' }, ['CB-KEY-FIRST'], rules, false, 'service')).toEqual({
      status: 'warning',
      message: 'no key (a warning: CB-KEY-FIRST binds the merchant, not the service under test)',
    });
    expect(judgeFinding({ status: 'failed', message: 'slow' }, ['U-LIMITS'], rules, false, 'service')).toEqual({
      status: 'warning',
      message: 'slow',
    });
    expect(judgeFinding({ status: 'failed', message: 'bad' }, ['ENV-CODE'], rules, false, 'service')).toEqual({
      status: 'failed',
      message: 'bad',
    });
  });

  it('lists the open points among the rules with their text', () => {
    expect(assumptionsOf(['ENV-CODE', 'U-RETRY', 'U-NOT-IN-CATALOG'], rules)).toEqual([
      { rule: 'U-RETRY', text: 'retry count and interval.' },
      { rule: 'U-NOT-IN-CATALOG', text: '' },
    ]);
  });
});

describe('why MUST checks were skipped', () => {
  it('counts skipped MUST checks only, in the singular for one', () => {
    const results = [
      result('skipped', 'needs --restart CMD'),
      result('skipped', 'needs --restart CMD', { rules: ['U-RETRY'] }),
      result('failed', 'suite error', { fault: 'suite' }),
      result('passed', 'fine'),
    ];
    expect(skipNotes(results, rules)).toEqual({ skippedMust: 1, notes: ['1 MUST check skipped: needs --restart CMD'] });
    expect(skipNotes([], rules)).toEqual({ skippedMust: 0, notes: [] });
  });

  it("keeps an observe message's words, dropping its count, seq span, event and delivery", () => {
    const notes = (message: string) => skipNotes([result('skipped', message)], rules).notes;
    expect(notes('2 judgements: needs --probe-url')).toEqual(['1 MUST check skipped: needs --probe-url']);
    expect(notes('needs 2 judgements: as written')).toEqual(['1 MUST check skipped: needs 2 judgements: as written']);
    expect(notes('not judged: withdrawal wd-9 was cut')).toEqual([
      '1 MUST check skipped: not judged: withdrawal … was cut',
    ]);
    // Words after "event" without a digit or '-' are not an event's id.
    expect(notes('not judged: the event stream ended')).toEqual([
      '1 MUST check skipped: not judged: the event stream ended',
    ]);
    expect(notes('not judged: 12 s after delivery 3, the observation ended')).toEqual([
      '1 MUST check skipped: not judged: … s after a delivery, the observation ended',
    ]);
  });

  it('orders the groups of what was not judged by count, most first', () => {
    const results = [
      result('skipped', 'needs a'),
      result('skipped', 'needs b'),
      result('skipped', 'needs b'),
      result('failed', 'needs b', { fault: 'setup', rules: ['U-RETRY'] }),
    ];
    expect(notJudged(results, rules)).toEqual({
      count: 3,
      groups: [
        { reason: 'needs b', count: 2 },
        { reason: 'needs a', count: 1 },
      ],
    });
  });
});

describe('judgeFailure: a finding fails only a MUST that binds the target', () => {
  it('fails a MUST binding the target or both parties, warns on SHOULD and U-* (failed under strict)', () => {
    expect(judgeFailure(['ENV-CODE'], rules, false, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure(['CRYPTO-SAME'], rules, false, 'merchant')).toEqual({ status: 'failed' });
    expect(judgeFailure(['U-LIMITS'], rules, false, 'service')).toEqual({ status: 'warning' });
    expect(judgeFailure(['U-LIMITS'], rules, true, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure(['CB-NO-FALSE-ACK'], rules, false, 'merchant')).toEqual({ status: 'warning' });
  });

  it('warns, naming why, when every MUST found binds the other party, even under strict', () => {
    expect(judgeFailure(['CB-KEY-FIRST'], rules, false, 'service')).toEqual({
      status: 'warning',
      why: 'CB-KEY-FIRST binds the merchant, not the service under test',
    });
    expect(judgeFailure(['CB-KEY-FIRST', 'CB-DUP-ACK'], rules, true, 'service')).toEqual({
      status: 'warning',
      why: 'CB-KEY-FIRST, CB-DUP-ACK bind the merchant, not the service under test',
    });
    expect(judgeFailure(['ENV-MSG'], rules, false, 'merchant')).toEqual({
      status: 'warning',
      why: 'ENV-MSG binds the service, not the merchant under test',
    });
    // One binding MUST among them is enough to fail; a binding open point fails under strict only.
    expect(judgeFailure(['CB-KEY-FIRST', 'CB-ERRCODE'], rules, false, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure(['CB-KEY-FIRST', 'U-RETRY'], rules, true, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure(['CB-KEY-FIRST', 'U-RETRY'], rules, false, 'service')).toMatchObject({
      status: 'warning',
      why: expect.stringContaining('CB-KEY-FIRST binds the merchant'),
    });
  });

  it('counts a rule outside the catalog, and every rule without a side, as binding', () => {
    expect(failureStatus(['NO-SUCH-RULE'], rules, false, 'service')).toBe('warning');
    expect(failureStatus(['CB-KEY-FIRST'], rules, false)).toBe('failed');
    const noBinds = new Map<string, Rule>([
      ['X-Y', { id: 'X-Y', text: '', severity: 'MUST', source: '', blackBox: true }],
    ]);
    expect(failureStatus(['X-Y'], noBinds, false, 'merchant')).toBe('failed');
  });

  it('reads binds from spec/rules.yaml for every rule', () => {
    expect(
      catalog.every((rule) => rule.binds === 'service' || rule.binds === 'merchant' || rule.binds === 'both'),
    ).toBe(true);
    expect([
      rules.get('ORDER-RES')!.binds,
      rules.get('CB-KEY-401')!.binds,
      rules.get('CRYPTO-ENVELOPE')!.binds,
    ]).toEqual(['service', 'merchant', 'both']);
  });
});

describe("judgeFailure: the other party's SHOULDs, and no rule at all", () => {
  it("names only the other party's MUST rules as why a failure warns", () => {
    expect(judgeFailure(['CB-NO-FALSE-ACK'], rules, false, 'service')).toEqual({ status: 'warning' });
    expect(judgeFailure(['CB-KEY-FIRST', 'CB-NO-FALSE-ACK'], rules, false, 'service')).toEqual({
      status: 'warning',
      why: 'CB-KEY-FIRST binds the merchant, not the service under test',
    });
  });

  it("fails under strict a SHOULD of the other party, and a failure under no rule, as it fails the target's", () => {
    expect(judgeFailure(['CB-NO-FALSE-ACK'], rules, true, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure([], rules, true, 'service')).toEqual({ status: 'failed' });
    expect(judgeFailure([], rules, false, 'service')).toEqual({ status: 'warning' });
  });
});

describe('skipped MUST checks: which count, and in which order', () => {
  it('counts a check with a MUST among other rules, and not one under rules outside the catalog only', () => {
    const results = [
      result('skipped', 'needs a', { rules: ['U-RETRY', 'CB-ONCE'] }),
      result('skipped', 'needs a', { rules: ['NO-SUCH-RULE'] }),
      result('failed', 'suite error', { fault: 'suite', rules: ['NO-SUCH-RULE', 'CB-ONCE'] }),
    ];
    expect(skipNotes(results, rules)).toEqual({ skippedMust: 1, notes: ['1 MUST check skipped: needs a'] });
    expect(notJudged(results, rules).count).toBe(2);
  });

  it('lists the most frequent reason first, whatever came first', () => {
    const results = [
      result('skipped', 'needs a'),
      result('skipped', 'needs b'),
      result('skipped', 'needs b'),
      result('skipped', 'needs c'),
      result('skipped', 'needs c'),
      result('skipped', 'needs c'),
    ];
    expect(skipNotes(results, rules).notes).toEqual([
      '3 MUST checks skipped: needs c',
      '2 MUST checks skipped: needs b',
      '1 MUST check skipped: needs a',
    ]);
  });

  it('drops counts and delivery numbers of any size, and groups a cause only when the message starts with it', () => {
    const notes = (message: string) => skipNotes([result('skipped', message)], rules).notes;
    expect(notes('12 judgements (seq 1…40): needs --probe-url')).toEqual(['1 MUST check skipped: needs --probe-url']);
    expect(notes('not judged: 30 s after delivery 12 the run ended')).toEqual([
      '1 MUST check skipped: not judged: … s after a delivery the run ended',
    ]);
    const later = 'needs x; not judged: y (the cause is reported once, by status, under ENV-CODE)';
    expect(notes(later)).toEqual([`1 MUST check skipped: ${later}`]);
  });
});
