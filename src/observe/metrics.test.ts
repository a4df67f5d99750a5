import { afterEach, describe, expect, it } from 'vitest';
import type { ObservedExchange } from './exchange.js';
import { createObserveMetrics, startMetricsServer } from './metrics.js';

function exchange(overrides: Partial<ObservedExchange> = {}): ObservedExchange {
  return {
    v: 1,
    seq: 1,
    kind: 'withdraw',
    direction: 'merchant→service',
    startedAt: 1_000,
    endedAt: 1_040,
    request: { method: 'POST', path: '/api/v1/api/order/withdrawWithoutVerify', headers: {}, bodyBase64: '' },
    response: { status: 200, headers: {}, bodyBase64: '' },
    ...overrides,
  };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('observe metrics', () => {
  it('counts exchanges by kind and side, upstream failures by status, findings by rule and verdict, what was not judged', async () => {
    const metrics = createObserveMetrics();
    expect(await metrics.text()).toContain('wallet_conformance_observe_not_judged_total{reason="shed"} 0');
    metrics.exchange(exchange());
    metrics.exchange(
      exchange({
        kind: 'callback',
        direction: 'service→merchant',
        response: undefined,
        upstreamError: { message: 'x', gatewayStatus: 504 },
      }),
    );
    metrics.findings([
      { id: 'a', suite: 'observe', case: 'seq-1', title: 't', rules: ['CB-ERRCODE'], status: 'failed', message: 'm' },
      { id: 'b', suite: 'observe', case: 'seq-1', title: 't', rules: ['U-RETRY'], status: 'warning', message: 'm' },
      { id: 'c', suite: 'observe', case: 'all', title: 't', rules: ['ENV-CODE'], status: 'passed', message: 'm' },
    ]);
    for (let i = 0; i < 3; i++) metrics.notJudged('shed');
    const text = await metrics.text();
    expect(text).toContain('wallet_conformance_observe_exchanges_total{kind="withdraw",side="merchant"} 1');
    expect(text).toContain('wallet_conformance_observe_exchanges_total{kind="callback",side="service"} 1');
    expect(text).toContain('wallet_conformance_observe_forwarding_errors_total{side="service",status="504"} 1');
    expect(text).toContain('wallet_conformance_observe_findings_total{rule="CB-ERRCODE",verdict="failed"} 1');
    expect(text).toContain('wallet_conformance_observe_findings_total{rule="U-RETRY",verdict="warning"} 1');
    expect(text).not.toContain('ENV-CODE');
    expect(text).toContain('wallet_conformance_observe_not_judged_total{reason="shed"} 3');
    expect(text).toContain('wallet_conformance_observe_exchange_duration_seconds_bucket{le="0.05",side="merchant"} 1');
    expect(text).toContain('# TYPE wallet_conformance_observe_exchanges_total counter');
  });

  it('serves /metrics in the Prometheus text format and /healthz, nothing else', async () => {
    const metrics = createObserveMetrics();
    metrics.exchange(exchange());
    const server = await startMetricsServer(metrics, '127.0.0.1', 0);
    closers.push(server.close);
    const scraped = await fetch(`${server.url}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await scraped.text()).toContain(
      'wallet_conformance_observe_exchanges_total{kind="withdraw",side="merchant"} 1',
    );
    const health = await fetch(`${server.url}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    expect((await fetch(`${server.url}/other`)).status).toBe(404);
  });
});
