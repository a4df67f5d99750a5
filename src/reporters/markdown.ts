import type { CheckResult, Report } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';
import { targetSides, verdictOf } from './verdict.js';

const ICON = { passed: '✅', failed: '❌', warning: '⚠️', skipped: '⏭️' } as const;
/** Rows per table: a step summary is capped at 1 MiB, and a person reads the first screen. */
const MAX_ROWS = 50;

/** Text safe in a GFM table cell: no pipe, no line break, no HTML. */
function cell(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').slice(0, 300);
}

function table(results: CheckResult[], note?: (result: CheckResult) => string): string[] {
  const lines = ['| status | rules | check | message |', '| --- | --- | --- | --- |'];
  for (const r of results.slice(0, MAX_ROWS)) lines.push(`| ${ICON[r.status]} ${r.status}${note ? ` ${note(r)}` : ''} | ${r.rules.join(', ')} | \`${cell(r.id)}\` | ${cell(r.message)} |`);
  if (results.length > MAX_ROWS) lines.push(`| | | … and ${results.length - MAX_ROWS} more | see report.html |`);
  return [...lines, ''];
}

/**
 * summary.md: GitHub-flavoured Markdown for a CI comment or `$GITHUB_STEP_SUMMARY`
 * (`cat reports/summary.md >> "$GITHUB_STEP_SUMMARY"`): the verdict, the counts, what was tested,
 * then what did not pass (failures first; warnings and skips folded).
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
    ...targetSides(report.target).sides.map((side) => `- **${cell(side.side)}** ${side.address.map((a) => `\`${cell(a)}\``).join(', ')}${side.other.length ? ` (${cell(side.other.join(', '))})` : ''}`),
    '',
  ];
  if (report.preflight) {
    const pre = report.preflight;
    lines.push(`**Pre-flight: ${pre.verdict}**${pre.verdict === 'warning' ? ' (unproven: the suites ran and judged)' : ''}`, '');
    for (const step of pre.steps) lines.push(`- ${step.level === 'warning' ? ICON.warning : ICON.passed} ${cell(step.what)}: ${cell(step.observed)}. ${cell(step.conclusion)}`);
    lines.push('');
  }
  const failed = report.results.filter((r) => r.status === 'failed');
  if (baseline) {
    const worse = new Map(baseline.worse.map((w) => [w.result, w.was]));
    const fatal = failed.filter((r) => worse.has(r));
    if (fatal.length > 0) lines.push(`### Worse than the baseline (${fatal.length})`, '', ...table(fatal, (r) => (worse.get(r) === 'new' ? '(new check)' : `(was ${worse.get(r)})`)));
    if (baseline.known.length > 0) lines.push(`### Known failures, also in the baseline (${baseline.known.length}): not fatal`, '', ...table(baseline.known));
    if (baseline.fixed.length > 0) lines.push(`Fixed since the baseline: ${baseline.fixed.length} check(s) (${baseline.fixed.slice(0, 10).map((r) => `\`${cell(r.id)}\``).join(', ')}${baseline.fixed.length > 10 ? ', …' : ''}): the baseline can be renewed.`, '');
  } else if (failed.length > 0) lines.push(`### Failed (${failed.length})`, '', ...table(failed));
  for (const status of ['warning', 'skipped'] as const) {
    const some = report.results.filter((r) => r.status === status);
    if (some.length === 0) continue;
    lines.push(`<details><summary>${ICON[status]} ${some.length} ${status === 'warning' ? 'warnings' : 'skipped'}</summary>`, '', ...table(some), '</details>', '');
  }
  return `${lines.join('\n')}\n`;
}
