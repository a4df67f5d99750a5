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
import { plaintextBlockSize } from '../src/core/profile.js';
import { emulatorTarget } from '../src/cli/embedded.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { DEFAULT_POLICIES, type ServicePolicies as EmulatorPolicies } from '../src/service/policies.js';
import { startEmulator } from '../src/emulator/server.js';
import { runGenerated } from '../src/property/generated-run.js';
import { runSuites } from '../src/runner/engine.js';
import { runControl } from '../src/runner/service-steps.js';
import { loadSuites } from '../src/runner/suite.js';
import type { Report } from '../src/runner/types.js';
import { startFaultyService, type ServiceDefect } from './fixtures/property-faulty-services.js';
import { runCliAsync } from './support/cli.js';

const rules = loadRules();

describe('verify service --generate (the real CLI) against the emulator', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-property-'));
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(
      join(dir, 'public.pem'),
      embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
    );
  });
  afterAll(() => embedded.close());
  const args = (reports: string, ...more: string[]) => {
    const s = embedded.service;
    return [
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
      'service/energy',
      '--reports',
      join(dir, reports),
      ...more,
    ];
  };

  it('adds one passing result per property after the suites, with the seed that replays it, and exits 0', async () => {
    const run = await runCliAsync(
      args('g1', '--generate', '60', '--seed', '4242', '--control-token', embedded.service.controlToken!),
    );
    expect(run.stderr).toBe('');
    const report = JSON.parse(readFileSync(join(dir, 'g1', 'report.json'), 'utf8')) as Report;
    const generated = report.results.filter((result) => result.suite === 'generated/service');
    expect(generated.map((result) => result.case)).toEqual([
      'valid-requests',
      'one-rule-broken',
      'crypto-mangled',
      'edges',
      'stateful',
    ]);
    for (const result of generated) {
      expect(result.status).toBe('passed');
      expect(result.message).toMatch(/^60 cases \(.*\); seed 4242$/);
      expect(result.rules.length).toBeGreaterThan(0);
    }
    expect(report.summary.passed).toBe(report.results.filter((result) => result.status === 'passed').length);
    expect(readFileSync(join(dir, 'g1', 'junit.xml'), 'utf8')).toContain('generated/service');
    expect(run.status).toBe(0);
  }, 120_000);

  it('without --control-token the stateful property is skipped with its reason, never failed', async () => {
    const run = await runCliAsync(args('g2', '--generate', '5', '--seed', '7'));
    const report = JSON.parse(readFileSync(join(dir, 'g2', 'report.json'), 'utf8')) as Report;
    const stateful = report.results.find((result) => result.id === 'generated/service/stateful')!;
    expect(stateful.status).toBe('skipped');
    expect(stateful.message).toMatch(/needs the control API \(--control-token\)/);
    expect(run.status).toBe(0);
  }, 60_000);

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
    // One suite (service/energy; the merchant side runs none): the embedded run of every suite is test/run.test.ts's, this one is the merge.
    const run = await runCliAsync([
      'run',
      '--suite',
      'service/energy',
      '--generate',
      '10',
      '--seed',
      '9',
      '--reports',
      reports,
    ]);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    const generated = report.results.filter((result) => result.suite.startsWith('generated/'));
    expect(generated.map((result) => `${result.suite}/${result.case} ${result.status}`)).toEqual([
      'generated/service/valid-requests passed',
      'generated/service/one-rule-broken passed',
      'generated/service/crypto-mangled passed',
      'generated/service/edges passed',
      'generated/service/stateful passed',
      'generated/merchant/callbacks-once passed',
      'generated/merchant/callbacks-mangled passed',
    ]);
    expect(
      report.results.filter((result) => !result.suite.startsWith('generated/')).map((result) => result.suite),
    ).toContain('service/energy');
    expect(report.summary.passed).toBe(report.results.filter((result) => result.status === 'passed').length);
    expect(run.status).toBe(0);
  }, 180_000);
});

/**
 * Seeds 1 to 3, as every fault below is found on: the edges (75 of the 200 service cases, 40 of the
 * 200 callback sequences) are the same on every seed, so seeds 4 and 5 mostly repeated them; runs of
 * seeds 1 to 5 at 1,000 cases are measured through the CLI (docs/contributing.md). Property 4's run
 * here is also the proof that the fault-free emulator passes it with every case held, and that the
 * energy is put back.
 */
describe('--generate 200 against the emulator and the reference merchant, edges first', () => {
  it('passes every property on seeds 1 to 3 with no failure and no warning', async () => {
    const embedded = await startEmbedded();
    try {
      for (const seed of [1, 2, 3]) {
        for (const target of [embedded.service, embedded.merchant]) {
          const results = await runGenerated(target, {
            numRuns: 200,
            seed,
            reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-200-')),
            rules,
          });
          expect(
            results.map((result) => [result.case, result.status, result.status === 'passed' ? '' : result.message]),
            `seed ${seed}`,
          ).toEqual(results.map((result) => [result.case, 'passed', '']));
          expect(results.map((result) => result.case)).toEqual(
            target.side === 'service'
              ? ['valid-requests', 'one-rule-broken', 'crypto-mangled', 'edges', 'stateful']
              : ['callbacks-once', 'callbacks-mangled'],
          );
          if (target.side === 'service') {
            const stateful = results[4]!;
            expect(stateful.message).toBe(`200 cases (200 held); seed ${seed}`);
            // The energy is put back as the probe read it before the run.
            expect((stateful.evidence?.generated as { restored: string[] }).restored).toEqual([
              'energy restored to its value before the run',
            ]);
          }
        }
      }
    } finally {
      await embedded.close();
    }
  }, 600_000);
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
          const results = await runGenerated(faulty.service, {
            numRuns: 200,
            seed,
            reportsDir,
            rules,
            only: ['valid-requests', 'edges'],
          });
          const failed = results.filter((result) => result.status === 'failed');
          expect(failed.length, `seed ${seed}`).toBeGreaterThan(0);
          const found = failed[0]!;
          expect(found.rules).toContain(rule);
          expect(found.message).toMatch(shows);
          expect(found.message).toContain(`--seed ${seed}`);
          const generated = found.evidence?.generated as {
            case: { base: { plain: Record<string, unknown> } };
            seed: number;
          };
          expect(generated.seed).toBe(seed);
          // Shrunk: the free texts the defect does not need are gone.
          for (const field of ['tenantUserId', 'toAddr', 'callBackId'])
            expect([...String(generated.case.base.plain[field])].length, field).toBeLessThanOrEqual(4);
          expect(
            ((found.evidence?.exchanges as Array<{ request: { plain?: string } }>)[0]!.request.plain ?? '').length,
          ).toBeGreaterThan(0);
          expect(existsSync(join(reportsDir, 'examples', `service-${found.case}.json`))).toBe(true);
        }
      } finally {
        await faulty.close();
      }
    }, 180_000);
  }
});

describe('faulty services that only the edges reveal (block multiples, integers past 2^53)', () => {
  const serviceSuites = loadSuites()
    .filter((suite) => suite.side === 'service')
    .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));
  // The cases derived from the rules' dimensions (src/runner/derive/) look for these edges on purpose.
  const isDerived = (name: string) => name.startsWith('service/derived/');
  const handWritten = serviceSuites.filter((suite) => !isDerived(suite.name));
  const derived = serviceSuites.filter((suite) => isDerived(suite.name));

  for (const [defect, rule] of [
    ['block-split', 'CRYPTO-SAME'],
    ['count-through-double', 'ENERGY-FLOOR'],
  ] as const) {
    it(`the hand-written service suites pass ${defect}; the derived cases catch it under ${rule}`, async () => {
      const faulty = await startFaultyService(defect);
      try {
        const report = await runSuites({ target: faulty.service, suites: handWritten, rules, strict: false });
        expect(
          report.results
            .filter((result) => result.status === 'failed')
            .map((result) => `${result.id}: ${result.message}`),
        ).toEqual([]);
        const caught = await runSuites({ target: faulty.service, suites: derived, rules, strict: false });
        const failed = caught.results.filter((result) => result.status === 'failed');
        expect(failed.length).toBeGreaterThan(0);
        for (const result of failed) expect(result.rules, `${result.id}: ${result.message}`).toContain(rule);
      } finally {
        await faulty.close();
      }
    }, 180_000);
  }

  it("a service that reads Base64 as Java's decoder does (no '=', non-canonical bits) gets a U-CRYPTO warning from crypto-mangled, never a failure; --strict fails it", async () => {
    const lenient = await startFaultyService('lenient-base64');
    try {
      for (const seed of [1, 2, 3]) {
        const [result] = await runGenerated(lenient.service, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-lenient-')),
          rules,
          only: ['crypto-mangled'],
        });
        expect(result!.status, `seed ${seed}: ${result!.message}`).toBe('warning');
        expect(result!.rules).toEqual(['U-CRYPTO']);
        expect(result!.message).toMatch(
          /accepted Base64 variant (missing-padding|non-canonical): Base64 matching the pattern \((missing-padding|non-canonical-base64)\)/,
        );
      }
      const [strict] = await runGenerated(lenient.service, {
        numRuns: 200,
        seed: 1,
        strict: true,
        reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-lenient-')),
        rules,
        only: ['crypto-mangled'],
      });
      expect(strict!.status).toBe('failed');
      expect(strict!.rules).toEqual(['U-CRYPTO']);
    } finally {
      await lenient.close();
    }
  }, 180_000);

  it('the edges find block-split on seeds 1 to 3: an energy query whose plaintext is exactly one block, HTTP 500, under ENERGY-RES', async () => {
    const faulty = await startFaultyService('block-split');
    try {
      const block = plaintextBlockSize(faulty.service.profile, faulty.service.publicKey.modulusBytes);
      for (const seed of [1, 2, 3]) {
        const results = await runGenerated(faulty.service, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-split-')),
          rules,
          only: ['edges'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toContain('ENERGY-RES');
        expect(found.message).toMatch(/^HTTP 500: the service failed on this input/);
        const length = Number(/the energy query's plaintext of (\d+) bytes/.exec(found.message)?.[1]);
        expect(length % block, found.message).toBe(0);
        const plain = (found.evidence?.exchanges as Array<{ request: { plain: string } }>)[0]!.request.plain;
        expect(Buffer.byteLength(plain, 'utf8')).toBe(length);
      }
    } finally {
      await faulty.close();
    }
  }, 180_000);

  it('the stateful property finds count-through-double on seeds 1 to 3, on a balance past 2^53, under ENERGY-FLOOR', async () => {
    const faulty = await startFaultyService('count-through-double');
    try {
      for (const seed of [1, 2, 3]) {
        const results = await runGenerated(faulty.service, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-double-')),
          rules,
          only: ['stateful'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toEqual(['ENERGY-FLOOR']);
        expect(found.message).toMatch(/^energyMaxCount \d{16,} is no legal reading of the live balance/);
        const minimal = (found.evidence?.generated as { case: string[] }).case;
        expect(
          minimal.some((step) => /set energy balance \d{16,}/.test(step)),
          minimal.join('; '),
        ).toBe(true);
      }
    } finally {
      await faulty.close();
    }
  }, 180_000);
});

describe('property 4 (stateful) finds the faults only a sequence or a long id reveals', () => {
  const serviceSuites = loadSuites()
    .filter((suite) => suite.side === 'service')
    .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

  for (const defect of ['energy-drift', 'digits-past-15'] as const) {
    it(`the hand-written service suites pass ${defect}`, async () => {
      const faulty = await startFaultyService(defect);
      try {
        const report = await runSuites({ target: faulty.service, suites: serviceSuites, rules, strict: false });
        expect(
          report.results
            .filter((result) => result.status === 'failed')
            .map((result) => `${result.id}: ${result.message}`),
        ).toEqual([]);
        expect(report.summary.passed).toBeGreaterThan(50);
      } finally {
        await faulty.close();
      }
    }, 180_000);
  }

  it('finds energy-drift within 200 sequences on each of three seeds, shrunk to three leases and the final query, under ENERGY-FLOOR', async () => {
    const faulty = await startFaultyService('energy-drift');
    try {
      for (const seed of [1, 2, 3]) {
        const results = await runGenerated(faulty.service, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-drift-')),
          rules,
          only: ['stateful'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toEqual(['ENERGY-FLOOR']);
        expect(found.message).toMatch(/^energyMaxCount \d+ is no legal reading of the live balance/);
        expect(found.message).toContain(`--seed ${seed}`);
        const minimal = (found.evidence?.generated as { case: string[] }).case;
        // The minimal sequence: the setup, three leases of one transaction, the final query.
        expect(minimal, `seed ${seed}`).toEqual([
          'setup: set energy balance 1000000000 costPerTx 65000',
          'lease 1 transactions for 1 h',
          'lease 1 transactions for 1 h',
          'lease 1 transactions for 1 h',
          'final: query energyMaxCount',
        ]);
        // The report shows the sequence step by step, the answers decrypted.
        const sequence = found.evidence?.sequence as Array<{ command: string; answer?: string; expected?: string }>;
        expect(sequence.map((step) => step.command)).toEqual(minimal);
        expect(sequence.at(-1)!.answer).toMatch(
          /→ data \{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":\d+\}$/,
        );
        expect(sequence.at(-1)!.expected).toMatch(/^15381\b/);
      }
    } finally {
      await faulty.close();
    }
  }, 180_000);

  it('finds digits-past-15 within 200 cases on each of three seeds, shrunk to a 16- or 17-digit tenantUserId, under ORDER-RES', async () => {
    const faulty = await startFaultyService('digits-past-15');
    try {
      for (const seed of [1, 2, 3]) {
        // Energy enough for every lease, so that a failing lease replays the same while it is shrunk.
        expect((await runControl({ energy: { balance: 1e15, costPerTx: 1 } }, faulty.service)).error).toBeUndefined();
        const results = await runGenerated(faulty.service, {
          numRuns: 200,
          seed,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-digits-')),
          rules,
          only: ['valid-requests'],
        });
        const found = results[0]!;
        expect(found.status, `seed ${seed}: ${found.message}`).toBe('failed');
        expect(found.rules).toEqual(['ORDER-RES']);
        expect(found.message).toMatch(
          /^success whose result tenantUserId \d+ is not the request's tenantUserId "\d{16,17}" \(1[67] digits\)/,
        );
        const minimal = (found.evidence?.generated as { case: { plain: Record<string, unknown> } }).case;
        // Shrunk to the fewest digits a rounding at the 15th shows in (16, or 17 where dropping any digit rounds back), mostly zeros.
        const tenant = String(minimal.plain.tenantUserId);
        expect(tenant, `seed ${seed}`).toMatch(/^[1-9]\d{15,16}$/);
        expect(tenant.replaceAll('0', '').length, `seed ${seed}: ${tenant}`).toBeLessThanOrEqual(2);
        // The other free texts are shrunk away.
        for (const field of ['toAddr', 'callBackId'])
          expect(String(minimal.plain[field]).length, field).toBeLessThanOrEqual(1);
      }
    } finally {
      await faulty.close();
    }
  }, 180_000);

  // The fault-free emulator passes property 4 (every case held, the energy put back): the seed loop above, at 200 sequences.

  // Every legal reading of the open points property 4 touches: a failure would be a property demanding what the interface leaves open.
  const readings: Array<[string, Partial<EmulatorPolicies>, RegExp | undefined]> = [
    [
      'leases debited a second later',
      { leaseDebit: 'later', leaseDebitDelayMs: 1000 },
      /a lease debited later or never/,
    ],
    ['leases never debited', { leaseDebit: 'never' }, /a lease debited later or never/],
    [
      'a repeated callBackId replayed, no card registry, refusals as HTTP 4xx',
      { duplicateCallBackId: 'replay', cardRegistry: 'off', refusals: 'http' },
      /repeating the callBackId .* answered as a success/,
    ],
  ];
  for (const [name, policies, warns] of readings) {
    it(`the emulator with ${name} passes property 4 with a U-STATES warning at most`, async () => {
      const config = loadEmulatorConfig(
        initEmulatorDir(mkdtempSync(join(tmpdir(), 'wc-property-policy-')), { store: ':memory:', port: 0 }).configPath,
      );
      config.policies = { ...DEFAULT_POLICIES, ...policies };
      const account = config.merchants[0]!;
      delete account.callbackUrl;
      const emulator = await startEmulator(config, { port: 0 });
      try {
        const results = await runGenerated(emulatorTarget(emulator, config, account), {
          numRuns: 50,
          seed: 5,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-property-policy-')),
          rules,
          only: ['stateful'],
        });
        const result = results[0]!;
        expect(result.status, result.message).toBe('warning');
        expect(result.rules).toEqual(['U-STATES']);
        expect(result.message).toMatch(/^50 cases \(.*\), no failure; \d+ held under another legal reading/);
        expect(result.message).toMatch(warns!);
      } finally {
        await emulator.close();
      }
    }, 120_000);
  }
});
