import type { CheckResult, Report } from '../runner/types.js';
import { escapeXml } from './escape.js';

/** Where and when the run happened: JUnit's `timestamp` and `hostname` of each testsuite. */
interface JunitContext {
  /** When the run started. */
  startedAt: Date;
  hostname: string;
}

function seconds(ms: number | undefined): string {
  return ((ms ?? 0) / 1000).toFixed(3);
}

/**
 * junit.xml in the common JUnit format (test/fixtures/junit.xsd): one testsuite per suite, one
 * testcase per check with its `time`; rule ids in the name and, with the check id, in system-out
 * (the format has no properties per testcase). A warning passes, with its message in system-out.
 */
export function renderJunit(report: Report, context: JunitContext): string {
  const bySuite = new Map<string, CheckResult[]>();
  for (const result of report.results) bySuite.set(result.suite, [...(bySuite.get(result.suite) ?? []), result]);
  const timestamp = context.startedAt.toISOString().replace(/\.\d+Z$/, 'Z');
  const a = escapeXml;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="wallet-conformance" tests="${report.results.length}" failures="${report.summary.failed}" errors="0" time="${seconds(report.summary.durationMs)}">`,
  ];
  let id = 0;
  for (const [suite, results] of bySuite) {
    const count = (status: CheckResult['status']) => results.filter((r) => r.status === status).length;
    const time = results.reduce((sum, r) => sum + (r.durationMs ?? 0), 0);
    lines.push(
      `  <testsuite name="${a(suite || '(no suite)')}" id="${id++}" tests="${results.length}" failures="${count('failed')}" errors="0" skipped="${count('skipped')}" time="${seconds(time)}" timestamp="${timestamp}" hostname="${a(context.hostname || 'localhost')}">`,
    );
    lines.push(
      '    <properties>',
      `      <property name="target" value="${a(describeSide(report.target))}"/>`,
      '    </properties>',
    );
    for (const result of results) {
      lines.push(
        `    <testcase classname="${a(`${suite}.${result.case}`)}" name="${a(`[${result.rules.join(', ')}] ${result.title}`)}" time="${seconds(result.durationMs)}">`,
      );
      if (result.status === 'failed')
        lines.push(
          `      <failure message="${a(result.message)}" type="${a(result.rules.join(','))}">${a(`${result.id}\n${result.message}${result.replay ? `\nreplay: ${result.replay}` : ''}`)}</failure>`,
        );
      if (result.status === 'skipped') lines.push(`      <skipped message="${a(result.message)}"/>`);
      const out = [
        `id: ${result.id}`,
        `rules: ${result.rules.join(', ')}`,
        ...(result.status === 'warning' ? [`WARNING: ${result.message}`] : []),
        ...(result.replay ? [`replay: ${result.replay}`] : []),
      ];
      lines.push(`      <system-out>${a(out.join('\n'))}</system-out>`);
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

/** The target in one line: side and URL (the HTML report has the full table). */
function describeSide(target: Record<string, unknown>): string {
  const url = (value: unknown) => (typeof value === 'string' ? value : '');
  const one = (t: Record<string, unknown>) => `${String(t.side ?? '?')} ${url(t.baseUrl) || url(t.callbackUrl)}`.trim();
  if (target.service || target.merchant)
    return [target.service, target.merchant]
      .filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null)
      .map(one)
      .join('; ');
  return one(target);
}
