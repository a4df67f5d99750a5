/**
 * `load merchant` on the network as `verify` is (--ca, --insecure, --cert, --key over real TLS), and
 * its verdict: exit 1 when an event was never acknowledged; without a probe it says processing was
 * not checked.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeThrowawayCa } from '../src/crypto/throwaway-certificates.js';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import { runCliAsync } from './support/cli.js';
import { makeKeyPair } from './support/merchant.js';

const API_KEY = 'ak-load-network-5e81';
const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-load-network-'));
const file = (name: string) => join(dir, name);
writeFileSync(file('merchant-private.pem'), keys.pem.privatePem);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const storm = (callbackUrl: string, reports: string, extra: string[]) =>
  runCliAsync(
    [
      'load',
      'merchant',
      '--callback-url',
      callbackUrl,
      '--private-key',
      file('merchant-private.pem'),
      '--events',
      '60',
      '--duplicates',
      '0.2',
      '--concurrency',
      '8',
      '--reports',
      file(reports),
      ...extra,
    ],
    { env: { WALLET_API_KEY: API_KEY } },
  );

describe('load merchant over HTTPS (real TLS)', () => {
  let merchant: MerchantServer;
  let mtls: MerchantServer;
  beforeAll(async () => {
    const ca = makeThrowawayCa('load test CA');
    writeFileSync(file('ca.pem'), ca.cert);
    const client = ca.issue({ names: ['load client'], client: true });
    writeFileSync(file('client.pem'), client.cert);
    writeFileSync(file('client-key.pem'), client.key);
    merchant = await startMerchantServer({
      apiKeys: [API_KEY],
      publicKey: keys.publicKey,
      store: new MemoryIdempotencyStore(),
      tls: ca.issue({ names: ['127.0.0.1', 'localhost'] }),
    });
    mtls = await startMerchantServer({
      apiKeys: [API_KEY],
      publicKey: keys.publicKey,
      store: new MemoryIdempotencyStore(),
      tls: { ...ca.issue({ names: ['127.0.0.1', 'localhost'] }), clientCa: ca.cert },
    });
  });
  afterAll(async () => {
    await merchant.close();
    await mtls.close();
  });

  it("trusts the merchant's CA with --ca: every event acknowledged and processed once, the probe read over the same TLS", async () => {
    const run = await storm(merchant.callbackUrl, 'ca', ['--ca', file('ca.pem'), '--probe-url', merchant.probeUrl]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('processed exactly once: yes');
    expect(run.stdout).not.toContain('never acknowledged');
  }, 60_000);

  it('without --ca the certificate is not trusted: no event is acknowledged, exit 1, and the reason is named', async () => {
    const run = await storm(merchant.callbackUrl, 'no-ca', ['--duration', '2']);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^60 of 60 events were never acknowledged \(errCode 0\): the storm fails$/m);
    expect(run.stdout).toMatch(/deliveries were never acknowledged \(.*(CERT|SIGNATURE|ISSUER).*\)/);
  }, 60_000);

  it('--insecure skips verification and warns once', async () => {
    const run = await storm(merchant.callbackUrl, 'insecure', ['--insecure', '--probe-url', merchant.probeUrl]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: --insecure: TLS certificates are not verified/);
    expect(
      (JSON.parse(readFileSync(file('insecure/report.json'), 'utf8')) as { target: { tls?: unknown } }).target.tls,
    ).toMatchObject({ insecure: true });
  }, 60_000);

  it('presents a client certificate with --cert and --key to a merchant that requires one (mTLS)', async () => {
    const run = await storm(mtls.callbackUrl, 'mtls', [
      '--ca',
      file('ca.pem'),
      '--cert',
      file('client.pem'),
      '--key',
      file('client-key.pem'),
      '--probe-url',
      mtls.probeUrl,
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('processed exactly once: yes');
    expect(run.stdout + run.stderr + readFileSync(file('mtls/report.json'), 'utf8')).not.toContain(
      readFileSync(file('client-key.pem'), 'utf8').split('\n')[1]!,
    );
  }, 60_000);

  it('refuses --cert without --key with one line and exit 2', async () => {
    const run = await storm(merchant.callbackUrl, 'half', ['--cert', file('client.pem')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/a client certificate needs both --cert FILE and --key FILE/);
  });
});

describe('load merchant against a receiver that acknowledges nothing', () => {
  let receiver: Server;
  let url: string;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":1,"message":"not now"}'),
      );
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
  });
  afterAll(() => new Promise((done) => receiver.close(done)));

  it('exits 1 without a probe, and says that processing was not checked', async () => {
    // --duration 2: what is judged is that no answer acknowledged, not how long the retries (6 s per event) go on.
    const run = await storm(url, 'nothing', ['--events', '10', '--duplicates', '0', '--duration', '2']);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('processing is not checked');
    expect(run.stdout).toMatch(/^10 of 10 events were never acknowledged \(errCode 0\): the storm fails$/m);
    expect(run.stdout).toMatch(
      /^processing was not checked: no --probe-url or --probe-cmd, so only the answers were judged$/m,
    );
    const report = JSON.parse(readFileSync(file('nothing/report.json'), 'utf8')) as {
      summary: { failed: number; skipped: number };
      results: Array<{ id: string; status: string }>;
    };
    expect(report.results.map((result) => [result.id, result.status])).toEqual([
      ['load/merchant/exactly-once', 'skipped'],
      ['load/merchant/acknowledged', 'failed'],
    ]);
    expect(report.summary).toMatchObject({ failed: 1, skipped: 1 });
  }, 60_000);
});
