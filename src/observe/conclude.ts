// What the observe workflow (live.ts, replay-run.ts) shares: its edges to the process, the finding
// lines printed as they are known, and the end of a run (summary, reports, exit status).
import type { CheckResult, Report } from '../runner/api.js';
import type { Scrubber } from '../secrets/scrub.js';
import type { ObserveResult } from './exchange.js';

/**
 * The process's edges, given by the CLI: the workflow prints, writes reports and ends only through
 * them. Text goes out as given; the workflow scrubs (with `scrubber`) whatever may hold a secret.
 */
export interface ObserveIo {
  /** Text for the standard output. */
  out(text: string): void;
  /** Text for the standard error. */
  err(text: string): void;
  /** The process's scrubber (every secret the CLI learnt): console lines, the capture, the live page. */
  scrubber: Scrubber;
  /** Writes the four reports, each file replaced whole, printing nothing (the reports while running). */
  writeReports(report: Report): void;
  /** Writes the final reports, prints their lines and returns the exit status. */
  finish(report: Report): number;
}

/** Prints failed and warning results, each once. */
interface FindingPrinter {
  print(results: readonly CheckResult[]): void;
}

/**
 * Prints each failed or warning result once, as it is known. A result is remembered by its id: the
 * judge's thread sends copies, and its final report holds the same results again. The ids are as
 * many as the judge's individual results, which its tally bounds (per check and status), so memory
 * stays bounded however long observe runs.
 */
export function findingPrinter(io: ObserveIo): FindingPrinter {
  const printed = new Set<string>();
  return {
    print(results) {
      for (const result of results) {
        if (result.status !== 'failed' && result.status !== 'warning') continue;
        if (printed.has(result.id)) continue;
        printed.add(result.id);
        io.out(
          io.scrubber.text(
            `  ${result.status === 'failed' ? 'FAIL' : 'WARN'} ${result.id} [${result.rules.join(', ')}]: ${result.message}\n`,
          ),
        );
      }
    },
  };
}

/** Ends an observe run or replay: the summary line, the four reports, the exit status. */
export function conclude(
  result: ObserveResult,
  io: ObserveIo,
  printer: FindingPrinter,
  target: Record<string, unknown>,
  extraLines: string[],
): number {
  printer.print(result.report.results);
  const { summary } = result.report;
  // What the queue shed and the stop cut reached the judge's count as exchanges not judged.
  io.out(
    `observe: ${result.exchanges} exchanges, ${summary.failed} failed, ${summary.warnings} warnings, ${result.notJudged} not judged\n`,
  );
  for (const line of extraLines) io.out(io.scrubber.text(`${line}\n`));
  if (result.forgottenEvents > 0)
    io.out(
      `observe: ${result.forgottenEvents} events left the stream window before they were settled (memory is bounded); see the report's notes\n`,
    );
  return io.finish({ ...result.report, target: { ...result.report.target, ...target } });
}
