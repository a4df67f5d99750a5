/**
 * Generated cases against the service side: the real CLI with --generate/--seed against the
 * emulator, the failing-example store, and faulty services (test/fixtures/property-faulty-services.ts)
 * whose defects only some inputs reveal.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { loadRules } from '../src/cli/report-output.js';
import { runGenerated } from '../src/property/generated-run.js';
import type { Report } from '../src/runner/types.js';
import { startFaultyService, type ServiceDefect } from './fixtures/property-faulty-services.js';
import { runCliAsync } from './support/cli.js';

const rules = loadRules();

describe('verify service --generate (the real CLI) against the emulator', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-property-'));
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(join(dir, 'public.pem'), embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
  });
  afterAll(() => embedded.close());
  const args = (reports: string, ...more: string[]) => {
    const s = embedded.service;
    return ['verify', 'service', '--base-url', s.baseUrl, '--api-key', s.apiKey, '--public-key', join(dir, 'public.pem'), '--user-id', String(s.userId), '--suite', 'service/energy', '--reports', join(dir, reports), ...more];
  };

  it('adds one passing result per property after the suites, with the seed that replays it, and exits 0', async () => {
    const run = await runCliAsync(args('g1', '--generate', '60', '--seed', '4242'));
    expect(run.stderr).toBe('');
    const report = JSON.parse(readFileSync(join(dir, 'g1', 'report.json'), 'utf8')) as Report;
    const generated = report.results.filter((result) => result.suite === 'generated/service');
    expect(generated.map((result) => result.case)).toEqual(['valid-requests', 'one-rule-broken', 'crypto-mangled', 'edges']);
    for (const result of generated) {
      expect(result.status).toBe('passed');
      expect(result.message).toMatch(/^60 cases \(.*\); seed 4242$/);
      expect(result.rules.length).toBeGreaterThan(0);
    }
    expect(report.summary.passed).toBe(report.results.filter((result) => result.status === 'passed').length);
    expect(readFileSync(join(dir, 'g1', 'junit.xml'), 'utf8')).toContain('generated/service');
    expect(run.status).toBe(0);
  }, 120_000);

  it('--generate 0 is the run of the suites alone', async () => {
    const run = await runCliAsync(args('g0', '--generate', '0'));
    const report = JSON.parse(readFileSync(join(dir, 'g0', 'report.json'), 'utf8')) as Report;
    expect(report.results.filter((result) => result.suite.startsWith('generated/'))).toEqual([]);
    expect(run.status).toBe(0);
  }, 60_000);

  it('a bad --generate or --seed is one line on stderr and exit 2', async () => {
    const run = await runCliAsync(args('gx', '--generate', 'many'));
    expect(run.stderr.trim()).toBe('wallet-conformance: --generate takes a whole number, not "many"');
    expect(run.status).toBe(2);
    const seed = await runCliAsync(args('gx', '--generate', '5', '--seed', '0'));
    expect(seed.stderr.trim().split('\n')).toHaveLength(1);
    expect(seed.status).toBe(2);
  }, 60_000);
});

describe('run --generate (the embedded run)', () => {
  it('adds the generated results of both sides to the one report', async () => {
    const reports = mkdtempSync(join(tmpdir(), 'wc-property-run-'));
    const run = await runCliAsync(['run', '--generate', '10', '--seed', '9', '--reports', reports]);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    const generated = report.results.filter((result) => result.suite.startsWith('generated/'));
    expect(generated.map((result) => `${result.suite}/${result.case} ${result.status}`)).toEqual([
      'generated/service/valid-requests passed', 'generated/service/one-rule-broken passed', 'generated/service/crypto-mangled passed', 'generated/service/edges passed',
      'generated/merchant/callbacks-once passed', 'generated/merchant/callbacks-mangled passed',
    ]);
    expect(report.summary.passed).toBe(report.results.filter((result) => result.status === 'passed').length);
    expect(run.status).toBe(0);
  }, 180_000);
});

describe('faulty services that only generated inputs reveal', () => {
  const cases: Array<{ defect: ServiceDefect; rule: string; shows: RegExp }> = [
    { defect: 'astral-crash', rule: 'ORDER-FIELDS', shows: /HTTP 500/ },
    { defect: 'block-boundary', rule: 'CRYPTO-ENVELOPE', shows: /does not decrypt/ },
  ];
  for (const { defect, rule, shows } of cases) {
    it(`finds ${defect} within 200 cases on each of three seeds, shrinks it, names ${rule}, and stores the example`, async () => {
      const faulty = await startFaultyService(defect);
      try {
        for (const seed of [11, 22, 33]) {
          const reportsDir = mkdtempSync(join(tmpdir(), 'wc-property-faulty-'));
          const results = await runGenerated(faulty.service, { numRuns: 200, seed, reportsDir, rules, only: ['valid-requests', 'edges'] });
          const failed = results.filter((result) => result.status === 'failed');
          expect(failed.length, `seed ${seed}`).toBeGreaterThan(0);
          const found = failed[0]!;
          expect(found.rules).toContain(rule);
          expect(found.message).toMatch(shows);
          expect(found.message).toContain(`--seed ${seed}`);
          const generated = found.evidence?.generated as { case: { base: { plain: Record<string, unknown> } }; seed: number };
          expect(generated.seed).toBe(seed);
          // Shrunk: the free texts the defect does not need are gone.
          for (const field of ['tenantUserId', 'toAddr', 'callBackId']) expect([...String(generated.case.base.plain[field])].length, field).toBeLessThanOrEqual(4);
          expect(((found.evidence?.exchanges as Array<{ request: { plain?: string } }>)[0]!.request.plain ?? '').length).toBeGreaterThan(0);
          expect(existsSync(join(reportsDir, 'examples', `service-${found.case}.json`))).toBe(true);
        }
      } finally {
        await faulty.close();
      }
    }, 180_000);
  }
});
