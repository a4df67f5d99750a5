/**
 * Generated callbacks against merchants: the real CLI with verify merchant --generate against the
 * reference merchant, and receivers (test/fixtures/property-faulty-merchants.ts) whose idempotency
 * fails only on some sequences of events and redeliveries.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { loadRules } from '../src/cli/report-output.js';
import { plaintextBlockSize } from '../src/core/profile.js';
import { runGenerated } from '../src/property/generated-run.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { MerchantTarget, Report } from '../src/runner/types.js';
import {
  startFaultyMerchant,
  startUtf8mb3Merchant,
  type MerchantDefect,
} from './fixtures/property-faulty-merchants.js';
import { runCliAsync } from './support/cli.js';

const rules = loadRules();

describe('generated callbacks against merchants', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-property-merchant-'));
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(
      join(dir, 'private.pem'),
      embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }),
    );
  });
  afterAll(() => embedded.close());

  it('verify merchant --generate passes the reference merchant with one result per property', async () => {
    const m = embedded.merchant;
    const run = await runCliAsync([
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
      'merchant/key-first',
      '--generate',
      '40',
      '--seed',
      '77',
      '--reports',
      join(dir, 'r'),
    ]);
    const report = JSON.parse(readFileSync(join(dir, 'r', 'report.json'), 'utf8')) as Report;
    const generated = report.results.filter((result) => result.suite === 'generated/merchant');
    expect(generated.map((result) => [result.case, result.status])).toEqual([
      ['callbacks-once', 'passed'],
      ['callbacks-mangled', 'passed'],
    ]);
    expect(generated[0]!.message).toMatch(/^40 cases \(40 processed once\); seed 77$/);
    expect(run.status).toBe(0);
  }, 120_000);

  const cases: Array<{ defect: MerchantDefect; status: string; rule: string }> = [
    { defect: 'forgets-after-3', status: 'failed', rule: 'CB-ONCE' },
    { defect: 'interface-spelling-only', status: 'warning', rule: 'U-CB-FIELDS' },
    { defect: 'refuses-disagreeing-spellings', status: 'warning', rule: 'U-CB-FIELDS' },
  ];
  for (const { defect, status, rule } of cases) {
    it(`finds a receiver that ${defect} within 200 cases on three seeds, shrunk to a short sequence, as a ${status} under ${rule}`, async () => {
      const m = embedded.merchant;
      const faulty = await startFaultyMerchant(defect, { apiKey: m.apiKey, publicKey: m.privateKey.publicKey });
      try {
        const target: MerchantTarget = {
          side: 'merchant',
          callbackUrl: faulty.callbackUrl,
          probeUrl: faulty.probeUrl,
          apiKey: m.apiKey,
          privateKey: m.privateKey,
          profile: m.profile,
        };
        for (const seed of [5, 6, 7]) {
          const results = await runGenerated(target, {
            numRuns: 200,
            seed,
            reportsDir: mkdtempSync(join(tmpdir(), 'wc-pm-')),
            rules,
            only: ['callbacks-once'],
          });
          const found = results.find((result) => result.case === 'callbacks-once')!;
          expect(found.status, `seed ${seed}: ${found.message}`).toBe(status);
          expect(found.rules).toContain(rule);
          const minimal = (found.evidence?.generated as { case: { events: unknown[]; redeliveries: unknown[] } }).case;
          expect(minimal.redeliveries.length, `seed ${seed}`).toBeLessThanOrEqual(1);
          expect(minimal.events.length, `seed ${seed}`).toBeLessThanOrEqual(defect === 'forgets-after-3' ? 8 : 2);
        }
      } finally {
        await faulty.close();
      }
    }, 300_000);
  }
});

describe('a merchant that only callbacks at a block multiple reveal', () => {
  it('generated callbacks find block-split on seeds 1 to 3: a callback whose plaintext is an exact multiple of the block, not acknowledged, under CB-ERRCODE', async () => {
    const embedded = await startEmbedded();
    const m = embedded.merchant;
    const faulty = await startFaultyMerchant('block-split', { apiKey: m.apiKey, publicKey: m.privateKey.publicKey });
    try {
      const block = plaintextBlockSize(m.profile, m.privateKey.modulusBytes);
      const target: MerchantTarget = {
        side: 'merchant',
        callbackUrl: faulty.callbackUrl,
        probeUrl: faulty.probeUrl,
        apiKey: m.apiKey,
        privateKey: m.privateKey,
        profile: m.profile,
      };
      for (const seed of [1, 2, 3]) {
        const results = await runGenerated(target, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-pm-split-')),
          rules,
          only: ['callbacks-once'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toContain('CB-ERRCODE');
        const plain = (found.evidence?.exchanges as Array<{ payloadText?: string }>)[0]!.payloadText!;
        expect(Buffer.byteLength(plain, 'utf8') % block, plain).toBe(0);
      }
    } finally {
      await faulty.close();
      await embedded.close();
    }
  }, 240_000);
});

describe('a merchant that only Unicode callbacks reveal', () => {
  it('the hand-written merchant suites pass the reference merchant with a utf8mb3 tenantUserId column', async () => {
    const faulty = await startUtf8mb3Merchant();
    try {
      const report = await runSuites({
        target: faulty.merchant,
        suites: loadSuites().filter((suite) => suite.side === 'merchant'),
        rules,
        strict: false,
      });
      expect(
        report.results
          .filter((result) => result.status === 'failed')
          .map((result) => `${result.id}: ${result.message}`),
      ).toEqual([]);
      expect(report.summary.passed).toBeGreaterThan(20);
    } finally {
      await faulty.close();
    }
  }, 180_000);

  it('generated callbacks find it within 200 cases on three seeds, shrunk to one event whose tenantUserId is one astral character, under CB-ERRCODE', async () => {
    const faulty = await startUtf8mb3Merchant();
    try {
      for (const seed of [1, 2, 3]) {
        const results = await runGenerated(faulty.merchant, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-pm-utf8-')),
          rules,
          only: ['callbacks-once'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toContain('CB-ERRCODE');
        expect(found.message).toMatch(/was not acknowledged: HTTP 200 .*Incorrect string value: '\\\\xF0/);
        const minimal = (
          found.evidence?.generated as {
            case: { events: Array<{ payload: Record<string, unknown> }>; redeliveries: unknown[] };
          }
        ).case;
        expect(minimal.redeliveries, `seed ${seed}`).toEqual([]);
        expect(minimal.events.length, `seed ${seed}`).toBeLessThanOrEqual(2);
        const tenant = String(minimal.events[0]!.payload.tenantUserId);
        expect([...tenant], `seed ${seed}`).toHaveLength(1);
        expect(tenant.codePointAt(0)!, `seed ${seed}`).toBeGreaterThanOrEqual(0x10000);
      }
    } finally {
      await faulty.close();
    }
  }, 240_000);
});
