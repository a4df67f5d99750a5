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
    writeFileSync(join(dir, 'public.pem'), embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(dir, 'private.pem'), embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }));
  });
  afterAll(() => embedded.close());

  it('verify service runs order cases against the emulator without --allow-orders, and passes', async () => {
    const s = embedded.service;
    const run = await cli(['verify', 'service', '--base-url', s.baseUrl, '--api-key', s.apiKey, '--public-key', join(dir, 'public.pem'), '--user-id', String(s.userId), '--suite', 'service/orders', '--reports', join(dir, 'service')]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('the target is the wallet-conformance emulator');
    const report = JSON.parse(readFileSync(join(dir, 'service', 'report.json'), 'utf8')) as Report;
    expect(report.results.filter((r) => r.message.includes('--allow-orders'))).toEqual([]);
    // Cases needing the control API are skipped (no --control-token), never passed.
    expect(report.results.filter((r) => r.status === 'skipped').every((r) => r.message.includes('--control-token'))).toBe(true);
    expect(report.summary.failed).toBe(0);
    expect(run.status).toBe(0);
  }, 60_000);

  it('verify merchant passes the reference merchant and exits 0; without the probe, idempotency checks are skipped', async () => {
    const m = embedded.merchant;
    const withProbe = await cli(['verify', 'merchant', '--callback-url', m.callbackUrl, '--api-key', m.apiKey, '--private-key', join(dir, 'private.pem'), '--probe-url', m.probeUrl!, '--reports', join(dir, 'm1')]);
    expect(withProbe.status).toBe(0);
    const noProbe = await cli(['verify', 'merchant', '--callback-url', m.callbackUrl, '--api-key', m.apiKey, '--private-key', join(dir, 'private.pem'), '--reports', join(dir, 'm2')]);
    const report = JSON.parse(readFileSync(join(dir, 'm2', 'report.json'), 'utf8')) as Report;
    expect(report.results.some((r) => r.status === 'skipped' && r.rules.includes('CB-ONCE'))).toBe(true);
    expect(report.results.filter((r) => r.status === 'passed' && r.id.includes('/processed'))).toEqual([]);
    expect(noProbe.status).toBe(0);
  }, 60_000);

  it('verify merchant exits 1 when a MUST check fails (a key the merchant does not know)', async () => {
    const m = embedded.merchant;
    const run = await cli(['verify', 'merchant', '--callback-url', m.callbackUrl, '--api-key', 'not-the-merchants-key', '--private-key', join(dir, 'private.pem'), '--suite', 'merchant/raw-body', '--reports', join(dir, 'm3')]);
    expect(run.stdout).toMatch(/FAIL .*merchant\/raw-body\/valid-deposit/);
    expect(run.status).toBe(1);
  }, 60_000);

  it('callback send delivers a deposit with an exact amount and prints the answer', async () => {
    const m = embedded.merchant;
    const run = await cli(['callback', 'send', '--url', m.callbackUrl, '--api-key', m.apiKey, '--private-key', join(dir, 'private.pem'), '--type', '1', '--field', 'amount=12345678901234567890.123', '--deliveries', '3', '--concurrent']);
    expect(run.stdout).toMatch(/delivery 3\/3: HTTP 200 \{"errCode":0/);
    expect(run.stdout).toContain('"amount":12345678901234567890.123');
    expect(run.status).toBe(0);
  }, 60_000);
});
