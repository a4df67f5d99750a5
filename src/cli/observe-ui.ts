// observe's live page (`--ui [HOST:]PORT`, used by observe-run.ts): its address checked with the
// other flags, its feed built from the run's keys, its server started after the proxy.
import { ConfigError, MESSAGE_PREFIX } from '../core/errors.js';
import type { CryptoProfile } from '../core/profile.js';
import type { ObserveKeys } from '../observe/exchange.js';
import type { ObserveMetrics } from '../observe/metrics.js';
import { judgeKeys } from '../observe/observed.js';
import type { ObserveProxy, ProxyListener } from '../observe/proxy.js';
import { LiveFeed } from '../observe/ui/feed.js';
import { startLivePage } from '../observe/ui/server.js';
import { isLoopback } from './observe-stop.js';
import { scrubData, scrubOutput } from './secrets.js';

type Address = { host: string; port: number };

/**
 * `--ui [HOST:]PORT`: never a proxy listener's port nor the metrics' (each has its own server, so
 * a browser never holds a forwarding socket). `parse` is the listeners' own `[HOST:]PORT` reader.
 */
export function uiAddress(
  value: string | undefined,
  parse: (value: string, flag: string) => Address,
  listeners: readonly ProxyListener[],
  metrics: Address | undefined,
): { ui?: Address } {
  if (value === undefined) return {};
  const address = parse(value, '--ui');
  if (address.port === 0) return { ui: address };
  if (listeners.some((listener) => listener.port === address.port))
    throw new ConfigError(
      'bad-flag',
      `--ui ${value}: port ${address.port} is a proxy listener's (give the page its own port)`,
    );
  if (metrics && metrics.port === address.port)
    throw new ConfigError(
      'bad-flag',
      `--ui ${value}: port ${address.port} is --metrics's (the page serves /metrics itself: drop --metrics or give it another port)`,
    );
  return { ui: address };
}

/** The page's feed: it opens payloads with the run's keys and scrubs as the console and the capture do. */
export function liveFeed(keys: ObserveKeys, profile: CryptoProfile | undefined): LiveFeed {
  return new LiveFeed({ keys: judgeKeys(keys, profile), scrubber: { text: scrubOutput, value: scrubData } });
}

/**
 * Starts the page after the proxy (a port that cannot be had closes the proxy and is one line,
 * exit 2), prints its address, and warns when other machines can reach it: it shows decrypted
 * payloads.
 */
export async function serveLivePage(
  feed: LiveFeed,
  metrics: ObserveMetrics,
  at: Address,
  proxy: ObserveProxy,
): Promise<{ close: () => Promise<void> }> {
  try {
    const server = await startLivePage(feed, metrics, at.host, at.port);
    process.stdout.write(
      `observe: live page ${server.url}/ (metrics: ${server.url}/metrics, probes: ${server.url}/healthz)\n`,
    );
    if (!isLoopback(at.host))
      process.stderr.write(
        `${MESSAGE_PREFIX} observe: warning: --ui ${at.host}:${at.port} accepts connections from other machines: the page shows decrypted payloads (secrets only as fingerprints) to anyone who reaches it\n`,
      );
    return server;
  } catch (error) {
    await proxy.close({ graceMs: 0 });
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError('cannot-listen', `cannot listen on ${at.host}:${at.port} for --ui: ${code}`);
  }
}
