import { describe, expect, it } from 'vitest';
import { result } from '../../test/support/sample-report.js';
import type { Report } from '../runner/types.js';
import { compareWithBaseline, parseBaseline } from './baseline.js';

const report = (...results: Report['results']): Report => ({
  target: {},
  summary: { passed: 0, failed: 0, warnings: 0, skipped: 0, durationMs: 0 },
  results,
});
const baseline = (entries: Record<string, string>) =>
  parseBaseline(
    JSON.stringify({ results: Object.entries(entries).map(([id, status]) => ({ id, status })) }),
    'baseline.json',
  );

describe('comparing a run with a baseline', () => {
  it('lists a failure the baseline also had as known, not worse', () => {
    const comparison = compareWithBaseline(
      report(result('s/x/a/c', 'failed')),
      baseline({ 's/x/a/c': 'failed' }),
      'baseline.json',
    );
    expect(comparison.known.map((r) => r.id)).toEqual(['s/x/a/c']);
    expect(comparison.worse).toEqual([]);
  });

  it('counts a check that passed in the baseline and fails now as worse', () => {
    const comparison = compareWithBaseline(
      report(result('s/x/a/c', 'failed')),
      baseline({ 's/x/a/c': 'passed' }),
      'baseline.json',
    );
    expect(comparison.worse.map((w) => [w.result.id, w.was])).toEqual([['s/x/a/c', 'passed']]);
  });

  it('counts a failing check the baseline does not have as worse (new)', () => {
    const comparison = compareWithBaseline(
      report(result('s/x/new/c', 'failed')),
      baseline({ 's/x/a/c': 'failed' }),
      'baseline.json',
    );
    expect(comparison.worse.map((w) => [w.result.id, w.was])).toEqual([['s/x/new/c', 'new']]);
  });

  it('counts a failure of a check the baseline skipped or warned on as worse', () => {
    const comparison = compareWithBaseline(
      report(result('s/x/a/c', 'failed'), result('s/x/b/c', 'failed')),
      baseline({ 's/x/a/c': 'skipped', 's/x/b/c': 'warning' }),
      'b',
    );
    expect(comparison.worse.map((w) => w.was)).toEqual(['skipped', 'warning']);
  });

  it('lists a baseline failure that passes now as fixed, and ignores checks this run did not have', () => {
    const comparison = compareWithBaseline(
      report(result('s/x/a/c', 'passed')),
      baseline({ 's/x/a/c': 'failed', 's/x/gone/c': 'failed' }),
      'b',
    );
    expect(comparison.fixed.map((r) => r.id)).toEqual(['s/x/a/c']);
    expect([...comparison.known, ...comparison.worse]).toEqual([]);
  });

  it('refuses a baseline that is not a report.json with one line naming the file', () => {
    expect(() => parseBaseline('{"summary":{}}', 'old.json')).toThrow(
      '--baseline old.json is not a report.json (no "results" list)',
    );
    expect(() => parseBaseline('nope', 'old.json')).toThrow(/^--baseline old\.json is not JSON/);
    expect(() => parseBaseline('{"results":[{"id":"a","status":"green"}]}', 'old.json')).toThrow(
      '--baseline old.json: result #1 has no id or no valid status',
    );
  });
});
