import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import type { Exchange } from './observation.js';
import { stoppedAnswering, type Sent } from './target-stopped.js';

const rules = new Map(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => [rule.id, rule]));
const CUT = 'http://127.0.0.1:1 stopped answering: ECONNREFUSED (it answered earlier in the run)';
const post = (body: string, outcome: Partial<Exchange>): Exchange => ({
  request: { method: 'POST', url: 'http://127.0.0.1:1/callback', headers: {}, body },
  ...outcome,
});
const answered = post('AAAA', { response: { status: 200, headers: {}, body: '{"errCode":0}' } });
const killer = post('this is not Base64 at all', {
  error: 'POST http://127.0.0.1:1/callback: ECONNRESET socket hang up',
});
const refused = post('BBBB', { error: CUT });
const RULES: Record<string, string[]> = {
  'm/raw': ['CB-RAW-BODY', 'CB-AVAILABLE'],
  'm/garbage': ['CB-NO-FALSE-ACK', 'CB-AVAILABLE'],
  'm/next': ['CB-ONCE'],
};
const caseRules = (suite: string, id: string, next = false) =>
  next ? RULES['m/next']! : (RULES[`${suite}/${id}`] ?? []);

describe('stoppedAnswering: a target that fell over on what the run sent', () => {
  it("blames the case of the last input before the first refusal, under CB-AVAILABLE and that case's MUST rules, with the input as evidence", () => {
    const trail: Sent[] = [
      { suite: 'm', case: 'ok', exchange: answered },
      { suite: 'm', case: 'raw', exchange: killer },
      { suite: 'm', case: 'later', exchange: refused },
    ];
    const { result, after } = stoppedAnswering(trail, 'merchant', CUT, { suite: 'm', case: 'later' }, caseRules, rules);
    expect(after).toBe('m/raw');
    expect(result).toMatchObject({ suite: 'm', case: 'raw', status: 'failed', rules: ['CB-AVAILABLE', 'CB-RAW-BODY'] });
    expect(result.message).toBe(
      `the merchant stopped answering after case m/raw (${CUT}); the last input it received: POST http://127.0.0.1:1/callback with body "this is not Base64 at all" (no answer: POST http://127.0.0.1:1/callback: ECONNRESET socket hang up); the cases left were not run`,
    );
    expect(
      (result.evidence as { exchanges: Array<{ request: { body: string } }> }).exchanges.map((e) => e.request.body),
    ).toEqual(['AAAA', 'this is not Base64 at all', 'BBBB']);
  });

  it('fails even when the case names only SHOULD rules, naming the MUST rules of the next case it can no longer pass', () => {
    const trail: Sent[] = [
      { suite: 'm', case: 'garbage', exchange: killer },
      { suite: 'm', case: 'garbage', exchange: refused },
    ];
    const { result } = stoppedAnswering(trail, 'merchant', CUT, { suite: 'm', case: 'garbage' }, caseRules, rules);
    expect(result).toMatchObject({ status: 'failed', rules: ['CB-AVAILABLE', 'CB-ONCE'] });
  });

  it('a service is judged under the MUST rules of the case alone (no CB-AVAILABLE)', () => {
    const trail: Sent[] = [
      { suite: 's', case: 'raw', exchange: killer },
      { suite: 's', case: 'raw', exchange: refused },
    ];
    const { result } = stoppedAnswering(
      trail,
      'service',
      CUT,
      { suite: 's', case: 'raw' },
      (_suite, _id, next) => (next ? [] : ['ENERGY-RES', 'U-CRYPTO']),
      rules,
    );
    expect(result).toMatchObject({ status: 'failed', rules: ['ENERGY-RES'] });
    expect(result.message).toMatch(/^the service stopped answering after case s\/raw/);
  });
});
