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

describe('stoppedAnswering: the input shown and the trail kept as evidence', () => {
  const bodies = (result: { evidence?: unknown }) =>
    (result.evidence as { exchanges: Array<{ request: { body: string } }> }).exchanges.map((e) => e.request.body);

  it('keeps the three exchanges before the first refusal and the refusal itself, not the earlier ones', () => {
    const trail: Sent[] = ['A1', 'A2', 'A3', 'A4', 'A5'].map((body) => ({
      suite: 'm',
      case: 'ok',
      exchange: post(body, { response: { status: 200, headers: {}, body: '{"errCode":0}' } }),
    }));
    trail.push({ suite: 'm', case: 'later', exchange: refused }, { suite: 'm', case: 'last', exchange: refused });
    const { result, after } = stoppedAnswering(trail, 'merchant', CUT, { suite: 'm', case: 'last' }, caseRules, rules);
    expect(after).toBe('m/ok');
    expect(bodies(result)).toEqual(['A3', 'A4', 'A5', 'BBBB']);
    expect(result.message).toContain(
      'the last input it received: POST http://127.0.0.1:1/callback with body "A5" (answered HTTP 200)',
    );
  });

  it('without the refusal in the trail, blames the last exchange and shows the end of the trail', () => {
    const trail: Sent[] = [
      { suite: 'm', case: 'ok', exchange: answered },
      { suite: 'm', case: 'raw', exchange: killer },
    ];
    const { result, after } = stoppedAnswering(trail, 'merchant', CUT, { suite: 'm', case: 'next' }, caseRules, rules);
    expect(after).toBe('m/raw');
    expect(bodies(result)).toEqual(['AAAA', 'this is not Base64 at all']);
  });

  it('shows a request the runner encrypted without its body, and no trail at all as none recorded', () => {
    const plain = {
      ...post('c2VhbGVk', { response: { status: 502, headers: {}, body: '' } }),
      request: { method: 'POST', url: 'http://127.0.0.1:1/order', headers: {}, body: 'c2VhbGVk', plain: '{"a":1}' },
    };
    const shown = stoppedAnswering(
      [{ suite: 's', case: 'c', exchange: plain }],
      'service',
      CUT,
      { suite: 's', case: 'c' },
      () => [],
      rules,
    );
    expect(shown.result.message).toContain(
      'the last input it received: POST http://127.0.0.1:1/order (answered HTTP 502)',
    );
    const none = stoppedAnswering([], 'service', CUT, { suite: 's', case: 'first' }, () => ['ENERGY-RES'], rules);
    expect(none.after).toBe('s/first');
    expect(none.result).toMatchObject({ suite: 's', case: 'first', rules: ['ENERGY-RES'] });
    expect(none.result.message).toContain('the last input it received: none recorded;');
  });

  it('stopped during the set-up: blamed on the first case, naming the set-up requests, no evidence', () => {
    const { result, after } = stoppedAnswering([], 'merchant', CUT, { suite: 'm', case: 'raw' }, caseRules, rules, [
      'GET http://127.0.0.1:1/probe',
      'POST http://127.0.0.1:1/callback',
    ]);
    expect(after).toBe('m/raw');
    expect(result).toEqual({
      id: 'target-stopped',
      suite: 'm',
      case: 'raw',
      rules: ['CB-AVAILABLE', 'CB-RAW-BODY'],
      status: 'failed',
      title: "The merchant keeps answering after the run's set-up (the control API probe and pre-flight)",
      message: `the merchant stopped answering before the first case, during the run's set-up (the control API probe and pre-flight) (${CUT}); the last requests the run sent it: GET http://127.0.0.1:1/probe; POST http://127.0.0.1:1/callback; no case was run`,
    });
    const service = stoppedAnswering([], 'service', CUT, { suite: 's', case: 'c' }, () => [], rules, []);
    expect(service.result.title).toBe(
      "The service keeps answering after the run's set-up (the control API probe and pre-flight)",
    );
    expect(service.result.rules).toEqual([]);
    expect(service.result.message).toContain('the last requests the run sent it: none recorded; no case was run');
  });

  it("titles a stop after a case's input by the side", () => {
    const trail: Sent[] = [{ suite: 's', case: 'c', exchange: killer }];
    const service = stoppedAnswering(trail, 'service', CUT, { suite: 's', case: 'c' }, () => [], rules);
    expect(service.result.title).toBe("The service keeps answering after this case's input");
    const merchant = stoppedAnswering(trail, 'merchant', CUT, { suite: 's', case: 'c' }, () => [], rules);
    expect(merchant.result).toMatchObject({
      id: 'target-stopped',
      title: "The merchant keeps answering after this case's input",
      rules: ['CB-AVAILABLE'],
    });
  });
});

describe('stoppedAnswering: a refusal at the start of the trail', () => {
  it('blames the running case when the first exchange of the trail was already refused', () => {
    const trail: Sent[] = [{ suite: 'm', case: 'raw', exchange: refused }];
    const { result, after } = stoppedAnswering(
      trail,
      'merchant',
      CUT,
      { suite: 'm', case: 'garbage' },
      (suite, id, next) => [...caseRules(suite, id, next), 'NO-SUCH-RULE'],
      rules,
    );
    expect(after).toBe('m/garbage');
    expect(result).toMatchObject({ case: 'garbage', rules: ['CB-AVAILABLE', 'CB-ONCE'] });
    expect(result.message).toContain('the last input it received: none recorded;');
  });
});
