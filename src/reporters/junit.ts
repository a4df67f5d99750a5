import type { Report } from '../runner/types.js';
import { escapeXml } from './escape.js';

/** junit.xml: one testsuite per suite, one testcase per check, rule ids in the name and properties. */
export function renderJunit(report: Report): string {
  const bySuite = new Map<string, Report['results']>();
  for (const result of report.results) bySuite.set(result.suite, [...(bySuite.get(result.suite) ?? []), result]);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="wallet-conformance" tests="${report.results.length}" failures="${report.summary.failed}" skipped="${report.summary.skipped}" time="${(report.summary.durationMs / 1000).toFixed(3)}">`];
  for (const [suite, results] of bySuite) {
    const failures = results.filter((r) => r.status === 'failed').length;
    const skipped = results.filter((r) => r.status === 'skipped').length;
    lines.push(`  <testsuite name="${escapeXml(suite)}" tests="${results.length}" failures="${failures}" skipped="${skipped}">`);
    for (const result of results) {
      lines.push(`    <testcase classname="${escapeXml(`${suite}.${result.case}`)}" name="${escapeXml(`[${result.rules.join(', ')}] ${result.title}`)}">`);
      lines.push('      <properties>');
      for (const rule of result.rules) lines.push(`        <property name="rule" value="${escapeXml(rule)}"/>`);
      lines.push(`        <property name="id" value="${escapeXml(result.id)}"/>`);
      lines.push('      </properties>');
      if (result.status === 'failed') lines.push(`      <failure message="${escapeXml(result.message)}" type="${escapeXml(result.rules.join(','))}">${escapeXml(result.message)}</failure>`);
      if (result.status === 'skipped') lines.push(`      <skipped message="${escapeXml(result.message)}"/>`);
      if (result.status === 'warning') lines.push(`      <system-out>${escapeXml(`WARNING: ${result.message}`)}</system-out>`);
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}
