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

/**
 * Runs the merchant suites against one variant. A fault that never processes what a check expects
 * makes each such step wait the settle limit, so the faults run with 500 ms (the late bookings here
 * come 300 ms after the answer); the fault-free merchants run with the default.
 */
async function verify(fault: MerchantFault, bookAfterMs?: number): Promise<Report> {
  const merchant = await startFaultyMerchant(fault, { apiKey: 'ak-good', expiredKey: 'ak-old', publicKey: privateKey.publicKey, profile, ...(bookAfterMs === undefined ? {} : { bookAfterMs }) });
  const settle = fault === 'none' ? {} : { settleMs: 500 };
  try {
    return await runSuites({ target: { side: 'merchant', callbackUrl: merchant.callbackUrl, probeUrl: merchant.probeUrl, apiKey: 'ak-good', expiredKey: 'ak-old', privateKey, profile, restartHook: merchant.restart, ...settle }, suites, rules });
  } finally {
    await merchant.close();
  }
}

describe('merchant suites against deliberately faulty merchants', () => {
  const reports = new Map<MerchantFault, Report>();
  /** Merchants that answer first and book 300 ms later: fault-free (processes-after-ack), and without deduplication. */
  const late = new Map<'processes-after-ack' | 'late-duplicate', Report>();
  beforeAll(async () => {
    // Alone: the fault-free merchant (the baseline every check must pass), racy-dedupe (its catch is
    // a 5 ms race between concurrent duplicates, which other runs on the event loop can close) and
    // the two late bookers (a 300 ms booking against a 500 ms settle limit). The other faults run
    // six at a time, each merchant on its own port with its own store: a run mostly waits on the
    // settle limit and loopback.
    const alone: MerchantFault[] = ['none', 'racy-dedupe'];
    for (const fault of alone) reports.set(fault, await verify(fault));
    const faults = (Object.keys(MERCHANT_FAULTS) as MerchantFault[]).filter((fault) => !alone.includes(fault));
    for (let i = 0; i < faults.length; i += 6) {
      const batch = faults.slice(i, i + 6);
      const done = await Promise.all(batch.map((fault) => verify(fault)));
      batch.forEach((fault, j) => reports.set(fault, done[j]!));
    }
    late.set('processes-after-ack', await verify('none', 300));
    late.set('late-duplicate', await verify('no-dedupe', 300));
  }, 600_000);
  afterAll(() => {
    reports.clear();
    late.clear();
  });

  it('pass every check against the fault-free merchant, with nothing skipped (restart included)', () => {
    const report = reports.get('none')!;
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBeGreaterThan(90);
  });

  it('pass every check against a merchant that books each event 300 ms after acknowledging it, exactly once (processing may end after the answer)', () => {
    const report = late.get('processes-after-ack')!;
    expect(report.summary.failed).toBe(0);
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBe(reports.get('none')!.summary.passed);
  });

  it('catch a merchant that acknowledges a duplicate and books it again 300 ms later under CB-ONCE', () => {
    const result = late.get('late-duplicate')!.results.find((r) => r.id === 'merchant/idempotency/redelivered-withdrawal/processed#2');
    expect({ status: result?.status, hasRule: result?.rules.includes('CB-ONCE') }).toEqual({ status: 'failed', hasRule: true });
    expect(result!.message).toMatch(/expected 0 processing\(s\), the probe shows 2/);
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
