import type { RunEvent } from '../runner/engine.js';
import type { Report } from '../runner/types.js';

/** One summary line: `172 passed, 0 failed, 0 warnings, 5 skipped in 3.2 s`. */
export function summaryLine(summary: Report['summary']): string {
  return `${summary.passed} passed, ${summary.failed} failed, ${summary.warnings} warnings, ${summary.skipped} skipped in ${(summary.durationMs / 1000).toFixed(1)} s`;
}

/**
 * Writes progress while a run goes: the case running, failures as they happen, a closing summary.
 * One reporter may follow several runs (`run` does the service side, then the merchant side): each
 * start resets the counts and names its side.
 */
export function consoleReporter(write: (text: string) => void, options: { verbose?: boolean } = {}): (event: RunEvent) => void {
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
        if (result.status === 'failed' || result.status === 'warning') write(`  ${result.status === 'failed' ? 'FAIL' : 'WARN'} [${done}/${total}] ${result.id} [${result.rules.join(', ')}]: ${result.message}\n`);
        break;
      }
      case 'done': {
        write(`${side} side: ${summaryLine(event.report.summary)}\n`);
        const pre = event.report.preflight;
        if (pre) write(`  pre-flight: ${pre.verdict}${pre.verdict === 'warning' ? ` (${pre.steps.filter((step) => step.level === 'warning').length} unproven; see report.html)` : ''}\n`);
        for (const note of event.report.notes ?? []) write(`  note: ${note}\n`);
        break;
      }
    }
  };
}
