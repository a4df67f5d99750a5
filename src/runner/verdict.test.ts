import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import type { CheckResult } from './types.js';
import { notJudged, skipNotes } from './verdict.js';

const rules = new Map(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => [rule.id, rule]));
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
