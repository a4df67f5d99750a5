// How a live `observe` stops and what it warns about at its start (used by observe-run.ts).
import { isIP } from 'node:net';
import { ConfigError, MESSAGE_PREFIX } from '../core/errors.js';
import { httpUrl } from './target-flags.js';

/** How long the judge may go on with what waits in its queue after the proxy closed (the reports must fit in a container's 10 s stop). */
export const JUDGE_DRAIN_MS = 2_000;

/**
 * Resolves at the first SIGINT/SIGTERM or after `durationMs`. A second signal aborts `cut`: the
 * exchanges still in flight are cut and what waits for the judge is counted as not judged, so the
 * reports are written at once; the handlers stay until `release` (a third signal is ignored: the
 * reports are seconds away).
 */
export function stopSignals(durationMs: number | undefined): {
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
      process.stderr.write(
        `${MESSAGE_PREFIX} observe: a second signal: cutting the exchanges in flight and writing the reports now\n`,
      );
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

/** A loopback host (127.0.0.0/8, ::1, localhost): reachable from this machine only. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** One warning line per listener that accepts other machines' connections (a proxy is opened to the network on purpose, and said). */
export function exposedListenerWarnings(
  listeners: ReadonlyArray<{ host: string; port: number; direction: string }>,
): string[] {
  return listeners
    .filter((listener) => !isLoopback(listener.host))
    .map(
      (listener) =>
        `${MESSAGE_PREFIX} observe: warning: ${listener.direction === 'merchant→service' ? '--listen' : '--callback-listen'} ${listener.host}:${listener.port} accepts connections from other machines: anyone who reaches it reaches the upstream through observe`,
    );
}

/**
 * An upstream URL flag: http(s), without credentials or a query. Observe forwards each request's
 * own credentials and its own path and query; a user:password or a query in the flag would be
 * dropped without a word (or sent with every request), so it is refused. The value is not repeated
 * in the message: it may hold a password.
 */
export function upstreamFlag(value: string, flag: string): string {
  const checked = httpUrl(value, flag);
  const url = new URL(checked);
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      'bad-url',
      `${flag} carries credentials (user:password@): observe forwards each request's own credentials and adds none; give the URL without them`,
    );
  if (url.search !== '' || value.includes('?'))
    throw new ConfigError(
      'bad-url',
      `${flag} has a query (?...): observe appends each request's own path and query to the URL's path; give the base URL without one`,
    );
  if (url.hash !== '' || value.includes('#'))
    throw new ConfigError('bad-url', `${flag} has a fragment (#...): give the base URL without one`);
  return checked;
}
