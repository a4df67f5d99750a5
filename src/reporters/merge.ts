import { ConfigError } from '../core/errors.js';
import type { CheckResult, Report } from '../runner/types.js';
import { describeTarget } from './verdict.js';

/** One shard's report and where it came from (named in every error). */
export interface ShardReport {
  source: string;
  report: Report;
}

/** The order suites and their cases run in: suite name → its case ids in order. */
type CaseOrder = ReadonlyMap<string, readonly string[]>;

// The embedded run (`run`) starts its servers on free loopback ports: every shard has its own.
const EPHEMERAL = /(^|\.)(baseUrl|cardBaseUrl|callbackUrl|probeUrl)$/;

function comparableTarget(target: Record<string, unknown>): Map<string, string> {
  const rows = describeTarget(target);
  return new Map(target.embedded === true ? rows.filter(([key]) => !EPHEMERAL.test(key)) : rows);
}

/** The fields in which two targets differ, as `key: a ≠ b`. */
export function targetDifferences(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const left = comparableTarget(a);
  const right = comparableTarget(b);
  const keys = [...new Set([...left.keys(), ...right.keys()])].sort();
  return keys
    .filter((key) => left.get(key) !== right.get(key))
    .map((key) => `${key}: ${left.get(key) ?? '(absent)'} ≠ ${right.get(key) ?? '(absent)'}`);
}

/**
 * Joins the reports of `--shard i/n` runs into one: the targets must agree (except the loopback
 * ports of embedded runs), no check may appear twice, the results come in suite and case order
 * (`order`: the suites as they run; sides in the order the first shard has them), and the summary is
 * counted again. The run time is the sum of the shards' times.
 *
 * @example
 * const merged = mergeShards([{ source: 'shard-1', report: a }, { source: 'shard-2', report: b }], order);
 */
export function mergeShards(shards: readonly ShardReport[], order: CaseOrder = new Map()): Report {
  const [first] = shards;
  if (!first) throw new ConfigError('no-reports', 'report merge needs at least one report directory');
  for (const shard of shards.slice(1)) {
    const differences = targetDifferences(first.report.target, shard.report.target);
    if (differences.length > 0)
      throw new ConfigError(
        'targets-differ',
        `the reports tested different targets: ${first.source} and ${shard.source} differ in ${differences.join('; ')}`,
      );
  }
  const seen = new Map<string, string>();
  const all: Array<{ result: CheckResult; position: number }> = [];
  for (const shard of shards) {
    for (const result of shard.report.results) {
      const other = seen.get(result.id);
      if (other !== undefined)
        throw new ConfigError(
          'shards-overlap',
          `check ${result.id} is in both ${other} and ${shard.source}: the shards overlap (the same shard twice?)`,
        );
      seen.set(result.id, shard.source);
      all.push({ result, position: all.length });
    }
  }
  const sides: string[] = [];
  for (const { result } of all) {
    const side = result.suite.split('/')[0] ?? '';
    if (!sides.includes(side)) sides.push(side);
  }
  const suiteNames = [...order.keys()];
  const rank = (result: CheckResult): [number, number, number] => {
    const suite = suiteNames.indexOf(result.suite);
    const cases = order.get(result.suite) ?? [];
    const testCase = cases.indexOf(result.case);
    return [
      sides.indexOf(result.suite.split('/')[0] ?? ''),
      suite < 0 ? suiteNames.length : suite,
      testCase < 0 ? cases.length : testCase,
    ];
  };
  const ranked = all.map((entry) => ({ ...entry, rank: rank(entry.result) }));
  ranked.sort(
    (a, b) =>
      a.rank[0] - b.rank[0] ||
      a.rank[1] - b.rank[1] ||
      (a.rank[1] === suiteNames.length ? a.result.suite.localeCompare(b.result.suite) : 0) ||
      a.rank[2] - b.rank[2] ||
      a.position - b.position,
  );
  const results = ranked.map((entry) => entry.result);
  const count = (status: CheckResult['status']) => results.filter((r) => r.status === status).length;
  // Fields newer reports carry (skipped MUST checks, notes): kept when the shards have them.
  const extra = (shard: ShardReport) => ({
    skippedMust: (shard.report.summary as { skippedMust?: number }).skippedMust,
    notes: (shard.report as { notes?: string[] }).notes,
  });
  const skippedMust = shards.reduce((sum, shard) => sum + (extra(shard).skippedMust ?? 0), 0);
  const notes = [...new Set(shards.flatMap((shard) => extra(shard).notes ?? []))];
  return {
    target: first.report.target,
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
      durationMs: shards.reduce((sum, shard) => sum + shard.report.summary.durationMs, 0),
      ...(shards.some((shard) => extra(shard).skippedMust !== undefined) ? { skippedMust } : {}),
    },
    results,
    ...(notes.length > 0 ? { notes } : {}),
  };
}
