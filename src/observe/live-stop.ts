// How a live observation stops (signals, --duration) and what it writes while it runs (--report-every
// SECONDS, SIGHUP): the four reports rewritten in place, each with the window it covers.
import { MESSAGE_PREFIX } from '../core/errors.js';
import type { ObserveIo } from './conclude.js';
import type { ObserveResult } from './exchange.js';

/** How long the judge may go on with what waits in its queue after the proxy closed (the reports must fit in a container's 10 s stop). */
export const JUDGE_DRAIN_MS = 2_000;

/**
 * Resolves at the first SIGINT/SIGTERM or after `durationMs`. A second signal aborts `cut`: the
 * exchanges still in flight are cut and what waits for the judge is counted as not judged, so the
 * reports are written at once; the handlers stay until `release` (a third signal is ignored: the
 * reports are seconds away).
 */
export function stopSignals(
  durationMs: number | undefined,
  err: (text: string) => void,
): {
  stopped: Promise<void>;
  cut: AbortSignal;
  release: () => void;
} {
  const abort = new AbortController();
  let resolveStop!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve));
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals === 1) resolveStop();
    else if (signals === 2) {
      err(`${MESSAGE_PREFIX} observe: a second signal: cutting the exchanges in flight and writing the reports now\n`);
      abort.abort();
    }
  };
  const timer =
    durationMs === undefined
      ? undefined
      : setTimeout(() => ((signals = Math.max(signals, 1)), resolveStop()), durationMs);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stopped,
    cut: abort.signal,
    release: () => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

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
export function startInterimReports(
  options: InterimOptions,
  io: ObserveIo,
): { stop: () => void; written: () => number } {
  let written = 0;
  // One report at a time: a SIGHUP while the judge's thread is still answering the last one waits for the next.
  let writing = false;
  let stopped = false;
  const failed = (error: unknown) =>
    io.err(
      io.scrubber.text(
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
        const window = reportWindow(result.report.target, options.startedAt, now, false);
        io.writeReports({
          ...result.report,
          target: { ...result.report.target, ...options.target(), window },
        });
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
