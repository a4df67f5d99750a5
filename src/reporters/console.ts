import type { RunEvent } from '../runner/engine.js';

/** Writes progress while a run goes: the case running, failures as they happen, a closing summary. */
export function consoleReporter(write: (text: string) => void, options: { verbose?: boolean } = {}): (event: RunEvent) => void {
  let done = 0;
  let total = 0;
  let suite = '';
  return (event) => {
    switch (event.kind) {
      case 'start':
        total = event.total;
        write(`running ${total} checks\n`);
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
        const s = event.report.summary;
        write(`${s.passed} passed, ${s.failed} failed, ${s.warnings} warnings, ${s.skipped} skipped in ${(s.durationMs / 1000).toFixed(1)} s\n`);
        break;
      }
    }
  };
}
