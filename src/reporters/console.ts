import type { RunEvent } from '../runner/engine.js';
import type { Report } from '../runner/types.js';
import { groupFailures, groupHeading } from './root-causes.js';

/** One summary line: `172 passed, 0 failed, 0 warnings, 5 skipped in 3.2 s`. */
export function summaryLine(summary: Report['summary']): string {
  return `${summary.passed} passed, ${summary.failed} failed, ${summary.warnings} warnings, ${summary.skipped} skipped in ${(summary.durationMs / 1000).toFixed(1)} s`;
}

/**
 * Writes progress while a run goes: the case running, failures as they happen, a closing summary.
 * One reporter may follow several runs (`run` does the service side, then the merchant side): each
 * start resets the counts and names its side.
 */
export function consoleReporter(
  write: (text: string) => void,
  options: { verbose?: boolean } = {},
): (event: RunEvent) => void {
  let done = 0;
  let total = 0;
  let suite = '';
  let side = '';
  return (event) => {
    switch (event.kind) {
      case 'start':
        ({ total, side } = event);
        done = 0;
        suite = '';
        write(`${side} side: running ${total} checks\n`);
        break;
      case 'case':
        if (event.suite !== suite) {
          suite = event.suite;
          write(`${suite} (${done}/${total} checks done)\n`);
        }
        if (options.verbose) write(`  … ${event.suite}/${event.testCase}: ${event.title}\n`);
        break;
      case 'prompt':
        write(`\n>>> ${event.text}\n\n`);
        break;
      case 'result': {
        done++;
        const { result } = event;
        if (result.status === 'failed' || result.status === 'warning')
          write(
            `  ${result.status === 'failed' ? 'FAIL' : 'WARN'} [${done}/${total}] ${result.id} [${result.rules.join(', ')}]: ${result.message}\n`,
          );
        break;
      }
      case 'done': {
        write(`${side} side: ${summaryLine(event.report.summary)}\n`);
        const pre = event.report.preflight;
        if (pre)
          write(
            `  pre-flight: ${pre.verdict}${pre.verdict === 'warning' ? ` (${pre.steps.filter((step) => step.level === 'warning').length} unproven; see report.html)` : ''}\n`,
          );
        // Skipped MUST checks are counted, by reason, in the closing lines of the run (one place, last).
        for (const note of event.report.notes ?? [])
          if (!/^\d+ MUST checks? skipped: /.test(note)) write(`  note: ${note}\n`);
        break;
      }
    }
  };
}

/** Cause groups the closing digest shows; the rest are in report.html. */
const DIGEST_GROUPS = 8;

/**
 * The closing digest of a run that failed: the failures grouped by root cause, largest first, each
 * with how it is known, its first failure and the one command that replays that case. Words only.
 */
export function failureDigest(report: Report): string {
  const groups = groupFailures(report);
  if (groups.length === 0) return '';
  const lines = [
    `what to fix first (${report.summary.failed} failure${report.summary.failed === 1 ? '' : 's'} in ${groups.length} group${groups.length === 1 ? '' : 's'}):`,
  ];
  for (const group of groups.slice(0, DIGEST_GROUPS)) {
    const first = group.results[0]!;
    lines.push(`  ${groupHeading(group)} [${group.rules.join(', ')}]`);
    if (group.proof) lines.push(`    how it is known: ${group.proof}`);
    if (group.results.length > 1) lines.push(`    e.g. ${first.id}: ${first.message}`);
    if (first.replay) lines.push(`    replay: ${first.replay}`);
  }
  if (groups.length > DIGEST_GROUPS) lines.push(`  … ${groups.length - DIGEST_GROUPS} more group(s): see report.html`);
  return `${lines.join('\n')}\n`;
}
