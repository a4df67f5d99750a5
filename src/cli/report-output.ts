import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog, type Rule } from '../core/rules.js';
import { compareWithBaseline, parseBaseline, type BaselineComparison } from '../reporters/baseline.js';
import { consoleReporter, failureDigest } from '../reporters/console.js';
import { withReplay } from '../reporters/replay.js';
import { renderReports } from '../reporters/write-reports.js';
import { cachedRules } from '../runner/suite-cache.js';
import { matchesGlob, parseShard, selectSuites, type Suite } from '../runner/suite.js';
import type { Report } from '../runner/types.js';
import { notJudged } from '../runner/verdict.js';
import { ConfigError } from '../core/errors.js';
import { EXIT } from './exit.js';
import { loadAllSuites } from './user-suites.js';
import { filterCases } from './case-filter.js';
import { readUserFile, writeUserFile } from './io.js';
import { scrubData, scrubOutput } from './secrets.js';

/** Flags every suite-running command shares (docs/cli-reference.md). */
export interface CommonRunOptions {
  reports: string;
  strict?: boolean;
  suite?: string;
  shard?: string;
  verbose?: boolean;
  /** A report.json of an earlier run: only results worse than it fail this one. */
  baseline?: string;
  /** Exit 1 when a MUST check was skipped. */
  failOnSkip?: boolean;
  /** `--suites DIR` (repeatable): the user's own suite folders, added to the built-in suites. */
  suites?: string[];
  /** `--case ID` (repeatable, comma lists, globs): only these cases. */
  case?: string[];
  /** The command that ran, without secrets (`replayBase`): each failure's replay adds `--case ID` to it. */
  replay?: string;
}

/** The rule catalog of the package. */
export function loadRules(): Rule[] {
  // Parsed once per process (a run asks for it several times; the packaged file does not change under it).
  if (!rules) {
    const text = readFileSync(RULES_PATH, 'utf8');
    // As `npm run generate` parsed it, while the file is unchanged (decision 0120).
    rules = cachedRules(text) ?? parseRuleCatalog(text);
  }
  return rules.map((rule) => ({ ...rule }));
}

let rules: Rule[] | undefined;
const loadedSuites = new Map<string, Suite[]>();

/**
 * The built-in suites and those of `dirs`, parsed and validated once per process (`run` chooses
 * three times: both sides, then each); each caller gets its own copy to narrow.
 */
function suitesOnce(dirs: readonly string[]): Suite[] {
  const key = JSON.stringify(dirs);
  let suites = loadedSuites.get(key);
  if (!suites) {
    suites = loadAllSuites(dirs, loadRules());
    loadedSuites.set(key, suites);
  }
  return structuredClone(suites);
}

/** The built-in suites (and the user's, --suites) of one side (or both), narrowed by --suite and --shard. */
export function chooseSuites(
  side: 'service' | 'merchant' | 'both',
  options: CommonRunOptions,
  { allowEmpty = false } = {},
): Suite[] {
  // A bad --baseline is found before the run, not after it.
  if (options.baseline !== undefined)
    parseBaseline(readUserFile(options.baseline, 'baseline').toString('utf8'), options.baseline);
  const all = suitesOnce(options.suites ?? []).filter((suite) => side === 'both' || suite.side === side);
  // A --suite that matches nothing is a typo, not a green run of nothing.
  if (options.suite && !allowEmpty && !all.some((suite) => matchesGlob(suite.name, options.suite!))) {
    throw new ConfigError(
      'no-suite',
      `--suite ${JSON.stringify(options.suite)} matches no ${side === 'both' ? '' : `${side} `}suite (there are: ${all.map((suite) => suite.name).join(', ')})`,
    );
  }
  const selected = selectSuites(all, {
    ...(options.suite ? { glob: options.suite } : {}),
    ...(options.shard ? { shard: parseShard(options.shard) } : {}),
  });
  if (!options.case?.length) return selected;
  if (!allowEmpty) filterCases(all, options.case);
  const narrowed = filterCases(selected, options.case, { check: false });
  // Cases that exist but that --suite or --shard left out: an empty run would pass, so it is a line too.
  if (!allowEmpty && narrowed.suites.length === 0 && narrowed.generated.length === 0) {
    throw new ConfigError(
      'no-case',
      `--case ${options.case.join(',')} names no case among those ${options.suite ? `--suite ${JSON.stringify(options.suite)}` : ''}${options.suite && options.shard ? ' and ' : ''}${options.shard ? `--shard ${options.shard}` : ''} chose`,
    );
  }
  return narrowed.suites;
}

/** The generated properties `--case generated/<side>/<property>` names (`only` of the property run); all when no --case. */
export function generatedOnly(options: CommonRunOptions): { only?: string[] } {
  return options.case?.length ? { only: filterCases([], options.case, { check: false }).generated } : {};
}

/** A console reporter on stderr-free stdout. */
export function progress(options: CommonRunOptions) {
  return consoleReporter((text) => process.stdout.write(scrubOutput(text)), { verbose: options.verbose ?? false });
}

/** Reads `--baseline F` and compares the report with it; an unreadable or malformed file is exit 2. */
function loadBaseline(report: Report, file: string): BaselineComparison {
  return compareWithBaseline(report, parseBaseline(readUserFile(file, 'baseline').toString('utf8'), file), file);
}

/**
 * Writes the four report files and returns the exit status: 1 when a MUST check (or, strict, any
 * check) failed; with `--baseline`, only when a check is worse than the baseline (known failures
 * are listed, not fatal).
 */
/** Writes the four reports (scrubbed, each file replaced whole by a rename) and prints nothing: observe's reports while it runs. */
export function writeReportFiles(unscrubbed: Report, reports: string): void {
  const report = scrubData(unscrubbed);
  for (const file of renderReports(report, { rules: loadRules() }))
    writeUserFile(join(reports, file.path), scrubOutput(file.contents), { overwrite: true });
}

export function finish(unscrubbed: Report, options: CommonRunOptions): number {
  // Issue 12: no configured secret (nor any private key, URL password, token) reaches a report.
  const report = scrubData(options.replay ? withReplay(unscrubbed, options.replay) : unscrubbed);
  const baseline = options.baseline === undefined ? undefined : loadBaseline(report, options.baseline);
  for (const file of renderReports(report, { rules: loadRules(), ...(baseline ? { baseline } : {}) }))
    writeUserFile(join(options.reports, file.path), scrubOutput(file.contents), { overwrite: true });
  const digest = failureDigest(report);
  if (digest) process.stdout.write(scrubOutput(digest));
  const html = join(options.reports, 'report.html');
  // The folder as the user gave it (a relative path stays relative, an absolute one absolute).
  process.stdout.write(scrubOutput(`reports: ${html} (also report.json, junit.xml, summary.md)\n`));
  if (baseline) {
    const lines = [
      `baseline ${options.baseline}: ${baseline.worse.length} worse, ${baseline.known.length} known failure(s) (not fatal), ${baseline.fixed.length} fixed`,
    ];
    for (const { result, was } of baseline.worse)
      lines.push(
        `  WORSE ${result.id} [${result.rules.join(', ')}] (${was === 'new' ? 'not in the baseline' : `was ${was}`}): ${result.message}`,
      );
    for (const result of baseline.known)
      lines.push(`  known ${result.id} [${result.rules.join(', ')}]: ${result.message}`);
    process.stdout.write(scrubOutput(`${lines.join('\n')}\n`));
  }
  const status = exitStatus(report, options, baseline);
  // The last lines of every run: what was not judged and why, the count last, so a green run that looked at less says so.
  process.stdout.write(scrubOutput(`${notJudgedLines(report, options.failOnSkip ?? false).join('\n')}\n`));
  return status;
}

/**
 * The exit status: 2 when a check could not be judged through no fault of the target (the setup,
 * the suite, the toolkit: the run did not do what was asked), then 1 for skipped MUST checks under
 * --fail-on-skip, then the baseline's verdict or any failure.
 */
function exitStatus(report: Report, options: CommonRunOptions, baseline: BaselineComparison | undefined): number {
  const faults = report.results.filter((result) => result.fault);
  if (faults.length > 0) {
    const kinds = [...new Set(faults.map((result) => `${result.fault} error`))].join(', ');
    process.stdout.write(
      scrubOutput(
        `could not judge ${faults.length} check(s) through no fault of the target (${kinds}): exit 2; first: ${faults[0]!.id}: ${faults[0]!.message}\n`,
      ),
    );
    return EXIT.unusable;
  }
  const skippedMust = report.summary.skippedMust ?? 0;
  if (options.failOnSkip && skippedMust > 0) {
    process.stdout.write(`--fail-on-skip: ${skippedMust} MUST check(s) were skipped: exit 1\n`);
    return EXIT.failed;
  }
  if (baseline) return baseline.worse.length > 0 ? EXIT.failed : EXIT.ok;
  return report.summary.failed > 0 ? EXIT.failed : EXIT.ok;
}

/** Reasons shown one per line; the rest are in report.html. */
const NOT_JUDGED_GROUPS = 8;

/** How many MUST checks the run did not judge, one line per reason, the count in the last line. */
function notJudgedLines(report: Report, failOnSkip: boolean): string[] {
  const { count, groups } = notJudged(report.results, new Map(loadRules().map((rule) => [rule.id, rule])));
  if (count === 0) return ['not judged: 0 MUST checks (every MUST check was judged)'];
  const checks = (n: number) => `${n} MUST check${n === 1 ? '' : 's'}`;
  const lines = groups.slice(0, NOT_JUDGED_GROUPS).map((group) => `  ${checks(group.count)}: ${group.reason}`);
  if (groups.length > NOT_JUDGED_GROUPS)
    lines.push(`  … ${groups.length - NOT_JUDGED_GROUPS} more reason(s): see report.html`);
  const gate = failOnSkip
    ? 'they fail the run (--fail-on-skip)'
    : 'a skip does not fail the run without --fail-on-skip';
  return [...lines, `not judged: ${checks(count)}, for the reasons above; ${gate}`];
}
