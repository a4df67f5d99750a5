import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import { startFaultyReceiver } from './fixtures/faulty-receivers.js';
import { runCliAsync } from './support/cli.js';
import { makeKeyPair } from './support/merchant.js';

const API_KEY = 'ak-load-cli-7f3a';
const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-load-cli-'));
const keyFile = join(dir, 'merchant-private.pem');
writeFileSync(keyFile, keys.pem.privatePem);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SUMMARY =
  /^load: 200 events, 60 duplicate deliveries, processed exactly once: (yes|no), \d+ events\/s, p50 [\d.]+ ms, p99 [\d.]+ ms$/m;

describe('wallet-conformance load merchant', () => {
  it('storms the reference merchant, prints progress and the summary line, writes report.json and report.html, and exits 0', async () => {
    const merchant = await startMerchantServer({
      apiKeys: [API_KEY],
      publicKey: keys.publicKey,
      store: new MemoryIdempotencyStore(),
    });
    const reports = join(dir, 'good');
    try {
      const run = await runCliAsync(
        [
          'load',
          'merchant',
          '--callback-url',
          merchant.callbackUrl,
          '--private-key',
          keyFile,
          '--probe-url',
          merchant.probeUrl,
          '--events',
          '200',
          '--duplicates',
          '0.3',
          '--concurrency',
          '8',
          '--types',
          '1,3,4',
          '--reports',
          reports,
        ],
        { env: { WALLET_API_KEY: API_KEY } },
      );
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(SUMMARY);
      expect(run.stdout).toContain('processed exactly once: yes');
      expect(run.stdout).toMatch(/^load: \d+ s, \d+\/260 deliveries, /m);
      const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as {
        results: Array<{ status: string; rules: string[] }>;
        load: { histogram: Array<{ count: number }>; attempts: number };
      };
      expect(report.results[0]).toMatchObject({ status: 'passed', rules: expect.arrayContaining(['CB-ONCE']) });
      expect(report.load.histogram.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(report.load.attempts);
      expect(readFileSync(join(reports, 'report.html'), 'utf8')).toContain('Latency of each attempt');
      expect(run.stdout + readFileSync(join(reports, 'report.json'), 'utf8')).not.toContain(API_KEY);
    } finally {
      await merchant.close();
    }
  });

  it('exits 1 against a receiver without idempotency and lists the first events processed more than once', async () => {
    const receiver = await startFaultyReceiver('no-idempotency', { apiKey: API_KEY, publicKey: keys.publicKey });
    try {
      const run = await runCliAsync([
        'load',
        'merchant',
        '--callback-url',
        receiver.callbackUrl,
        '--api-key',
        API_KEY,
        '--private-key',
        keyFile,
        '--probe-url',
        receiver.probeUrl,
        '--events',
        '200',
        '--reports',
        join(dir, 'bad'),
      ]);
      expect(run.status).toBe(1);
      expect(run.stdout).toMatch(SUMMARY);
      expect(run.stdout).toContain('processed exactly once: no');
      expect(run.stdout).toMatch(/^ {2}processed 2 times: type [13], trackingId load-/m);
      expect(JSON.parse(readFileSync(join(dir, 'bad', 'report.json'), 'utf8')).results[0].status).toBe('failed');
    } finally {
      await receiver.close();
    }
  });

  it('reads the probe through --probe-cmd and paces deliveries with --rate', async () => {
    const merchant = await startMerchantServer({
      apiKeys: [API_KEY],
      publicKey: keys.publicKey,
      store: new MemoryIdempotencyStore(),
    });
    try {
      const probeCmd = `"${process.execPath}" -e "fetch('${merchant.probeUrl}').then((r) => r.text()).then((t) => process.stdout.write(t))"`;
      const run = await runCliAsync([
        'load',
        'merchant',
        '--callback-url',
        merchant.callbackUrl,
        '--api-key',
        API_KEY,
        '--private-key',
        keyFile,
        '--probe-cmd',
        probeCmd,
        '--events',
        '200',
        '--rate',
        '400',
        '--reports',
        join(dir, 'cmd'),
      ]);
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(SUMMARY);
      expect(run.stdout).toContain('processed exactly once: yes');
      const report = JSON.parse(readFileSync(join(dir, 'cmd', 'report.json'), 'utf8')) as {
        load: { durationMs: number };
      };
      // 260 delivery starts at 400/s cannot take less than 0.65 s: the rate was honoured.
      expect(report.load.durationMs).toBeGreaterThanOrEqual(640);
    } finally {
      await merchant.close();
    }
  });

  it.each([
    [['--events', '0'], /--events takes a whole number from 1 to 100000/],
    [['--types', '1,9'], /--types takes callback types from 1,2,3,4,5,6,7/],
    [['--duration', '99999'], /--duration takes a number from 1 to 3600/],
    [['--callback-url', 'ftp://x'], /--callback-url must be an http:\/\/ or https:\/\/ URL/],
  ])('refuses %j with one line and exit 2', async (flags, message) => {
    const run = await runCliAsync([
      'load',
      'merchant',
      '--callback-url',
      'http://127.0.0.1:9/callback',
      '--api-key',
      API_KEY,
      '--private-key',
      keyFile,
      ...flags,
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it('refuses an unreachable callback URL before the storm, with exit 2', async () => {
    const run = await runCliAsync([
      'load',
      'merchant',
      '--callback-url',
      'http://127.0.0.1:9/callback',
      '--api-key',
      API_KEY,
      '--private-key',
      keyFile,
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--callback-url http:\/\/127\.0\.0\.1:9\/callback is unreachable: ECONNREFUSED/);
  });
});
