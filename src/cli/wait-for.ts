import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../core/errors.js';
import { RunCutError } from '../net/run-session.js';
import { send } from '../runner/http-client.js';

/** `--wait-for SECONDS` as milliseconds (a bad value is one line and exit 2); 0 when not given. */
export function waitForMs(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) > 3600)
    throw new ConfigError(
      'bad-flag',
      `--wait-for takes a number of seconds from 0 to 3600, not ${JSON.stringify(value)}`,
    );
  return Math.round(Number(value) * 1000);
}

/** A gateway in front of a target still starting answers these: not yet the target. */
const STARTING = new Set([502, 503, 504]);

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * Sends GET `url` until an HTTP answer comes (any status: the target is up; 502/503/504 from a
 * gateway count only when the wait is over), for at most `waitMs` (0: one try). A TLS failure is a
 * configuration, not a target still starting: it ends the wait at once. Nothing answering is the
 * unreachable line (exit 2), saying how long it waited. Returns the answer's headers.
 */
export async function reachWithin(
  url: string,
  flag: string,
  waitMs: number,
  options: { pauseMs?: number } = {},
): Promise<Record<string, string>> {
  const started = Date.now();
  const pause = options.pauseMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    const left = waitMs - (Date.now() - started);
    let failure: Error;
    try {
      const answer = await send({
        method: 'GET',
        url,
        headers: {},
        timeoutMs: waitMs === 0 ? 5000 : Math.max(1000, Math.min(5000, left)),
      });
      if (!STARTING.has(answer.status) || left <= 0) return answer.headers;
      failure = new Error(`answered HTTP ${answer.status}`);
    } catch (error) {
      // An answer over the cap came: the URL is reachable (a probe that does not page answers its whole history).
      if ((error as { reason?: string }).reason === 'too-large') return {};
      // A TLS failure names its cause (unknown CA, name mismatch, plain HTTP on a TLS port, …).
      if ((error as { reason?: string }).reason === 'tls')
        throw new ConfigError('tls', `${flag} ${url}: ${(error as Error).message}`);
      // --timeout ran out while waiting: the tool's stop, which proves nothing about the target.
      if (error instanceof RunCutError)
        throw new ConfigError(
          'run-timeout',
          `${error.message} while waiting for ${flag} ${url} to answer (not proven unreachable: give a longer --timeout)`,
        );
      failure = error as Error;
    }
    const elapsed = Date.now() - started;
    if (elapsed >= waitMs) {
      const waited =
        waitMs > 0
          ? ` (waited ${seconds(Date.now() - started)} with --wait-for ${Number((waitMs / 1000).toFixed(1))}: ${attempt} attempt${attempt === 1 ? '' : 's'})`
          : '';
      throw new ConfigError('unreachable', `${flag} ${url} is unreachable: ${failure.message}${waited}`);
    }
    await sleep(Math.min(pause, waitMs - elapsed));
  }
}
