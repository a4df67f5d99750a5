import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../runner/engine.js';
import type { CheckResult, Report } from '../runner/types.js';
import { consoleReporter } from './console.js';

const result = (id: string, status: CheckResult['status']): CheckResult =>
  ({ id, status, severity: 'MUST', rules: ['ERR-401'], message: 'm' }) as unknown as CheckResult;
const report = (passed: number, failed: number): Report =>
  ({
    target: {},
    summary: { passed, failed, warnings: 0, skipped: 0, durationMs: 1500 },
    results: [],
  }) as unknown as Report;

describe('console reporter', () => {
  it('counts each run on its own when one reporter follows the service side, then the merchant side', () => {
    const lines: string[] = [];
    const on = consoleReporter((text) => lines.push(text));
    const events: RunEvent[] = [
      { kind: 'start', total: 2, side: 'service' },
      { kind: 'case', suite: 'service/errors', testCase: 'a', title: 'A' },
      { kind: 'result', result: result('service/errors/a/status', 'passed') },
      { kind: 'result', result: result('service/errors/a/error-body', 'failed') },
      { kind: 'done', report: report(1, 1) },
      { kind: 'start', total: 1, side: 'merchant' },
      { kind: 'case', suite: 'merchant/raw-body', testCase: 'b', title: 'B' },
      { kind: 'result', result: result('merchant/raw-body/b/answers', 'failed') },
      { kind: 'done', report: report(0, 1) },
    ];
    for (const event of events) on(event);
    expect(lines.join('')).toBe(
      [
        'service side: running 2 checks',
        'service/errors (0/2 checks done)',
        '  FAIL [2/2] service/errors/a/error-body [ERR-401]: m',
        'service side: 1 passed, 1 failed, 0 warnings, 0 skipped in 1.5 s',
        'merchant side: running 1 checks',
        'merchant/raw-body (0/1 checks done)',
        '  FAIL [1/1] merchant/raw-body/b/answers [ERR-401]: m',
        'merchant side: 0 passed, 1 failed, 0 warnings, 0 skipped in 1.5 s',
        '',
      ].join('\n'),
    );
  });
});
