/**
 * `verify merchant --replay FILE` with the real CLI: the callbacks of an observe capture (recorded
 * here between a sender and the reference merchant, the key header scrubbed to its fingerprint as a
 * capture holds it) are resent byte for byte to a receiver and its answers judged: the reference
 * merchant passes, a merchant answering without errCode fails under CB-ERRCODE, a malformed capture
 * is one line and exit 2.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LosslessNumber } from '../src/core/exact-json.js';
import { fingerprint } from '../src/secrets/scrub.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import type { ObservedExchange } from '../src/observe/exchange.js';
import { sealCallback, withRequestUUID } from '../src/wire/callback-delivery.js';
import { startFaultyMerchant } from './fixtures/faulty-merchant.js';
import { runCliAsync } from './support/cli.js';
import { Recording, startRecordingProxy } from './support/recording-proxy.js';

interface ReportFile {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: Array<{ id: string; rules: string[]; status: string; message: string }>;
  notes?: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'wc-observe-replay-'));
const pair = generateMerchantKeyPair(1024);
const privateKey = parseKey(pair.privatePem, { expect: 'private' }) as RsaPrivateKey;
// No 8 characters of the key may appear in the temporary folder's name: the scrubber hides any 8-character window of a secret (the folder wc-observe-replay-7… once showed as a fingerprint).
const apiKey = 'ak-7f3e91c2d4a8b6';
const keyFile = join(dir, 'merchant-private.pem');
const capture = join(dir, 'observed.capture.jsonl');
let reference: MerchantServer;

beforeAll(async () => {
  writeFileSync(keyFile, pair.privatePem, { mode: 0o600 });
  // The capture: three events delivered to a reference merchant through a recording proxy.
  const recorder = await startMerchantServer({ apiKeys: [apiKey], publicKey: privateKey.publicKey, store: ':memory:' });
  const recording = new Recording();
  const proxy = await startRecordingProxy(new URL(recorder.callbackUrl).origin, 'service→merchant', recording);
  try {
    for (const type of [4, 4, 4]) {
      const payload = withRequestUUID({
        type: new LosslessNumber(String(type)),
        trackingId: `t-${type}-${recording.exchanges.length}`,
        tenantUserId: 'u-1',
        chain: 'TRON',
      });
      await fetch(`${proxy.url}/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
        body: sealCallback(payload, privateKey),
      });
    }
  } finally {
    await proxy.close();
    await recorder.close();
  }
  const lines = recording.exchanges
    .sort((a, b) => a.seq - b.seq)
    .map((exchange): ObservedExchange => ({
      ...exchange,
      request: {
        ...exchange.request,
        headers: { ...exchange.request.headers, 'x-api-key': fingerprint(apiKey, 'ak') },
      },
    }));
  expect(lines).toHaveLength(3);
  writeFileSync(capture, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  reference = await startMerchantServer({ apiKeys: [apiKey], publicKey: privateKey.publicKey, store: ':memory:' });
});

afterAll(async () => {
  await reference?.close();
  rmSync(dir, { recursive: true, force: true });
});

function readReport(reports: string, run: { status: number | null; stdout: string; stderr: string }): ReportFile {
  if (!existsSync(join(reports, 'report.json')))
    throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as ReportFile;
}

describe('verify merchant --replay', () => {
  it('resends the captured callbacks to the reference merchant: every answer acknowledges, exit 0', async () => {
    const reports = join(dir, 'reference');
    const run = await runCliAsync([
      'verify',
      'merchant',
      '--replay',
      capture,
      '--callback-url',
      reference.callbackUrl,
      '--api-key',
      apiKey,
      '--private-key',
      keyFile,
      '--reports',
      reports,
    ]);
    const report = readReport(reports, run);
    expect(report.summary.failed, JSON.stringify(report.results.filter((r) => r.status === 'failed'))).toBe(0);
    expect(run.status, run.stderr).toBe(0);
    expect(report.results.find((r) => r.id === 'observe/all/callback-answer')).toMatchObject({
      status: 'passed',
      message: 'passed on 3 judgements (seq 1…3)',
    });
    expect(report.notes?.[0]).toBe(`replayed 3 captured callback deliveries of 3 captured exchange(s) from ${capture}`);
    // Only the merchant's side is judged: the service's bytes are the capture's.
    expect(report.results.filter((r) => r.id.includes('callback-decrypts'))).toEqual([]);
    expect(readFileSync(join(reports, 'report.json'), 'utf8')).not.toContain(apiKey);
  });

  it('judges a merchant answering without errCode: CB-ERRCODE, exit 1', async () => {
    const faulty = await startFaultyMerchant('code-not-errcode', {
      apiKey,
      publicKey: privateKey.publicKey,
      profile: {
        padding: 'pkcs1',
        request: 'public',
        response: 'private',
        callback: 'private',
        plaintextBlock: 'auto',
      },
    });
    try {
      const reports = join(dir, 'faulty');
      const run = await runCliAsync([
        'verify',
        'merchant',
        '--replay',
        capture,
        '--callback-url',
        faulty.callbackUrl,
        '--api-key',
        apiKey,
        '--private-key',
        keyFile,
        '--reports',
        reports,
      ]);
      const report = readReport(reports, run);
      expect(run.status).toBe(1);
      const failed = report.results.filter((r) => r.status === 'failed');
      expect(failed.map((r) => [r.id, r.rules])).toEqual(
        [1, 2, 3].map((seq) => [`observe/seq-${seq}/callback-answer`, ['CB-ERRCODE']]),
      );
      expect(run.stdout).toMatch(/FAIL .*observe\/seq-1\/callback-answer \[CB-ERRCODE\]: HTTP 200 without errCode/);
    } finally {
      await faulty.close();
    }
  });

  it('refuses a malformed capture with one line naming the file and the line, exit 2, before sending anything', async () => {
    const bad = join(dir, 'bad.capture.jsonl');
    writeFileSync(bad, `${readFileSync(capture, 'utf8').split('\n')[0]}\n{"v":1,"seq":2}\n`);
    let received = 0;
    // The reachability check before the replay is not a delivery: only POSTs count.
    const counting = createServer(
      (req, res) => (
        req.method === 'POST' && received++,
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0}')
      ),
    );
    await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
    try {
      const run = await runCliAsync([
        'verify',
        'merchant',
        '--replay',
        bad,
        '--callback-url',
        `http://127.0.0.1:${(counting.address() as AddressInfo).port}/callback`,
        '--api-key',
        apiKey,
        '--private-key',
        keyFile,
        '--reports',
        join(dir, 'bad'),
      ]);
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(
        `${bad}:2: kind must be one of energy, withdraw, card-close, callback, other, not undefined`,
      );
      expect(received).toBe(0);
    } finally {
      await new Promise((resolve) => counting.close(resolve));
    }
  });

  it("does not resend a delivery whose Authorization the capture holds as a fingerprint, and says it is the capture's limit", async () => {
    const withCredential = join(dir, 'credential.capture.jsonl');
    const lines = readFileSync(capture, 'utf8').trimEnd().split('\n');
    const first = JSON.parse(lines[0]!) as ObservedExchange;
    first.request.headers.authorization = `Bearer ${fingerprint('tok_0123456789abcdef', 'au')}`;
    // The last line is cut short, as a kill while writing leaves it: skipped, said in the notes.
    writeFileSync(
      withCredential,
      `${[JSON.stringify(first), ...lines.slice(1)].join('\n')}\n${lines[0]!.slice(0, 30)}`,
    );
    const reports = join(dir, 'credential');
    const run = await runCliAsync([
      'verify',
      'merchant',
      '--replay',
      withCredential,
      '--callback-url',
      reference.callbackUrl,
      '--api-key',
      apiKey,
      '--private-key',
      keyFile,
      '--reports',
      reports,
    ]);
    const report = readReport(reports, run);
    expect(run.status, run.stderr).toBe(0);
    expect(report.notes).toEqual(
      expect.arrayContaining([
        `replayed 2 captured callback deliveries of 3 captured exchange(s) from ${withCredential}`,
        `${withCredential}:4: the last line is cut short (observe stopped while writing it): skipped, the lines before it are read`,
        expect.stringMatching(
          /^1 delivery carries another secret header \(Authorization, Cookie, \.\.\.\) that a capture holds only as a fingerprint: not replayed/,
        ),
      ]),
    );
  });
});
