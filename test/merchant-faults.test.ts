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

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const suites = loadSuites().filter((suite) => suite.side === 'merchant');
const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const profile = { ...DEFAULT_PROFILE };

async function verify(fault: MerchantFault): Promise<Report> {
  const merchant = await startFaultyMerchant(fault, { apiKey: 'ak-good', expiredKey: 'ak-old', publicKey: privateKey.publicKey, profile });
  try {
    return await runSuites({ target: { side: 'merchant', callbackUrl: merchant.callbackUrl, probeUrl: merchant.probeUrl, apiKey: 'ak-good', expiredKey: 'ak-old', privateKey, profile }, suites, rules });
  } finally {
    await merchant.close();
  }
}

/** The rule a fault breaks is the first id of its description. */
const ruleOf = (fault: MerchantFault) => MERCHANT_FAULTS[fault].split(/[:/]/)[0]!;

describe('merchant suites against deliberately faulty merchants', () => {
  const reports = new Map<MerchantFault, Report>();
  beforeAll(async () => {
    for (const fault of Object.keys(MERCHANT_FAULTS) as MerchantFault[]) reports.set(fault, await verify(fault));
  }, 120_000);
  afterAll(() => reports.clear());

  it('pass every check against the fault-free merchant, with nothing skipped', () => {
    const report = reports.get('none')!;
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBeGreaterThan(60);
  });

  for (const fault of Object.keys(MERCHANT_FAULTS).filter((f) => f !== 'none') as MerchantFault[]) {
    it(`catch "${fault}" (${MERCHANT_FAULTS[fault]}) with a check naming ${ruleOf(fault)}`, () => {
      const caught = reports.get(fault)!.results.filter((r) => r.status !== 'passed' && r.status !== 'skipped' && r.rules.includes(ruleOf(fault)));
      expect(caught.map((r) => r.id)).not.toEqual([]);
    });
  }

  it('count at least 15 faults', () => {
    expect(Object.keys(MERCHANT_FAULTS).length - 1).toBeGreaterThanOrEqual(15);
  });
});
