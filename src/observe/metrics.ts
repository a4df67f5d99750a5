/**
 * observe's metrics (`--metrics [HOST:]PORT`): Prometheus text format through prom-client, and
 * `/healthz` for probes. Names follow Prometheus conventions (a `wallet_conformance_observe_`
 * prefix, `_total` for counters, base units: seconds). Every label takes a bounded set of values:
 * kinds, directions and statuses are fixed lists, rule ids come from spec/rules.yaml, so the
 * series stay bounded over weeks.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram, Registry } from 'prom-client';
import type { ObserveFinding, ObservedExchange } from './exchange.js';

const PREFIX = 'wallet_conformance_observe_';

export interface ObserveMetrics {
  /** One exchange forwarded (and handed on for judging). */
  exchange(exchange: ObservedExchange): void;
  /** Failed and warning findings as the judge settles them. */
  findings(findings: readonly ObserveFinding[]): void;
  /** One exchange not judged (`shed`: the judge's bounded queue was full). */
  notJudged(reason: 'shed'): void;
  /** The Prometheus text of every metric. */
  text(): Promise<string>;
  readonly contentType: string;
}

/** The metrics of one observe run. */
export function createObserveMetrics(): ObserveMetrics {
  const registry = new Registry();
  const exchanges = new Counter({
    name: `${PREFIX}exchanges_total`,
    help: 'Exchanges forwarded, by kind (energy, withdraw, card-close, callback, other) and side (the party that sent the request).',
    labelNames: ['kind', 'side'] as const,
    registers: [registry],
  });
  const findings = new Counter({
    name: `${PREFIX}findings_total`,
    help: 'Failed and warning findings, by rule id and verdict.',
    labelNames: ['rule', 'verdict'] as const,
    registers: [registry],
  });
  const forwardingErrors = new Counter({
    name: `${PREFIX}forwarding_errors_total`,
    help: 'Exchanges the upstream failed (observe answered 502 or 504), by side and gateway status.',
    labelNames: ['side', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: `${PREFIX}exchange_duration_seconds`,
    help: "Time from the request's first byte to the answer's last byte, upstream included, by side.",
    labelNames: ['side'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const notJudged = new Counter({
    name: `${PREFIX}not_judged_total`,
    help: 'Exchanges forwarded but not judged, by reason (shed: the judge fell behind and its bounded queue was full).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Zero from the start, so an alert on its increase sees the first shed exchange. Under a load
  // the judge cannot follow most exchanges are shed: their series is looked up once.
  const shed = notJudged.labels({ reason: 'shed' });
  shed.inc(0);
  const sideOf = (exchange: ObservedExchange) => (exchange.direction === 'merchant→service' ? 'merchant' : 'service');
  // Every exchange counts here, on the forwarding thread: each label set's series is looked up once.
  const counted = new Map<string, ReturnType<typeof exchanges.labels>>();
  const timed = new Map<string, ReturnType<typeof latency.labels>>();
  const countOf = (kind: string, side: string) => {
    const key = `${kind} ${side}`;
    return counted.get(key) ?? counted.set(key, exchanges.labels({ kind, side })).get(key)!;
  };
  const timeOf = (side: string) => timed.get(side) ?? timed.set(side, latency.labels({ side })).get(side)!;
  return {
    exchange(exchange) {
      const side = sideOf(exchange);
      countOf(exchange.kind, side).inc();
      timeOf(side).observe(Math.max(0, exchange.endedAt - exchange.startedAt) / 1000);
      if (exchange.upstreamError) forwardingErrors.inc({ side, status: String(exchange.upstreamError.gatewayStatus) });
    },
    findings(settled) {
      for (const finding of settled) {
        if (finding.status !== 'failed' && finding.status !== 'warning') continue;
        for (const rule of finding.rules.length > 0 ? finding.rules : ['none'])
          findings.inc({ rule, verdict: finding.status });
      }
    },
    // `shed` is the only reason counted here (the interface names it).
    notJudged: () => shed.inc(),
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** Answers a GET of `/metrics` or `/healthz` (true), or leaves the request alone (false): the metrics server and the live page (`--ui`) both serve them. */
export function answerMetrics(metrics: ObserveMetrics, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz')
    return (res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ok\n'), true);
  if (path !== '/metrics') return false;
  metrics.text().then(
    (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
    (error: Error) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${error.message}\n`),
  );
  return true;
}

/**
 * Serves `/metrics` and `/healthz` (200 `ok` while the proxy runs); anything else is 404. Its own
 * server, so a slow or stuck scraper never holds a forwarding socket.
 */
export async function startMetricsServer(
  metrics: ObserveMetrics,
  host: string,
  port: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    if (!answerMetrics(metrics, req, res))
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: /metrics or /healthz\n');
  });
  // A scraper that stops reading is dropped rather than held for ever.
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve()));
  });
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
