import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import type { Report } from '../src/runner/types.js';
import { runCliAsync } from './support/cli.js';

const cli = runCliAsync;

describe('verify (the real CLI) against running targets', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-verify-'));
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(
      join(dir, 'public.pem'),
      embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
    );
    writeFileSync(
      join(dir, 'private.pem'),
      embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }),
    );
  });
  afterAll(() => embedded.close());
  /** Every merchant suite without a probe, run once for the two tests that judge such a run (m2). */
  let withoutProbe: ReturnType<typeof cli> | undefined;
  const merchantWithoutProbe = () => {
    const m = embedded.merchant;
    withoutProbe ??= cli([
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--reports',
      join(dir, 'm2'),
    ]);
    return withoutProbe;
  };

  it('verify service runs order cases against the emulator without --allow-orders, and passes', async () => {
    const s = embedded.service;
    const run = await cli([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      join(dir, 'public.pem'),
      '--user-id',
      String(s.userId),
      '--suite',
      'service/orders',
      '--reports',
      join(dir, 'service'),
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('the target is the wallet-conformance emulator');
    const report = JSON.parse(readFileSync(join(dir, 'service', 'report.json'), 'utf8')) as Report;
    expect(report.results.filter((r) => r.message.includes('--allow-orders'))).toEqual([]);
    // Cases needing the control API are skipped (no --control-token), never passed.
    expect(
      report.results.filter((r) => r.status === 'skipped').every((r) => r.message.includes('--control-token')),
    ).toBe(true);
    expect(report.summary.failed).toBe(0);
    expect(run.status).toBe(0);
  }, 60_000);

  it('verify merchant passes the reference merchant and exits 0; without the probe, idempotency checks are skipped', async () => {
    const m = embedded.merchant;
    const withProbe = await cli([
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--probe-url',
      m.probeUrl!,
      '--reports',
      join(dir, 'm1'),
    ]);
    expect(withProbe.status).toBe(0);
    const noProbe = await merchantWithoutProbe();
    const report = JSON.parse(readFileSync(join(dir, 'm2', 'report.json'), 'utf8')) as Report;
    expect(report.results.some((r) => r.status === 'skipped' && r.rules.includes('CB-ONCE'))).toBe(true);
    expect(report.results.filter((r) => r.status === 'passed' && r.id.includes('/processed'))).toEqual([]);
    expect(noProbe.status).toBe(0);
  }, 60_000);

  it('verify merchant exits 1 when a MUST check fails (the merchant accepts a key given as expired)', async () => {
    const m = embedded.merchant;
    const run = await cli([
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--expired-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--suite',
      'merchant/key-first',
      '--reports',
      join(dir, 'm3'),
    ]);
    expect(run.stdout).toMatch(/FAIL .*merchant\/key-first\/expired-key\/answers \[CB-KEY-401\]/);
    expect(run.status).toBe(1);
  }, 60_000);

  it('--settle-ms takes whole milliseconds (0: the probe is read once); anything else is one line and exit 2', async () => {
    const m = embedded.merchant;
    const args = [
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--probe-url',
      m.probeUrl!,
      '--suite',
      'merchant/idempotency',
    ];
    const bad = await cli([...args, '--settle-ms', 'soon', '--reports', join(dir, 'm9')]);
    expect([bad.stderr.trim(), bad.status]).toEqual([
      'wallet-conformance: --settle-ms takes a whole number, not "soon"',
      2,
    ]);
    const once = await cli([...args, '--settle-ms', '0', '--reports', join(dir, 'm10')]);
    expect(once.status, once.stdout).toBe(0);
  }, 60_000);

  it('a wrong --api-key is not proven by a 401 (a broken key check answers so too): the first line says what to check, the suites judge, exit 1', async () => {
    const m = embedded.merchant;
    const run = await cli([
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      'not-the-merchants-key',
      '--private-key',
      join(dir, 'private.pem'),
      '--suite',
      'merchant/raw-body',
      '--reports',
      join(dir, 'm4'),
    ]);
    expect(run.stderr.split('\n')[0]).toBe(
      "pre-flight: warning: the merchant answered HTTP 401 to --api-key: check the key and its validity window; if they are right, the receiver's key check is at fault (CB-KEY-401); the suites judge",
    );
    const report = JSON.parse(readFileSync(join(dir, 'm4', 'report.json'), 'utf8')) as Report;
    expect(report.preflight).toMatchObject({
      verdict: 'warning',
      steps: [expect.objectContaining({ level: 'warning', observed: expect.stringMatching(/^HTTP 401 /) })],
    });
    expect(run.stdout).toContain('FAIL');
    expect(run.stdout + run.stderr).not.toContain('not-the-merchants-key');
    expect(run.status).toBe(1);
  }, 60_000);

  it('without a probe, a green merchant run says MUST checks were skipped and why; --fail-on-skip makes it exit 1', async () => {
    const m = embedded.merchant;
    const args = [
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--suite',
      'merchant/idempotency',
    ];
    // The run of every merchant suite without a probe (shared with the test above).
    const run = await merchantWithoutProbe();
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^ {2}\d+ MUST checks: needs --probe-url or --probe-cmd/m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^not judged: \d+ MUST checks, for the reasons above; a skip does not fail the run without --fail-on-skip$/,
    );
    const summary = readFileSync(join(dir, 'm2', 'summary.md'), 'utf8');
    expect(summary).toMatch(/NOT FULLY CHECKED: no check failed, but \d+ MUST check\(s\) were skipped/);
    expect(summary).not.toContain('✅ wallet-conformance');
    const report = JSON.parse(readFileSync(join(dir, 'm2', 'report.json'), 'utf8')) as Report;
    expect(report.summary.skippedMust).toBeGreaterThan(20);
    const gate = await cli([...args, '--fail-on-skip', '--reports', join(dir, 'm6')]);
    expect(gate.stdout).toMatch(/--fail-on-skip: \d+ MUST check\(s\) were skipped: exit 1/);
    expect(gate.status).toBe(1);
  }, 60_000);

  it('--probe-cmd proves processing without a probe endpoint; a probe of the wrong shape ends the run with exit 2', async () => {
    const m = embedded.merchant;
    const fetchProbe = `${JSON.stringify(process.execPath)} -e "fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))" ${m.probeUrl}`;
    const args = [
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--suite',
      'merchant/raw-body',
    ];
    const run = await cli([...args, '--probe-cmd', fetchProbe, '--reports', join(dir, 'm7')]);
    const report = JSON.parse(readFileSync(join(dir, 'm7', 'report.json'), 'utf8')) as Report;
    expect(report.summary.failed).toBe(0);
    expect(report.results.filter((r) => /\/processed(-exact)?(#\d+)?$/.test(r.id)).map((r) => r.status)).toEqual([
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
    ]);
    expect(run.status).toBe(0);
    const wrong = await cli([
      ...args,
      '--probe-cmd',
      `${JSON.stringify(process.execPath)} -e "process.stdout.write('{}')"`,
      '--reports',
      join(dir, 'm8'),
    ]);
    expect(wrong.stderr.trim()).toBe(
      'wallet-conformance: pre-flight: --probe-cmd gave JSON without a processed list: expected {"processed": [<decrypted callback payload>, ...]} (one entry per business processing, in order; paged: with "next" and "more", docs/probe.md)',
    );
    expect(wrong.status).toBe(2);
  }, 60_000);

  it('verify service does not blame a key pair the service does not hold without proof (a warning, the suites judge), nor a refused control token (a warning, the cases needing it skipped)', async () => {
    const s = embedded.service;
    // A key pair the service does not hold (keys generate has its own tests).
    const keys = mkdtempSync(join(tmpdir(), 'wc-other-key-'));
    writeFileSync(
      join(keys, 'merchant-public.pem'),
      generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }),
    );
    const base = [
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--user-id',
      String(s.userId),
      '--suite',
      'service/energy',
    ];
    const otherKey = await cli([
      ...base,
      '--public-key',
      join(keys, 'merchant-public.pem'),
      '--reports',
      join(dir, 's2'),
    ]);
    expect(otherKey.stderr).toMatch(
      /^pre-flight: warning: the service refused a valid energy query \(code \d+\); this is a finding for the suites, not proof of a wrong key/m,
    );
    expect(otherKey.status).toBe(1);
    const badToken = await cli([
      ...base,
      '--public-key',
      join(dir, 'public.pem'),
      '--control-token',
      'not-the-token',
      '--reports',
      join(dir, 's3'),
    ]);
    // No rule binds the control API: a refused token is a setup the target does not perform, so the cases needing it are skipped.
    expect(badToken.stderr).toMatch(
      /^pre-flight: warning: the service refused --control-token on every control API route: check the token; the cases that need the control API are skipped$/m,
    );
    const skipped = (JSON.parse(readFileSync(join(dir, 's3', 'report.json'), 'utf8')) as Report).results.filter(
      (r) => r.status === 'skipped' && /answered 401 to --control-token/.test(r.message ?? ''),
    );
    expect(skipped.length).toBeGreaterThan(0);
    expect(badToken.status).not.toBe(2);
  }, 60_000);

  it('verify service leaves the target as it found it: energy and the callback URL are put back, and the report says so', async () => {
    const s = embedded.service;
    const energyUrl = `${s.baseUrl}/__control/merchants/${s.userId}/energy`;
    const before = await (await fetch(energyUrl, { headers: { 'x-control-token': s.controlToken! } })).text();
    const run = await cli([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      join(dir, 'public.pem'),
      '--user-id',
      String(s.userId),
      '--control-token',
      s.controlToken!,
      '--suite',
      'service/energy',
      '--reports',
      join(dir, 's4'),
    ]);
    expect(run.status).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 's4', 'report.json'), 'utf8')) as Report;
    expect(report.notes).toContain('energy restored to its value before the run');
    expect(await (await fetch(energyUrl, { headers: { 'x-control-token': s.controlToken! } })).text()).toBe(before);
  }, 60_000);

  it('callback send delivers a deposit with an exact amount and prints the answer', async () => {
    const m = embedded.merchant;
    const run = await cli([
      'callback',
      'send',
      '--url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--type',
      '1',
      '--field',
      'amount=12345678901234567890.123',
      '--deliveries',
      '3',
      '--concurrent',
    ]);
    expect(run.stdout).toMatch(/delivery 3\/3: HTTP 200 \{"errCode":0/);
    expect(run.stdout).toContain('"amount":12345678901234567890.123');
    expect(run.status).toBe(0);
  }, 60_000);
});
