import type { Report } from '../runner/types.js';

const ICON = { passed: '✅', failed: '❌', warning: '⚠️', skipped: '⏭️' } as const;

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').slice(0, 300);
}

/** summary.md: counts and a table of what did not pass, for a CI comment. */
export function renderMarkdown(report: Report): string {
  const { summary } = report;
  const verdict = summary.failed > 0 ? '❌ MUST checks failed' : '✅ every MUST check passed';
  const lines = [
    '# wallet-conformance',
    '',
    `${verdict}: ${summary.passed} passed, ${summary.failed} failed, ${summary.warnings} warnings, ${summary.skipped} skipped (${(summary.durationMs / 1000).toFixed(1)} s).`,
    '',
  ];
  const notPassed = report.results.filter((r) => r.status !== 'passed').sort((a, b) => order(a.status) - order(b.status));
  if (notPassed.length > 0) {
    lines.push('| status | rules | check | message |', '| --- | --- | --- | --- |');
    for (const r of notPassed) lines.push(`| ${ICON[r.status]} ${r.status} | ${r.rules.join(', ')} | ${cell(r.id)} | ${cell(r.message)} |`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

function order(status: string): number {
  return ['failed', 'warning', 'skipped', 'passed'].indexOf(status);
}
