import { ConfigError } from '../core/errors.js';
import type { CheckResult, Report, Status } from '../runner/types.js';

/** A failure of this run that the baseline did not have, and what the baseline said of that check. */
interface WorseResult {
  result: CheckResult;
  /** The baseline's status of the same check id, or `new` when the baseline has no such check. */
  was: Exclude<Status, 'failed'> | 'new';
}

/** How a run compares with a baseline report.json: only `worse` fails the run. */
export interface BaselineComparison {
  /** The baseline file as the user named it. */
  file: string;
  /** Failed now and in the baseline: listed, not fatal (gradual adoption). */
  known: CheckResult[];
  /** Failed now, and passed, warned, was skipped or did not exist in the baseline: fatal. */
  worse: WorseResult[];
  /** Failed in the baseline, passed now: the baseline can be renewed. */
  fixed: CheckResult[];
}

/** What a baseline needs of a report: each check's id and status. */
type BaselineResults = ReadonlyMap<string, Status>;

const STATUSES = new Set<string>(['passed', 'failed', 'warning', 'skipped']);

/** Reads a baseline report.json (any report this toolkit wrote); a malformed one is a ConfigError naming the file. */
export function parseBaseline(text: string, file: string): BaselineResults {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('bad-baseline', `--baseline ${file} is not JSON: ${(error as Error).message}`);
  }
  const results = (parsed as { results?: unknown } | null)?.results;
  if (!Array.isArray(results))
    throw new ConfigError('bad-baseline', `--baseline ${file} is not a report.json (no "results" list)`);
  const statuses = new Map<string, Status>();
  results.forEach((entry: { id?: unknown; status?: unknown } | null, i) => {
    if (typeof entry?.id !== 'string' || typeof entry.status !== 'string' || !STATUSES.has(entry.status)) {
      throw new ConfigError('bad-baseline', `--baseline ${file}: result #${i + 1} has no id or no valid status`);
    }
    statuses.set(entry.id, entry.status as Status);
  });
  return statuses;
}

/**
 * Compares a run with a baseline by check id. A failure the baseline also had is known; a failure
 * of a check that passed, warned, was skipped or is new is worse. Checks the baseline has and the
 * run lacks (another --suite or --shard) are neither.
 *
 * @example
 * const comparison = compareWithBaseline(report, parseBaseline(text, 'baseline.json'), 'baseline.json');
 * process.exitCode = comparison.worse.length > 0 ? 1 : 0;
 */
export function compareWithBaseline(report: Report, baseline: BaselineResults, file: string): BaselineComparison {
  const comparison: BaselineComparison = { file, known: [], worse: [], fixed: [] };
  for (const result of report.results) {
    const was = baseline.get(result.id);
    if (result.status === 'failed') {
      if (was === 'failed') comparison.known.push(result);
      else comparison.worse.push({ result, was: was ?? 'new' });
    } else if (was === 'failed' && result.status === 'passed') comparison.fixed.push(result);
  }
  return comparison;
}
