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
export async function checkProperties(side: 'service' | 'merchant', properties: AnyProperty[], options: GenerateOptions): Promise<CheckResult[]> {
  const seed = options.seed ?? newSeed();
  const store = options.store ?? NO_EXAMPLE_STORE;
  const results: CheckResult[] = [];
  const suite = `generated/${side}`;
  for (const property of properties) {
    const base = { id: `${suite}/${property.id}`, suite, case: property.id, title: property.title, rules: property.rules };
    if (property.skip) {
      results.push(emit(options, { ...base, status: 'skipped', message: property.skip }));
      continue;
    }
    const started = performance.now();
    const stored = store.load(side, property.id);
    const tags = new Map<string, number>();
    let judged = 0;
    let lastFailure: { value: unknown; verdict: Extract<Verdict, { ok: false }> } | undefined;
    let firstWarning: { value: unknown; warning: Warning } | undefined;
    let warnings = 0;
    const details = await fc.check(
      fc.asyncProperty(property.arbitrary, async (value) => {
        judged++;
        const verdict = await property.judge(value);
        if (verdict.ok && verdict.warning && failureStatus(verdict.warning.rules, options.rules, options.strict ?? false, side) === 'failed') {
          // --strict: another reading of an open point fails, and is shrunk like any failure.
          lastFailure = { value, verdict: { ok: false, ...verdict.warning } };
          return false;
        }
        if (verdict.ok) {
          if (!lastFailure) {
            tags.set(verdict.tag ?? 'held', (tags.get(verdict.tag ?? 'held') ?? 0) + 1);
            if (verdict.warning) {
              warnings++;
              firstWarning ??= { value, warning: verdict.warning };
            }
          }
          return true;
        }
        lastFailure = { value, verdict };
        return false;
      }),
      {
        numRuns: options.numRuns,
        seed,
        examples: [...stored.map((example) => [example.value]), ...(property.examples ?? []).map((value) => [value])],
        interruptAfterTimeLimit: options.timeLimitMs ?? 600_000,
        markInterruptAsFailure: false,
      },
    );
    // The minimal failing case is named once, before the state is put back (explain may send again).
    if (details.failed && lastFailure && details.counterexample && property.explain) {
      const minimal = details.counterexample[0];
      lastFailure = {
        value: minimal,
        verdict: await property.explain(minimal, lastFailure.verdict).catch((error: unknown) => ({
          ...lastFailure!.verdict,
          message: `${lastFailure!.verdict.message} (naming it under other readings failed: ${(error as Error).message})`,
        })),
      };
    }
    const restored = property.finish ? await property.finish().catch((error: unknown) => [`could not put the state back: ${(error as Error).message}`]) : [];
    const finished = restored.length ? { restored } : {};
    const durationMs = Math.round(performance.now() - started);
    const replay = replayLine(options.numRuns, seed);
    if (details.failed && lastFailure && details.counterexample) {
      const minimal = details.counterexample[0];
      const verdict = lastFailure.verdict;
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
      results.push(
        emit(options, {
          ...base,
          rules: verdict.rules,
          status,
          durationMs,
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
              ...finished,
            },
          },
        }),
      );
      continue;
    }
    if (details.failed) {
      // The judge itself threw: a fault of the toolkit, reported rather than hidden.
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      results.push(
        emit(options, {
          ...base,
          status: 'failed',
          durationMs,
          message: `the toolkit could not judge a generated case: ${error} (replay with ${replay})`,
          evidence: { generated: { seed, replay, ...finished } },
        }),
      );
      continue;
    }
    store.save(side, property.id, []);
    const counted = [...tags]
      .sort((a, b) => b[1] - a[1])
      .map(([tag, n]) => `${n} ${tag}`)
      .join(', ');
    const cut = details.interrupted ? ` (stopped by the time limit after ${details.numRuns} of ${options.numRuns})` : '';
    const storedNote = stored.length ? `, ${stored.length} stored example${stored.length === 1 ? '' : 's'} replayed first and now passing` : '';
    if (firstWarning) {
      // No failure, but some cases held only under another legal reading of an open point: a warning, with the first such case.
      const { value, warning } = firstWarning;
      const shown = property.show ? property.show(value) : value;
      const assumptions = assumptionsOf(warning.rules, options.rules);
      results.push(
        emit(options, {
          ...base,
          rules: warning.rules,
          status: 'warning',
          durationMs,
          message: `${details.numRuns} cases${counted ? ` (${counted})` : ''}${cut}${storedNote}, no failure; ${warnings} held under another legal reading than the property's own: ${warning.message} (first such case: ${stringifyExact(shown)}; replay with ${replay})`,
          ...(assumptions.length ? { assumptions } : {}),
          evidence: { ...warning.evidence, generated: { seed, replay, case: shown, cases: details.numRuns, judged, warnings, ...finished } },
        }),
      );
      continue;
    }
    results.push(
      emit(options, {
        ...base,
        status: 'passed',
        durationMs,
        message: `${details.numRuns} cases${counted ? ` (${counted})` : ''}${cut}${storedNote}; seed ${seed}`,
        evidence: { generated: { seed, replay, cases: details.numRuns, judged, ...finished } },
      }),
    );
  }
  return results;
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
