import type { StormProgress, StormResult } from './storm.js';

/**
 * The storm's one-line verdict (issue 13's fixed format):
 * `load: N events, D duplicate deliveries, processed exactly once: yes|no, X events/s, p50 Y ms, p99 Z ms`.
 * Without a probe the verdict reads `unknown (needs --probe-url or --probe-cmd)`.
 */
export function summaryLine(result: StormResult): string {
  const verdict =
    result.exactlyOnce === undefined ? 'unknown (needs --probe-url or --probe-cmd)' : result.exactlyOnce ? 'yes' : 'no';
  return `load: ${result.events} events, ${result.duplicateDeliveries} duplicate deliveries, processed exactly once: ${verdict}, ${result.eventsPerSecond.toFixed(0)} events/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms`;
}

/** The first offending events, one line each, naming key, trackingId and what went wrong. */
export function offenderLines(result: StormResult, limit = 10): string[] {
  const lines = result.offenders.slice(0, limit).map((offender) => {
    const what =
      offender.processed === 0
        ? offender.acknowledged
          ? 'acknowledged with errCode 0 but never processed'
          : 'never processed (no delivery acknowledged)'
        : `processed ${offender.processed} times`;
    return `  ${what}: type ${offender.type}, trackingId ${offender.trackingId}, key ${offender.key}`;
  });
  if (result.offenders.length > limit) lines.push(`  ... and ${result.offenders.length - limit} more`);
  return lines;
}

/** One progress line: `load: 3 s, 1534/2600 deliveries, 1490 events acknowledged, 12 retries, 511 deliveries/s`. */
export function progressLine(progress: StormProgress): string {
  const seconds = progress.elapsedMs / 1_000;
  return `load: ${seconds.toFixed(0)} s, ${progress.done}/${progress.planned} deliveries, ${progress.acknowledged} events acknowledged, ${progress.retries} retries, ${(progress.done / Math.max(seconds, 0.001)).toFixed(0)} deliveries/s`;
}
