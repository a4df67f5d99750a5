import { describe, expect, it } from 'vitest';
import { result } from '../../test/support/sample-report.js';
import type { CheckResult, Report } from '../runner/types.js';
import { failureDigest } from './console.js';
import { renderHtml } from './html.js';
import { withReplay } from './replay.js';
import { groupFailures, groupHeading } from './root-causes.js';

const PLUS = 'QUJD+REVG/R0hJ';
const NO_PLUS = 'QUJDREVGR0hJ';

/** A delivery to the merchant as the runner records it, with its answer. */
function delivery(body: string, status: number): Record<string, unknown> {
  return {
    exchanges: [
      {
        request: { method: 'POST', url: 'http://127.0.0.1:9/callback', headers: {}, body },
        response: {
          status,
          headers: {},
          body: status === 200 ? '{"errCode":0}' : '{"errCode":4001,"message":"cannot process"}',
        },
      },
    ],
  };
}

function report(results: CheckResult[], over: Partial<Report> = {}): Report {
  const count = (s: string) => results.filter((r) => r.status === s).length;
  return {
    target: { side: 'merchant', callbackUrl: 'http://127.0.0.1:9/callback' },
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
      durationMs: 5,
    },
    results,
    ...over,
  };
}

/** A form-reading receiver: every valid callback with a '+' refused with HTTP 400 and never processed. */
function formReader(n: number): CheckResult[] {
  return Array.from({ length: n }, (_, i) => [
    result(`merchant/idempotency/case-${i}/answers`, 'failed', {
      rules: ['CB-ERRCODE'],
      message: `expected HTTP 200, got 400: {"errCode":4001,"message":"cannot process"} (errCode 4001) (with both field spellings)`,
      evidence: delivery(PLUS, 400),
    }),
    result(`merchant/idempotency/case-${i}/processed`, 'failed', {
      rules: ['CB-ONCE'],
      message: `expected ${i + 1} processing(s), the probe shows 0`,
      evidence: delivery(PLUS, 400),
    }),
  ]).flat();
}

describe('failures grouped by root cause', () => {
  it('names one cause for a receiver that reads the body as a form, when a callback without a + was acknowledged', () => {
    const groups = groupFailures(
      report([
        ...formReader(20),
        result('merchant/raw-body/plus-free/answers', 'passed', { evidence: delivery(NO_PLUS, 200) }),
      ]),
    );
    expect(groups).toHaveLength(1);
    expect(groupHeading(groups[0]!)).toBe(
      "40 failures share one cause: the body was read as a form field (a '+' in the Base64 became a space): read the raw request body as the Base64 text, before any form or JSON parser (CB-RAW-BODY)",
    );
    expect(groups[0]!.rules).toEqual(['CB-ERRCODE', 'CB-ONCE']);
    expect(groups[0]!.proof).toMatch(/each of the 40 refused callbacks shown holds a '\+'/);
  });

  it("takes pre-flight's proof of a form reader", () => {
    const preflight = {
      verdict: 'warning' as const,
      steps: [
        {
          what: "a valid callback whose Base64 holds no '+'",
          observed: 'HTTP 200 {"errCode":0}',
          conclusion: 'it reads the body as a form (CB-RAW-BODY), a finding the suites report',
          level: 'warning' as const,
        },
      ],
    };
    const groups = groupFailures(report(formReader(3), { preflight }));
    expect(groups.map((g) => [g.key, g.results.length])).toEqual([['form-body', 6]]);
    expect(groups[0]!.proof).toBe('pre-flight: a valid callback whose Base64 holds no \'+\': HTTP 200 {"errCode":0}');
  });

  it('does not claim a form reader when a refused callback held no + (a receiver that refuses everything)', () => {
    const results = [
      ...formReader(3),
      result('merchant/raw-body/x/answers', 'failed', {
        message: 'expected HTTP 200, got 400: {"errCode":4001}',
        evidence: delivery(NO_PLUS, 400),
      }),
      result('merchant/raw-body/ok/answers', 'passed', { evidence: delivery(NO_PLUS, 200) }),
    ];
    const groups = groupFailures(report(results));
    expect(groups.some((g) => g.key === 'form-body')).toBe(false);
    expect(groups.every((g) => g.fix === undefined)).toBe(true);
    // Still one symptom each: the refusals together, the empty probe together.
    expect(groups.map((g) => [g.key, g.results.length])).toEqual([
      ['family:expected HTTP 200, got 400: {…}', 4],
      ['family:expected N processing(s), the probe shows 0', 3],
    ]);
    expect(groupHeading(groups[0]!)).toBe('4 failures show one symptom: expected HTTP 200, got 400: {…}');
  });

  it("groups by the finding's cause, keeps different messages apart, and shows a group of one as the failure itself", () => {
    const results = [
      result('service/a/one/envelope', 'failed', {
        cause: 'undecryptable-answer',
        message: 'data does not decrypt: bad padding',
      }),
      result('service/a/two/envelope', 'failed', {
        cause: 'undecryptable-answer',
        message: 'data does not decrypt: wrong length',
      }),
      result('service/b/three/status', 'failed', { message: 'expected HTTP 401, got 200' }),
      result('service/b/four/error-body', 'failed', { message: 'code is "x", expected an integer' }),
    ];
    const groups = groupFailures(report(results, { target: { side: 'service' } }));
    expect(groups.map((g) => g.results.length)).toEqual([2, 1, 1]);
    expect(groupHeading(groups[0]!)).toBe(
      "2 failures share one cause: the answers' data does not decrypt with the merchant's key",
    );
    expect(groupHeading(groups[1]!)).toBe('service/b/three/status: expected HTTP 401, got 200');
  });

  it("prints a digest with the replay command of a group's first failure, and no secret", () => {
    const replayed = withReplay(
      report(formReader(2), {
        preflight: {
          verdict: 'warning',
          steps: [
            { what: 'w', observed: 'o', conclusion: 'it reads the body as a form (CB-RAW-BODY)', level: 'warning' },
          ],
        },
      }),
      'wallet-conformance verify merchant --callback-url http://127.0.0.1:9/callback --api-key "$WALLET_API_KEY"',
    );
    const digest = failureDigest(replayed);
    expect(digest.split('\n').slice(0, 4)).toEqual([
      'what to fix first (4 failures in 1 group):',
      "  4 failures share one cause: the body was read as a form field (a '+' in the Base64 became a space): read the raw request body as the Base64 text, before any form or JSON parser (CB-RAW-BODY) [CB-ERRCODE, CB-ONCE]",
      '    how it is known: pre-flight: w: o',
      '    e.g. merchant/idempotency/case-0/answers: expected HTTP 200, got 400: {"errCode":4001,"message":"cannot process"} (errCode 4001) (with both field spellings)',
    ]);
    expect(digest).toContain(
      '    replay: wallet-conformance verify merchant --callback-url http://127.0.0.1:9/callback --api-key "$WALLET_API_KEY" --case merchant/idempotency/case-0\n',
    );
  });

  it('report.html: the failures section is the first section after the title and the pre-flight diagnosis', () => {
    const preflight = {
      verdict: 'warning' as const,
      steps: [{ what: 'w', observed: 'o', conclusion: 'c', level: 'warning' as const }],
    };
    const html = renderHtml(
      withReplay(
        report([...formReader(2), result('merchant/x/y/z', 'passed')], { preflight }),
        'wallet-conformance verify merchant',
      ),
    );
    const sections = [...html.matchAll(/<h2 id="(\w+)"/g)].map((m) => m[1]);
    expect(sections.slice(0, 3)).toEqual(['preflight', 'failed', 'tested']);
    expect(html).toContain(
      'replay just this case: <code>wallet-conformance verify merchant --case merchant/idempotency/case-0</code>',
    );
  });
});
