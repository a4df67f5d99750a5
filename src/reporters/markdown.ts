import type { CheckResult, Report } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';
import { groupFailures, groupHeading } from './root-causes.js';
import { targetSides, verdictOf } from './verdict.js';

const ICON = { passed: '✅', failed: '❌', warning: '⚠️', skipped: '⏭️' } as const;
/** Rows per table: a step summary is capped at 1 MiB, and a person reads the first screen. */
const MAX_ROWS = 50;

/** Text safe in a GFM table cell: no pipe, no line break, no HTML. */
function cell(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ')
    .slice(0, 300);
}

function table(results: CheckResult[], note?: (result: CheckResult) => string): string[] {
  const lines = ['| status | rules | check | message |', '| --- | --- | --- | --- |'];
  for (const r of results.slice(0, MAX_ROWS))
    lines.push(
      `| ${ICON[r.status]} ${r.status}${note ? ` ${note(r)}` : ''} | ${r.rules.join(', ')} | \`${cell(r.id)}\` | ${cell(r.message)} |`,
    );
  if (results.length > MAX_ROWS) lines.push(`| | | … and ${results.length - MAX_ROWS} more | see report.html |`);
  return [...lines, ''];
}

/** Failures listed per group before the rest is left to report.html. */
const PER_GROUP = 5;

/**
 * The failures grouped by root cause, each failure with the command that replays just its case.
 * Capped at MAX_ROWS failures in all (a step summary is capped at 1 MiB).
 */
function failureGroups(report: Report, only?: Set<CheckResult>, note?: (result: CheckResult) => string): string[] {
  const lines: string[] = [];
  let shown = 0;
  const groups = groupFailures(report)
    .map((g) => ({ ...g, results: only ? g.results.filter((r) => only.has(r)) : g.results }))
    .filter((g) => g.results.length > 0);
  for (const group of groups) {
    if (shown >= MAX_ROWS) {
      lines.push(
        `… and ${groups.slice(groups.indexOf(group)).reduce((n, g) => n + g.results.length, 0)} more failures: see report.html`,
        '',
      );
      break;
    }
    if (group.results.length > 1 || group.fix) lines.push(`#### ${cell(groupHeading(group))}`, '');
    if (group.proof) lines.push(`How it is known: ${cell(group.proof)}`, '');
    const list = group.results.slice(0, Math.min(PER_GROUP, MAX_ROWS - shown));
    for (const r of list) {
      lines.push(
        `- ${ICON.failed}${note ? ` ${note(r)}` : ''} \`${cell(r.id)}\` [${r.rules.join(', ')}]: ${cell(r.message)}`,
      );
      if (r.replay) lines.push(`  replay: \`${r.replay.replace(/`/g, "'")}\``);
    }
    shown += list.length;
    if (group.results.length > list.length)
      lines.push(`- … and ${group.results.length - list.length} more of this cause (see report.html)`);
    lines.push('');
  }
  return lines;
}

/**
 * summary.md: GitHub-flavoured Markdown for a CI comment or `$GITHUB_STEP_SUMMARY`
 * (`cat reports/summary.md >> "$GITHUB_STEP_SUMMARY"`): the verdict and the counts, the pre-flight
 * diagnosis, then what to do: the failures grouped by root cause, each with the command replaying
 * its case; then what was tested, and warnings and skips folded. No raw JSON: values are words.
 */
export function renderMarkdown(report: Report, baseline?: BaselineComparison): string {
  const { summary } = report;
  const verdict = verdictOf(report, baseline);
  const lines = [
    `## ${verdict.passed ? (verdict.gaps ? '⚠️' : '✅') : '❌'} wallet-conformance: ${cell(verdict.text)}`,
    '',
    '| passed | failed | warnings | skipped | time |',
    '| ---: | ---: | ---: | ---: | ---: |',
    `| ${summary.passed} | ${summary.failed} | ${summary.warnings} | ${summary.skipped} | ${(summary.durationMs / 1000).toFixed(1)} s |`,
    '',
  ];
  if (report.preflight) {
    const pre = report.preflight;
    lines.push(
      `**Pre-flight: ${pre.verdict}**${pre.verdict === 'warning' ? ' (unproven: the suites ran and judged)' : ''}`,
      '',
    );
    for (const step of pre.steps)
      lines.push(
        `- ${step.level === 'warning' ? ICON.warning : ICON.passed} ${cell(step.what)}: ${cell(step.observed)}. ${cell(step.conclusion)}`,
      );
    lines.push('');
  }
  const failed = report.results.filter((r) => r.status === 'failed');
  if (baseline) {
    const worse = new Map(baseline.worse.map((w) => [w.result, w.was]));
    const fatal = failed.filter((r) => worse.has(r));
    if (fatal.length > 0)
      lines.push(
        `### Worse than the baseline (${fatal.length}), by cause`,
        '',
        ...failureGroups(report, new Set(fatal), (r) =>
          worse.get(r) === 'new' ? '(new check)' : `(was ${worse.get(r)})`,
        ),
      );
  } else if (failed.length > 0) lines.push(`### Failed (${failed.length}), by cause`, '', ...failureGroups(report));
  lines.push(
    '### What was tested',
    '',
    ...targetSides(report.target).sides.map(
      (side) =>
        `- **${cell(side.side)}** ${side.address.map((a) => `\`${cell(a)}\``).join(', ')}${side.other.length ? ` (${cell(side.other.join(', '))})` : ''}`,
    ),
    '',
  );
  // What the run did not judge, one line per reason (the run's notes: skipped MUST checks, observe's not-judged groups).
  const notJudged = (report.notes ?? []).filter((note) => /^\d+ MUST checks? skipped: |^not judged: /.test(note));
  if (notJudged.length > 0)
    lines.push('### Not judged, by reason', '', ...notJudged.map((note) => `- ${cell(note)}`), '');
  if (baseline) {
    if (baseline.known.length > 0)
      lines.push(
        `### Known failures, also in the baseline (${baseline.known.length}): not fatal`,
        '',
        ...table(baseline.known),
      );
    if (baseline.fixed.length > 0)
      lines.push(
        `Fixed since the baseline: ${baseline.fixed.length} check(s) (${baseline.fixed
          .slice(0, 10)
          .map((r) => `\`${cell(r.id)}\``)
          .join(', ')}${baseline.fixed.length > 10 ? ', …' : ''}): the baseline can be renewed.`,
        '',
      );
  }
  for (const status of ['warning', 'skipped'] as const) {
    const some = report.results.filter((r) => r.status === status);
    if (some.length === 0) continue;
    lines.push(
      `<details><summary>${ICON[status]} ${some.length} ${status === 'warning' ? 'warnings' : 'skipped'}</summary>`,
      '',
      ...table(some),
      '</details>',
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}
