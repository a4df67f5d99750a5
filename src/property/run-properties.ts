import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import type { Rule } from '../core/rules.js';
import { stringifyExact } from '../core/exact-json.js';
import { assumptionsOf, failureStatus, skipNotes, type CheckResult, type Report, type Status } from '../runner/api.js';
import { NO_EXAMPLE_STORE, type ExampleStore } from './example-store.js';
import type { Property, Verdict, Warning } from './property.js';

/** How a generated run goes: cases per property, the seed, where failing examples are kept. */
export interface GenerateOptions {
  /** Cases per property (`--generate N`); 0 runs nothing. */
  numRuns: number;
  /** `--seed S`: the same seed (and target) replays the same cases and the same shrinking. */
  seed?: number;
  rules: Map<string, Rule>;
  strict?: boolean;
  store?: ExampleStore;
  /** Wall-clock budget per property (default 10 minutes): generation stops there and says so. */
  timeLimitMs?: number;
  onResult?(result: CheckResult): void;
}

/** A fresh seed for fast-check (a 31-bit integer, printable as `--seed S`). */
export function newSeed(): number {
  return randomInt(1, 2 ** 31 - 1);
}

/** The `--seed` line that replays a run. */
function replayLine(numRuns: number, seed: number): string {
  return `--generate ${numRuns} --seed ${seed}`;
}

type AnyProperty = Property<unknown>;

/**
 * Checks each property over `numRuns` generated cases (stored failing examples first), shrinks a
 * failure to a minimal case, and returns one CheckResult per property (suite `generated/<side>`).
 */
export async function checkProperties(
  side: 'service' | 'merchant',
  properties: AnyProperty[],
  options: GenerateOptions,
): Promise<CheckResult[]> {
  const seed = options.seed ?? newSeed();
  const results: CheckResult[] = [];
  for (const property of properties)
    results.push(emit(options, await checkProperty({ side, property, options, seed })));
  return results;
}

/** One property's check: what it is checked with and the parts of its result every outcome shares. */
interface PropertyCheck {
  side: 'service' | 'merchant';
  property: AnyProperty;
  options: GenerateOptions;
  seed: number;
}

type Failure = { value: unknown; verdict: Extract<Verdict, { ok: false }> };

/** What the generated cases of one property showed: how each held, the last failure, the first warning. */
class Tally {
  judged = 0;
  readonly tags = new Map<string, number>();
  lastFailure: Failure | undefined;
  firstWarning: { value: unknown; warning: Warning } | undefined;
  warnings = 0;

  constructor(private readonly check: PropertyCheck) {}

  /** Judges one generated case: true when it holds (fast-check shrinks a false). */
  async judge(value: unknown): Promise<boolean> {
    const { property, options, side } = this.check;
    this.judged++;
    const verdict = await property.judge(value);
    if (
      verdict.ok &&
      verdict.warning &&
      failureStatus(verdict.warning.rules, options.rules, options.strict ?? false, side) === 'failed'
    ) {
      // --strict: another reading of an open point fails, and is shrunk like any failure.
      this.lastFailure = { value, verdict: { ok: false, ...verdict.warning } };
      return false;
    }
    if (!verdict.ok) {
      this.lastFailure = { value, verdict };
      return false;
    }
    if (!this.lastFailure) {
      this.tags.set(verdict.tag ?? 'held', (this.tags.get(verdict.tag ?? 'held') ?? 0) + 1);
      if (verdict.warning) {
        this.warnings++;
        this.firstWarning ??= { value, warning: verdict.warning };
      }
    }
    return true;
  }

  /** How the cases held, most frequent first: `12 accepted, 3 refused`. */
  counted(): string {
    return [...this.tags]
      .sort((one, other) => other[1] - one[1])
      .map(([tag, n]) => `${n} ${tag}`)
      .join(', ');
  }
}

type RunDetails = fc.RunDetails<unknown[]>;

/** What every result of a property's check carries. */
interface Outcome {
  base: Pick<CheckResult, 'id' | 'suite' | 'case' | 'title' | 'rules'>;
  details: RunDetails;
  tally: Tally;
  stored: ReturnType<ExampleStore['load']>;
  durationMs: number;
  replay: string;
  /** What the property put back after its run, when it says. */
  finished: { restored?: string[] };
}

async function checkProperty(check: PropertyCheck): Promise<CheckResult> {
  const { side, property, options, seed } = check;
  const store = options.store ?? NO_EXAMPLE_STORE;
  const suite = `generated/${side}`;
  const base = {
    id: `${suite}/${property.id}`,
    suite,
    case: property.id,
    title: property.title,
    rules: property.rules,
  };
  if (property.skip) return { ...base, status: 'skipped', message: property.skip };
  const started = performance.now();
  const stored = store.load(side, property.id);
  const tally = new Tally(check);
  const details = await fc.check(
    fc.asyncProperty(property.arbitrary, (value) => tally.judge(value)),
    {
      numRuns: options.numRuns,
      seed,
      examples: [...stored.map((example) => [example.value]), ...(property.examples ?? []).map((value) => [value])],
      interruptAfterTimeLimit: options.timeLimitMs ?? 600_000,
      markInterruptAsFailure: false,
    },
  );
  // The minimal failing case is named once, before the state is put back (explain may send again).
  if (details.failed && tally.lastFailure && details.counterexample && property.explain)
    tally.lastFailure = await explain(property, details, tally.lastFailure);
  const restored = property.finish
    ? await property.finish().catch((error: unknown) => [`could not put the state back: ${(error as Error).message}`])
    : [];
  const outcome: Outcome = {
    base,
    details,
    tally,
    stored,
    durationMs: Math.round(performance.now() - started),
    replay: replayLine(options.numRuns, seed),
    finished: restored.length ? { restored } : {},
  };
  if (details.failed && tally.lastFailure && details.counterexample)
    return failedResult(check, outcome, tally.lastFailure, store);
  if (details.failed) {
    // The judge itself threw: a fault of the toolkit, reported rather than hidden.
    const error =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    return {
      ...base,
      status: 'failed',
      durationMs: outcome.durationMs,
      message: `the toolkit could not judge a generated case: ${error} (replay with ${outcome.replay})`,
      evidence: { generated: { seed, replay: outcome.replay, ...outcome.finished } },
    };
  }
  store.save(side, property.id, []);
  return heldResult(check, outcome);
}

/** The minimal failing case with the property's own naming of it (under other readings). */
async function explain(property: AnyProperty, details: RunDetails, failure: Failure): Promise<Failure> {
  const minimal = details.counterexample![0];
  return {
    value: minimal,
    verdict: await property.explain!(minimal, failure.verdict).catch((error: unknown) => ({
      ...failure.verdict,
      message: `${failure.verdict.message} (naming it under other readings failed: ${(error as Error).message})`,
    })),
  };
}

/** A property that failed: the minimal case, kept in the store to be replayed first next time. */
function failedResult(check: PropertyCheck, outcome: Outcome, failure: Failure, store: ExampleStore): CheckResult {
  const { side, property, options, seed } = check;
  const { details, stored, replay } = outcome;
  const minimal = details.counterexample![0];
  const verdict = failure.verdict;
  const shown = property.show ? property.show(minimal) : minimal;
  const status: Status = failureStatus(verdict.rules, options.rules, options.strict ?? false, side);
  const fromStore = stored.some((example) => stringifyExact(example.value) === stringifyExact(minimal));
  store.save(side, property.id, [
    ...stored,
    {
      value: minimal,
      seed,
      ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
      rules: verdict.rules,
      foundAt: new Date().toISOString(),
    },
  ]);
  const assumptions = assumptionsOf(verdict.rules, options.rules);
  return {
    ...outcome.base,
    rules: verdict.rules,
    status,
    durationMs: outcome.durationMs,
    message: `${verdict.message} (minimal case after ${details.numShrinks} shrink${details.numShrinks === 1 ? '' : 's'}${fromStore ? ', a stored failing example' : ''}: ${stringifyExact(shown)}; replay with ${replay})`,
    ...(assumptions.length ? { assumptions } : {}),
    evidence: {
      ...verdict.evidence,
      generated: {
        seed,
        replay,
        case: shown,
        shrinks: details.numShrinks,
        casesBeforeFailure: details.numRuns,
        path: details.counterexamplePath ?? null,
        storedExamples: stored.length,
        ...outcome.finished,
      },
    },
  };
}

/** A property that held: passed, or a warning when some cases held only under another legal reading. */
function heldResult(check: PropertyCheck, outcome: Outcome): CheckResult {
  const { property, options, seed } = check;
  const { details, tally, stored, replay, finished, durationMs } = outcome;
  const counted = tally.counted();
  const stoppedEarly = details.interrupted
    ? ` (stopped by the time limit after ${details.numRuns} of ${options.numRuns})`
    : '';
  const storedNote = stored.length
    ? `, ${stored.length} stored example${stored.length === 1 ? '' : 's'} replayed first and now passing`
    : '';
  const { judged, warnings, firstWarning } = tally;
  if (firstWarning) {
    // No failure, but some cases held only under another legal reading of an open point: a warning, with the first such case.
    const { value, warning } = firstWarning;
    const shown = property.show ? property.show(value) : value;
    const assumptions = assumptionsOf(warning.rules, options.rules);
    return {
      ...outcome.base,
      rules: warning.rules,
      status: 'warning',
      durationMs,
      message: `${details.numRuns} cases${counted ? ` (${counted})` : ''}${stoppedEarly}${storedNote}, no failure; ${warnings} held under another legal reading than the property's own: ${warning.message} (first such case: ${stringifyExact(shown)}; replay with ${replay})`,
      ...(assumptions.length ? { assumptions } : {}),
      evidence: {
        ...warning.evidence,
        generated: { seed, replay, case: shown, cases: details.numRuns, judged, warnings, ...finished },
      },
    };
  }
  return {
    ...outcome.base,
    status: 'passed',
    durationMs,
    message: `${details.numRuns} cases${counted ? ` (${counted})` : ''}${stoppedEarly}${storedNote}; seed ${seed}`,
    evidence: { generated: { seed, replay, cases: details.numRuns, judged, ...finished } },
  };
}

function emit(options: GenerateOptions, result: CheckResult): CheckResult {
  options.onResult?.(result);
  return result;
}

/** Adds generated results to a report of the suites, with counts that agree. */
export function mergeGenerated(report: Report, results: CheckResult[], rules: Map<string, Rule>): Report {
  if (results.length === 0) return report;
  const all = [...report.results, ...results];
  const count = (status: Status) => all.filter((result) => result.status === status).length;
  const extraMs = results.reduce((sum, result) => sum + (result.durationMs ?? 0), 0);
  report.results = all;
  report.summary = {
    ...report.summary,
    passed: count('passed'),
    failed: count('failed'),
    warnings: count('warning'),
    skipped: count('skipped'),
    durationMs: report.summary.durationMs + extraMs,
    skippedMust: skipNotes(all, rules).skippedMust,
  };
  const notes = skipNotes(results, rules).notes.map((note) => `generated: ${note}`);
  // What a stateful property put back (or could not) is a note of the run, as the suites' restore is.
  for (const result of results) {
    const restored = (result.evidence as { generated?: { restored?: unknown } } | undefined)?.generated?.restored;
    if (Array.isArray(restored)) notes.push(...restored.map((line) => `generated ${result.case}: ${String(line)}`));
  }
  if (notes.length) report.notes = [...(report.notes ?? []), ...notes];
  return report;
}
