import { describe, expect, it } from 'vitest';
import { result } from '../../test/support/sample-report.js';
import type { CheckResult, Report } from '../runner/types.js';
import { mergeShards, targetDifferences } from './merge.js';

const target = { side: 'service', baseUrl: 'http://127.0.0.1:4010', userId: 1 };
const shard = (results: CheckResult[], over: Partial<Report> = {}): Report => ({
  target,
  summary: {
    passed: results.filter((r) => r.status === 'passed').length,
    failed: 0,
    warnings: 0,
    skipped: 0,
    durationMs: 100,
  },
  results,
  ...over,
});
const order = new Map([
  ['service/energy', ['a', 'b', 'c']],
  ['service/orders', ['d']],
]);

describe('merging shard reports', () => {
  it('puts results in suite and case order and counts the summary again', () => {
    const one = shard([result('service/energy/a/x', 'passed'), result('service/energy/c/x', 'failed')]);
    const two = shard([result('service/energy/b/x', 'passed'), result('service/orders/d/x', 'skipped')]);
    const merged = mergeShards(
      [
        { source: 'one', report: one },
        { source: 'two', report: two },
      ],
      order,
    );
    expect(merged.results.map((r) => r.id)).toEqual([
      'service/energy/a/x',
      'service/energy/b/x',
      'service/energy/c/x',
      'service/orders/d/x',
    ]);
    expect(merged.summary).toEqual({ passed: 2, failed: 1, warnings: 0, skipped: 1, durationMs: 200 });
    expect(merged.target).toEqual(target);
  });

  it('keeps the service side before the merchant side, as run writes them', () => {
    const one = shard([result('merchant/raw-body/a/x', 'passed'), result('service/energy/b/x', 'passed')]);
    const two = shard([result('service/energy/a/x', 'passed')]);
    const merged = mergeShards(
      [
        { source: 'two', report: two },
        { source: 'one', report: one },
      ],
      order,
    );
    expect(merged.results.map((r) => r.id)).toEqual([
      'service/energy/a/x',
      'service/energy/b/x',
      'merchant/raw-body/a/x',
    ]);
  });

  it('refuses reports of different targets and says which fields differ', () => {
    const one = shard([result('service/energy/a/x', 'passed')]);
    const two = shard([result('service/energy/b/x', 'passed')], { target: { ...target, userId: 2 } });
    expect(() =>
      mergeShards([
        { source: 'a/report.json', report: one },
        { source: 'b/report.json', report: two },
      ]),
    ).toThrow('the reports tested different targets: a/report.json and b/report.json differ in userId: 1 ≠ 2');
  });

  it('accepts embedded runs whose loopback ports differ, but not other differences', () => {
    const embedded = (port: number, padding: string) => ({
      embedded: true,
      service: { side: 'service', baseUrl: `http://127.0.0.1:${port}`, profile: { padding } },
    });
    expect(targetDifferences(embedded(1, 'pkcs1'), embedded(2, 'pkcs1'))).toEqual([]);
    expect(targetDifferences(embedded(1, 'pkcs1'), embedded(2, 'oaep'))).toEqual([
      'service.profile.padding: pkcs1 ≠ oaep',
    ]);
  });

  it('refuses a check that two shards both have', () => {
    const one = shard([result('service/energy/a/x', 'passed')]);
    expect(() =>
      mergeShards([
        { source: 'one', report: one },
        { source: 'again', report: one },
      ]),
    ).toThrow('check service/energy/a/x is in both one and again: the shards overlap (the same shard twice?)');
  });
});
