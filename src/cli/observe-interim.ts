// observe's reports while it runs (--report-every SECONDS, SIGHUP): the four reports rewritten in
// place, each file replaced whole (written beside and renamed), with the window they cover.
import { MESSAGE_PREFIX } from '../core/errors.js';
import type { ObserveResult } from '../observe/exchange.js';
import { writeReportFiles } from './report-output.js';
import { scrubOutput } from './secrets.js';

/**
 * The time a report covers: from the start of the run to when it was written (ISO 8601), added to
 * the judge's own `window` (how many events and how long its stream remembers), which it keeps.
 */
export function reportWindow(
  target: Record<string, unknown>,
  startedAt: number,
  until: number,
  final: boolean,
): Record<string, unknown> {
  const judged = typeof target.window === 'object' && target.window !== null ? target.window : {};
  return { ...judged, from: new Date(startedAt).toISOString(), to: new Date(until).toISOString(), final };
}

interface InterimOptions {
  /** The judge's report so far (from its thread). */
  snapshot: () => Promise<ObserveResult | undefined>;
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
  // One report at a time: a SIGHUP while the judge's thread is still answering the last one waits for the next.
  let writing = false;
  let stopped = false;
  const failed = (error: unknown) =>
    process.stderr.write(
      scrubOutput(
        `${MESSAGE_PREFIX} observe: the reports while running could not be written (forwarding goes on): ${(error as Error)?.message ?? String(error)}\n`,
      ),
    );
  const write = () => {
    if (writing || stopped) return;
    writing = true;
    // The window ends when the judge is asked: what it has judged by then is what the report holds.
    const now = Date.now();
    options
      .snapshot()
      .then((result) => {
        if (!result || stopped) return;
        const report = {
          ...result.report,
          target: {
            ...result.report.target,
            ...options.target(),
            window: reportWindow(result.report.target, options.startedAt, now, false),
          },
        };
        writeReportFiles(report, options.reports);
        written++;
      })
      .catch(failed)
      .finally(() => (writing = false));
  };
  const timer = options.everyMs === undefined ? undefined : setInterval(write, options.everyMs);
  timer?.unref();
  process.on('SIGHUP', write);
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
      process.off('SIGHUP', write);
    },
    written: () => written,
  };
}
