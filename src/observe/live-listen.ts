// What a live observation listens on: the proxy's listeners, then the servers beside it (--ui,
// --metrics), each announced in one line and warned about when other machines can reach it.
import { isIP } from 'node:net';
import { ConfigError, MESSAGE_PREFIX } from '../core/errors.js';
import type { CryptoProfile } from '../core/profile.js';
import type { ObserveIo } from './conclude.js';
import type { ObserveKeys, ObservedExchange } from './exchange.js';
import { startMetricsServer, type ObserveMetrics } from './metrics.js';
import { judgeKeys } from './observed.js';
import { startObserveProxy, upstreamPath, type ObserveProxy, type ProxyListener } from './proxy.js';
import { LiveFeed } from './ui/feed.js';
import { startLivePage } from './ui/server.js';
import type { NetworkConfig } from '../net/network-config.js';

type Address = { host: string; port: number };

/** A loopback host (127.0.0.0/8, ::1, localhost): reachable from this machine only. */
function isLoopback(host: string): boolean {
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

/** What the proxy is started with. */
interface ProxyPlan {
  listeners: ProxyListener[];
  network: NetworkConfig;
  upstreamTimeoutMs: number;
}

/** Starts the listeners; a port that cannot be had is one line (the capture opened for it is closed). */
export async function startProxy(
  { listeners, network, upstreamTimeoutMs }: ProxyPlan,
  onExchange: (exchange: ObservedExchange) => void,
  onError: (error: unknown) => void,
  stream: { end(done: () => void): void } | undefined,
): Promise<ObserveProxy> {
  try {
    return await startObserveProxy({
      listeners,
      network,
      upstreamTimeoutMs,
      maxRecordedBodyBytes: network.maxBodyBytes,
      onExchange,
      onError,
    });
  } catch (error) {
    if (stream) await new Promise<void>((done) => stream.end(() => done()));
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const failed = error as NodeJS.ErrnoException & { address?: string; port?: number };
      throw new ConfigError(
        'cannot-listen',
        `cannot listen on ${failed.address ?? '?'}:${failed.port ?? '?'}: ${code}${code === 'EADDRINUSE' ? ' (another process uses the port)' : ''}`,
      );
    }
    throw error;
  }
}

/**
 * How a base URL with a path is joined (docs/observe.md): the path each request was received on is
 * appended to it, said at start, since a full callback URL given as --merchant-url doubles the path.
 */
function joinLine(address: { upstream: string; direction: ObservedExchange['direction'] } | undefined): string {
  if (!address) return '';
  const base = new URL(address.upstream);
  if (base.pathname === '/' || base.pathname === '') return '';
  const flag = address.direction === 'merchant→service' ? '--service-url' : '--merchant-url';
  const example = address.direction === 'merchant→service' ? '/api/v1/api/order/getEnergyMaxCount' : '/callback';
  return `observe: ${flag} has a path: the path each request is received on is appended to it (a request to ${example} goes on to ${base.origin}${upstreamPath(base, example)})\n`;
}

/** The line naming both addresses (what tests and scripts wait for). */
export function printAddresses(proxy: ObserveProxy, io: ObserveIo): void {
  const side = (direction: ObservedExchange['direction']) =>
    proxy.addresses.find((address) => address.direction === direction);
  const orders = side('merchant→service');
  const callbacks = side('service→merchant');
  io.out(
    io.scrubber.text(
      `observe: ${[
        orders
          ? `orders ${orders.url} → ${orders.upstream}${orders.cardUpstream ? ` (card close → ${orders.cardUpstream})` : ''}`
          : 'orders not observed (no --listen)',
        callbacks
          ? `callbacks ${callbacks.url} → ${callbacks.upstream}`
          : 'callbacks not observed (no --callback-listen)',
      ].join('; ')}\n${[orders, callbacks].map(joinLine).join('')}`,
    ),
  );
}

/** The page's feed: it opens payloads with the run's keys and scrubs as the console and the capture do. */
export function liveFeed(keys: ObserveKeys, profile: CryptoProfile | undefined, io: ObserveIo): LiveFeed {
  return new LiveFeed({ keys: judgeKeys(keys, profile), scrubber: io.scrubber });
}

/** A server beside the proxy that could not listen: the proxy is closed and it is one line (exit 2). */
async function cannotListen(error: unknown, at: Address, flag: string, proxy: ObserveProxy): Promise<never> {
  await proxy.close({ graceMs: 0 });
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  throw new ConfigError('cannot-listen', `cannot listen on ${at.host}:${at.port} for ${flag}: ${code}`);
}

/**
 * Starts the page after the proxy, prints its address, and warns when other machines can reach
 * it: it shows decrypted payloads.
 */
async function serveLivePage(
  feed: LiveFeed,
  metrics: ObserveMetrics,
  at: Address,
  proxy: ObserveProxy,
  io: ObserveIo,
): Promise<{ close: () => Promise<void> }> {
  try {
    const server = await startLivePage(feed, metrics, at.host, at.port);
    io.out(`observe: live page ${server.url}/ (metrics: ${server.url}/metrics, probes: ${server.url}/healthz)\n`);
    if (!isLoopback(at.host))
      io.err(
        `${MESSAGE_PREFIX} observe: warning: --ui ${at.host}:${at.port} accepts connections from other machines: the page shows decrypted payloads (secrets only as fingerprints) to anyone who reaches it\n`,
      );
    return server;
  } catch (error) {
    return cannotListen(error, at, '--ui', proxy);
  }
}

/** Starts the metrics server after the proxy. */
async function serveMetrics(
  metrics: ObserveMetrics,
  at: Address,
  proxy: ObserveProxy,
  io: ObserveIo,
): Promise<{ close: () => Promise<void> }> {
  try {
    const server = await startMetricsServer(metrics, at.host, at.port);
    io.out(`observe: metrics ${server.url}/metrics (probes: ${server.url}/healthz)\n`);
    return server;
  } catch (error) {
    return cannotListen(error, at, '--metrics', proxy);
  }
}

/** The servers beside the proxy (--ui, --metrics), started after it; one that cannot listen closes the others and is one line. */
export async function serveBeside(
  metrics: ObserveMetrics | undefined,
  page: LiveFeed | undefined,
  at: { metrics?: Address; ui?: Address },
  proxy: ObserveProxy,
  io: ObserveIo,
): Promise<{ close: () => Promise<void> }> {
  const pageServer = page && metrics && at.ui ? await serveLivePage(page, metrics, at.ui, proxy, io) : undefined;
  try {
    const metricsServer = metrics && at.metrics ? await serveMetrics(metrics, at.metrics, proxy, io) : undefined;
    return { close: async () => (await metricsServer?.close(), await pageServer?.close()) };
  } catch (error) {
    await pageServer?.close();
    throw error;
  }
}
