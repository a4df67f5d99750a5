import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { makeThrowawayCa, type CertificatePair, type ThrowawayCa } from '../src/crypto/throwaway-certificates.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import type { Report } from '../src/runner/types.js';
import { runCliWithEnv as cli } from './support/network.js';

const DAY = 86_400_000;

/** A small HTTPS server that answers every request with an empty JSON object. */
async function answeringServer(pair: CertificatePair): Promise<{ url: string; close(): Promise<void> }> {
  const server = https.createServer({ cert: pair.cert, key: pair.key }, (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
  );
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function reportOf(dir: string): Report {
  return JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
}

describe('HTTPS targets: the emulator and the reference merchant serve TLS, the CLI verifies them', () => {
  let embedded: Embedded;
  let own: ThrowawayCa;
  let mtlsMerchant: MerchantServer;
  const dir = mkdtempSync(join(tmpdir(), 'wc-https-'));
  const file = (name: string) => join(dir, name);

  beforeAll(async () => {
    embedded = await startEmbedded({ tls: true });
    writeFileSync(file('ca.pem'), embedded.ca!);
    writeFileSync(file('public.pem'), embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
    writeFileSync(file('private.pem'), embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }));
    // A second CA, made here: it signs the mTLS merchant's certificate and the client certificate.
    own = makeThrowawayCa('test CA');
    writeFileSync(file('own-ca.pem'), own.cert);
    const client = own.issue({ names: ['wallet-conformance client'], client: true });
    writeFileSync(file('client.pem'), client.cert);
    writeFileSync(file('client-key.pem'), client.key);
    const stranger = makeThrowawayCa('stranger CA').issue({ names: ['stranger client'], client: true });
    writeFileSync(file('stranger.pem'), stranger.cert);
    writeFileSync(file('stranger-key.pem'), stranger.key);
    mtlsMerchant = await startMerchantServer({
      apiKeys: [embedded.merchant.apiKey],
      publicKey: embedded.service.publicKey,
      profile: embedded.merchant.profile,
      store: ':memory:',
      tls: { ...own.issue({ names: ['127.0.0.1', 'localhost'] }), clientCa: own.cert },
    });
  }, 60_000);
  afterAll(async () => {
    await mtlsMerchant?.close();
    await embedded?.close();
  });

  const merchantArgs = (url: string, reports: string) => [
    'verify',
    'merchant',
    '--callback-url',
    url,
    '--api-key',
    embedded.merchant.apiKey,
    '--private-key',
    file('private.pem'),
    '--suite',
    'merchant/raw-body',
    '--reports',
    file(reports),
  ];

  it('verify service passes the HTTPS emulator with --ca, and the report notes nothing insecure', async () => {
    const s = embedded.service;
    expect(s.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const run = await cli([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
      '--user-id',
      String(s.userId),
      '--control-token',
      s.controlToken!,
      '--suite',
      'service/energy',
      '--ca',
      file('ca.pem'),
      '--reports',
      file('service'),
    ]);
    expect(run.stderr).toBe('');
    const report = reportOf(file('service'));
    expect(report.summary.passed).toBeGreaterThan(5);
    expect(report.summary.failed).toBe(0);
    expect(report.target.tls).toEqual({ extraCaCertificates: 1 });
    expect(run.status).toBe(0);
  }, 90_000);

  it('without --ca the same run stops before it starts: exit 2 and one line naming the unknown CA', async () => {
    const s = embedded.service;
    const run = await cli([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
      '--suite',
      'service/energy',
      '--reports',
      file('no-ca'),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      /--base-url https:\/\/127\.0\.0\.1:\d+: TLS: the certificate of 127\.0\.0\.1:\d+ is signed by an unknown CA .*--ca FILE/,
    );
  }, 60_000);

  it('NODE_EXTRA_CA_CERTS trusts the CA as --ca does', async () => {
    const run = await cli(merchantArgs(embedded.merchant.callbackUrl, 'extra-ca'), {
      NODE_EXTRA_CA_CERTS: file('ca.pem'),
    });
    expect(run.stderr).toBe('');
    expect(reportOf(file('extra-ca')).summary.failed).toBe(0);
    expect(run.status).toBe(0);
  }, 60_000);

  it('--insecure reaches the target without the CA, warns once on stderr and notes it in report.json', async () => {
    const run = await cli([...merchantArgs(embedded.merchant.callbackUrl, 'insecure'), '--insecure']);
    expect(run.stderr.trim().split('\n')).toEqual([
      'wallet-conformance: warning: --insecure: TLS certificates are not verified; the reports note it',
    ]);
    const report = reportOf(file('insecure'));
    expect(report.target.tls).toEqual({ insecure: true });
    expect(report.summary.passed).toBeGreaterThan(0);
    expect(run.status).toBe(0);
  }, 60_000);

  it('callback send delivers over HTTPS with --ca', async () => {
    const run = await cli([
      'callback',
      'send',
      '--url',
      embedded.merchant.callbackUrl,
      '--api-key',
      embedded.merchant.apiKey,
      '--private-key',
      file('private.pem'),
      '--type',
      '1',
      '--field',
      'amount=1.50',
      '--ca',
      file('ca.pem'),
    ]);
    expect(run.stdout).toMatch(/delivery 1\/1: HTTP 200 \{"errCode":0/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('a certificate for another name is a name mismatch: exit 2 and one line saying so', async () => {
    const server = await answeringServer(own.issue({ names: ['wallet.example'] }));
    try {
      const run = await cli([...merchantArgs(server.url, 'mismatch'), '--ca', file('own-ca.pem')]);
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(
        /TLS: the certificate of 127\.0\.0\.1:\d+ does not name that host \(name mismatch\) \[ERR_TLS_CERT_ALTNAME_INVALID\]/,
      );
    } finally {
      await server.close();
    }
  }, 60_000);

  it('an expired certificate: exit 2 and one line saying it expired', async () => {
    const server = await answeringServer(
      own.issue({
        names: ['127.0.0.1'],
        notBefore: new Date(Date.now() - 10 * DAY),
        notAfter: new Date(Date.now() - DAY),
      }),
    );
    try {
      const run = await cli([...merchantArgs(server.url, 'expired'), '--ca', file('own-ca.pem')]);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/TLS: the certificate of 127\.0\.0\.1:\d+ is expired \[CERT_HAS_EXPIRED\]/);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a merchant that requires a client certificate passes with --cert/--key and says what is missing without them', async () => {
    const given = await cli([
      ...merchantArgs(mtlsMerchant.callbackUrl, 'mtls'),
      '--ca',
      file('own-ca.pem'),
      '--cert',
      file('client.pem'),
      '--key',
      file('client-key.pem'),
    ]);
    expect(given.stderr).toBe('');
    expect(reportOf(file('mtls')).target.tls).toEqual({ extraCaCertificates: 1, clientCertificate: true });
    expect(given.status).toBe(0);

    const missing = await cli([...merchantArgs(mtlsMerchant.callbackUrl, 'mtls-missing'), '--ca', file('own-ca.pem')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(/TLS: .*(requires a client certificate|handshake .* client certificate)/);

    const wrong = await cli([
      ...merchantArgs(mtlsMerchant.callbackUrl, 'mtls-wrong'),
      '--ca',
      file('own-ca.pem'),
      '--cert',
      file('stranger.pem'),
      '--key',
      file('stranger-key.pem'),
    ]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(
      /TLS: 127\.0\.0\.1:\d+ (refused the client certificate|closed the connection right after the handshake .*did it refuse the client certificate)/,
    );
  }, 90_000);

  it('a --cert without --key, or a key of another certificate, is one line and exit 2', async () => {
    const alone = await cli([...merchantArgs(mtlsMerchant.callbackUrl, 'x'), '--cert', file('client.pem')]);
    expect(alone.stderr).toBe('wallet-conformance: a client certificate needs both --cert FILE and --key FILE\n');
    expect(alone.status).toBe(2);
    const mixed = await cli([
      ...merchantArgs(mtlsMerchant.callbackUrl, 'x'),
      '--cert',
      file('client.pem'),
      '--key',
      file('stranger-key.pem'),
    ]);
    expect(mixed.stderr).toMatch(/^wallet-conformance: --cert .* and --key .* are not a usable pair: .*\n$/);
    expect(mixed.stderr).not.toContain('PRIVATE KEY');
    expect(mixed.status).toBe(2);
  }, 60_000);

  it('pact verify passes the HTTPS emulator with --ca (the Pact verifier goes through loopback relays)', async () => {
    const s = embedded.service;
    const run = await cli([
      'pact',
      'verify',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
      '--user-id',
      String(s.userId),
      '--control-token',
      s.controlToken!,
      '--forbidden-key',
      s.forbiddenKey!,
      '--ca',
      file('ca.pem'),
      '--log-level',
      'error',
    ]);
    expect(run.stdout).toMatch(
      /pact verify: Pact verifier passed; decrypted data checks: 3 passed, 0 failed, 0 skipped/,
    );
    expect(run.status).toBe(0);
    const untrusted = await cli([
      'pact',
      'verify',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
    ]);
    expect(untrusted.stderr).toMatch(/TLS: the certificate of .* unknown CA/);
    expect(untrusted.status).toBe(2);
  }, 90_000);

  it('run --tls runs both sides over HTTPS with a throwaway CA and passes', async () => {
    const run = await cli(['run', '--tls', '--suite', '*raw-body*', '--reports', file('run-tls')]);
    expect(run.stdout).toMatch(
      /emulator https:\/\/127\.0\.0\.1:\d+, reference merchant https:\/\/127\.0\.0\.1:\d+\/callback/,
    );
    expect(run.stderr).toBe('');
    expect(reportOf(file('run-tls')).summary.failed).toBe(0);
    expect(run.status).toBe(0);
  }, 90_000);
});
