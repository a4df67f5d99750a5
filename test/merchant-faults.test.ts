import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../src/core/package-paths.js';
import { DEFAULT_PROFILE } from '../src/core/profile.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { Report } from '../src/runner/types.js';
import { MERCHANT_FAULTS, startFaultyMerchant, type MerchantFault } from './fixtures/faulty-merchant.js';
import { MERCHANT_CATCHES, type MerchantCatch } from './fixtures/merchant-catches.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const suites = loadSuites().filter((suite) => suite.side === 'merchant');
const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const profile = { ...DEFAULT_PROFILE };

async function verify(fault: MerchantFault): Promise<Report> {
  const merchant = await startFaultyMerchant(fault, { apiKey: 'ak-good', expiredKey: 'ak-old', publicKey: privateKey.publicKey, profile });
  try {
    return await runSuites({ target: { side: 'merchant', callbackUrl: merchant.callbackUrl, probeUrl: merchant.probeUrl, apiKey: 'ak-good', expiredKey: 'ak-old', privateKey, profile, restartHook: merchant.restart }, suites, rules });
  } finally {
    await merchant.close();
  }
}

describe('merchant suites against deliberately faulty merchants', () => {
  const reports = new Map<MerchantFault, Report>();
  beforeAll(async () => {
    for (const fault of Object.keys(MERCHANT_FAULTS) as MerchantFault[]) reports.set(fault, await verify(fault));
  }, 420_000);
  afterAll(() => reports.clear());

  it('pass every check against the fault-free merchant, with nothing skipped (restart included)', () => {
    const report = reports.get('none')!;
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBeGreaterThan(90);
  });

  for (const [fault, expected] of Object.entries(MERCHANT_CATCHES) as Array<[Exclude<MerchantFault, 'none'>, MerchantCatch]>) {
    it(`catch "${fault}" (${MERCHANT_FAULTS[fault]}) at ${expected.id} as ${expected.status} under ${expected.rule}`, () => {
      const result = reports.get(fault)!.results.find((r) => r.id === expected.id);
      expect(result, `no result ${expected.id}`).toBeTruthy();
      expect({ status: result!.status, hasRule: result!.rules.includes(expected.rule) }).toEqual({ status: expected.status, hasRule: true });
      expect(result!.message).toMatch(expected.message);
    });
  }

  it('a merchant that reads only one field spelling gets warnings under U-CB-FIELDS and no failure', () => {
    const report = reports.get('interface-spelling-only')!;
    expect(report.summary.failed).toBe(0);
    const warnings = report.results.filter((r) => r.status === 'warning');
    expect(warnings.length).toBeGreaterThan(5);
    expect(warnings.filter((r) => !r.rules.includes('U-CB-FIELDS'))).toEqual([]);
    expect(warnings[0]!.assumptions?.map((a) => a.rule)).toContain('U-CB-FIELDS');
  });

  it('every merchant-side check is the only catcher of at least one fault (none passes everything and survives)', () => {
    const checks = new Set(suites.flatMap((suite) => suite.cases.flatMap((c) => c.steps.flatMap((step) => (step.expect ?? []).map((e) => e.check)))));
    const soleCatcher = new Map<string, string>();
    for (const [fault, report] of reports) {
      const catching = new Set(report.results.filter((r) => r.status === 'failed' || r.status === 'warning').map((r) => r.id.split('/')[3]!.replace(/#\d+$/, '')));
      if (fault !== 'none' && catching.size === 1) soleCatcher.set([...catching][0]!, fault);
    }
    expect([...checks].filter((check) => !soleCatcher.has(check))).toEqual([]);
  });

  it('count at least 18 faults', () => {
    expect(Object.keys(MERCHANT_FAULTS).length - 1).toBeGreaterThanOrEqual(18);
  });
});
