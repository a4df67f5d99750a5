import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import type { Report } from '../src/runner/types.js';
import { runCliWithEnv as cli, startTestProxy, type TestProxy } from './support/network.js';

describe('proxies: HTTPS_PROXY tunnels https with CONNECT, HTTP_PROXY carries http, NO_PROXY bypasses both', () => {
  let secure: Embedded;
  let plain: Embedded;
  let proxy: TestProxy;
  const dir = mkdtempSync(join(tmpdir(), 'wc-proxy-'));
  const file = (name: string) => join(dir, name);

  beforeAll(async () => {
    [secure, plain] = await Promise.all([startEmbedded({ tls: true }), startEmbedded()]);
    writeFileSync(file('ca.pem'), secure.ca!);
    writeFileSync(
      file('secure-private.pem'),
      secure.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }),
    );
    writeFileSync(
      file('plain-private.pem'),
      plain.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }),
    );
    proxy = await startTestProxy();
  }, 60_000);
  beforeEach(() => {
    proxy.connects.length = 0;
    proxy.forwarded.length = 0;
  });
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([secure?.close(), plain?.close()]);
  });

  // The server certificate names localhost too: through the tunnel the name is checked against it.
  const secureUrl = () => secure.merchant.callbackUrl.replace('127.0.0.1', 'localhost');
  const verifySecure = (reports: string) => [
    'verify',
    'merchant',
    '--callback-url',
    secureUrl(),
    '--api-key',
    secure.merchant.apiKey,
    '--private-key',
    file('secure-private.pem'),
    '--probe-url',
    secure.merchant.probeUrl!.replace('127.0.0.1', 'localhost'),
    '--suite',
    'merchant/raw-body',
    '--ca',
    file('ca.pem'),
    '--reports',
    file(reports),
  ];

  it('verify merchant reaches an https target through the CONNECT proxy and passes', async () => {
    const run = await cli(verifySecure('tunnel'), { HTTPS_PROXY: proxy.url });
    expect(run.stderr).toBe('');
    const port = new URL(secure.merchant.callbackUrl).port;
    expect(proxy.connects.length).toBeGreaterThan(0);
    expect(new Set(proxy.connects)).toEqual(new Set([`localhost:${port}`]));
    expect(proxy.forwarded).toEqual([]);
    const report = JSON.parse(readFileSync(file('tunnel/report.json'), 'utf8')) as Report;
    expect(report.summary.failed).toBe(0);
    expect(report.summary.passed).toBeGreaterThan(0);
    expect(run.status).toBe(0);
  }, 90_000);

  it('NO_PROXY naming the host sends the same run directly: the proxy sees nothing', async () => {
    const run = await cli(verifySecure('bypass'), { HTTPS_PROXY: proxy.url, NO_PROXY: '.example,localhost' });
    expect(run.stderr).toBe('');
    expect(proxy.connects).toEqual([]);
    expect(run.status).toBe(0);
  }, 90_000);

  it('an http target goes through HTTP_PROXY in absolute form', async () => {
    const run = await cli(
      [
        'callback',
        'send',
        '--url',
        plain.merchant.callbackUrl,
        '--api-key',
        plain.merchant.apiKey,
        '--private-key',
        file('plain-private.pem'),
        '--type',
        '1',
      ],
      { HTTP_PROXY: proxy.url },
    );
    expect(run.stdout).toMatch(/delivery 1\/1: HTTP 200 \{"errCode":0/);
    expect(proxy.forwarded).toEqual([plain.merchant.callbackUrl]);
    expect(proxy.connects).toEqual([]);
    expect(run.status).toBe(0);
  }, 60_000);

  it('a proxy that is down is one line naming the proxy, exit 2', async () => {
    const run = await cli(verifySecure('down'), { HTTPS_PROXY: 'http://127.0.0.1:9' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^wallet-conformance: --callback-url https:\/\/localhost:\d+\/callback is unreachable: the proxy http:\/\/127\.0\.0\.1:9 \(for CONNECT localhost:\d+\) failed: ECONNREFUSED/,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});
