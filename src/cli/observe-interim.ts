// observe's reports while it runs (--report-every SECONDS, SIGHUP): the four reports rewritten in
// place, each file replaced whole (written beside and renamed), with the window they cover.
import { MESSAGE_PREFIX } from '../core/errors.js';
import type { Judge } from '../observe/exchange.js';
import { writeReportFiles } from './report-output.js';
import { scrubOutput } from './secrets.js';

/** The time a report covers: from the start of the run to when it was written (ISO 8601). */
export function reportWindow(startedAt: number, until: number, final: boolean): { from: string; to: string; final: boolean } {
  return { from: new Date(startedAt).toISOString(), to: new Date(until).toISOString(), final };
}

interface InterimOptions {
  judge: Judge;
  reports: string;
  /** Rewrite every this many ms (undefined: only on SIGHUP). */
  everyMs?: number;
  startedAt: number;
  /** What the report's target adds (listeners, capture, counts so far). */
  target: () => Record<string, unknown>;
}

/**
 * Rewrites the reports every `everyMs` and on SIGHUP until `stop()`. A report that cannot be
 * written is one line on stderr and the run goes on (the exit status is decided at the end only).
 */
export function startInterimReports(options: InterimOptions): { stop: () => void; written: () => number } {
  let written = 0;
  const write = () => {
    const result = options.judge.snapshot?.();
    if (!result) return;
    const now = Date.now();
    const report = { ...result.report, target: { ...result.report.target, ...options.target(), window: reportWindow(options.startedAt, now, false) } };
    try {
      writeReportFiles(report, options.reports);
      written++;
    } catch (error) {
      process.stderr.write(
        scrubOutput(`${MESSAGE_PREFIX} observe: the reports while running could not be written (forwarding goes on): ${(error as Error).message}\n`),
      );
    }
  };
  const timer = options.everyMs === undefined ? undefined : setInterval(write, options.everyMs);
  timer?.unref();
  process.on('SIGHUP', write);
  return {
    stop: () => {
      clearInterval(timer);
      process.off('SIGHUP', write);
    },
    written: () => written,
  };
}
