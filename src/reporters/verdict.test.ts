import { describe, expect, it } from 'vitest';
import { sampleReport } from '../../test/support/sample-report.js';
import type { Status } from '../runner/types.js';
import { ruleStatus, targetSides, verdictOf } from './verdict.js';

const of = (...statuses: Status[]) => ruleStatus(statuses.map((status) => ({ status })));

describe('a rule status over its checks', () => {
  it('is passed for six passed and one skipped check', () => {
    expect(of('passed', 'passed', 'passed', 'passed', 'passed', 'passed', 'skipped')).toBe('passed');
  });

  it('is skipped only when every check was skipped', () => {
    expect(of('skipped', 'skipped')).toBe('skipped');
  });

  it('is failed when any check failed, before warnings and passes', () => {
    expect(of('passed', 'warning', 'failed', 'skipped')).toBe('failed');
    expect(of('passed', 'warning', 'skipped')).toBe('warning');
  });
});

describe('the verdict', () => {
  it('fails a report with a failed check and says how many', () => {
    expect(verdictOf(sampleReport())).toMatchObject({
      passed: false,
      label: 'FAILED',
      text: 'FAILED: 1 check(s) failed',
    });
  });

  it('says COULD NOT JUDGE when a check failed through no fault of the target, even against a baseline', () => {
    const report = sampleReport();
    const faulted = {
      ...report.results[0]!,
      status: 'failed' as const,
      fault: 'setup' as const,
      message: 'setup error: the probe never answered',
    };
    report.results = [...report.results, faulted];
    expect(verdictOf(report, { file: 'b.json', known: [], worse: [], fixed: [] })).toMatchObject({
      passed: false,
      label: 'COULD NOT JUDGE',
      text: 'COULD NOT JUDGE: 1 check(s) could not be judged through no fault of the target (setup error): setup error: the probe never answered',
    });
  });

  it('passes against a baseline that knows every failure', () => {
    const report = sampleReport();
    const known = report.results.filter((r) => r.status === 'failed');
    expect(verdictOf(report, { file: 'b.json', known, worse: [], fixed: [] })).toMatchObject({
      passed: true,
      label: 'PASSED',
    });
  });
});

describe("the target in a person's words", () => {
  it('shows one row per side of an embedded run, with the card URL only when it differs', () => {
    const { sides, general } = targetSides({
      embedded: true,
      service: {
        side: 'service',
        baseUrl: 'http://a',
        cardBaseUrl: 'http://a',
        userId: 1,
        profile: { padding: 'pkcs1' },
      },
      merchant: { side: 'merchant', callbackUrl: 'http://b/cb', probeUrl: null },
    });
    expect(sides).toEqual([
      { side: 'service', address: ['baseUrl http://a'], profile: 'padding pkcs1', other: ['userId 1'] },
      { side: 'merchant', address: ['callbackUrl http://b/cb'], profile: '', other: [] },
    ]);
    expect(general).toEqual([['embedded', 'true']]);
  });
});
