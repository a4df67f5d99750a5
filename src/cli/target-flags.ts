import { ConfigError } from '../core/errors.js';

/**
 * Checks of the flags that name a target, shared by the commands that reach one. Registration
 * imports this file, so it stays light: the network is imported when a reachability check runs.
 */

/** A URL flag, checked up front so a typo is one clear line. */
export function httpUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('bad-url', `${flag} must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError('bad-url', `${flag} must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Fails with exit 2 when nothing answers at `url` (any HTTP answer is fine); returns the answer's
 * headers. With `waitMs` (--wait-for) it polls until the target answers or the time is up.
 */
export async function assertReachable(url: string, flag: string, waitMs = 0): Promise<Record<string, string>> {
  const { reachWithin } = await import('./wait-for.js');
  return reachWithin(url, flag, waitMs);
}
