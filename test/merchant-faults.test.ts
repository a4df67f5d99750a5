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
    return await runSuites({ target: { side: 'merchant', callbackUrl: merchant.callbackUrl, probeUrl: merchant.probeUrl, apiKey: 'ak-good', expiredKey: 'ak-old', privateKey, profile, restartHook: merchant.restart }, suites, rules });
  } finally {
    await merchant.close();
  }
}

/** How a fault must be caught: the result (suite/case/check, repeat number allowed), its status, its rule, its message. */
interface Catch {
  id: string;
  status: 'failed' | 'warning';
  rule: string;
  message: RegExp;
}

/**
 * Each fault, and the one result that must catch it under the fault's own rule. A SHOULD rule's
 * fault (CB-NO-FALSE-ACK, CB-AVAILABLE) is a warning; a U-* reading is a warning and never a failure.
 */
const CATCHES: Record<Exclude<MerchantFault, 'none'>, Catch> = {
  'form-field-reader': { id: 'merchant/raw-body/valid-deposit/processed', status: 'failed', rule: 'CB-RAW-BODY', message: /expected 1 processing\(s\), the probe shows 0/ },
  'decodes-before-key': { id: 'merchant/key-first/unknown-key-garbage-body/answers', status: 'failed', rule: 'CB-KEY-FIRST', message: /expected HTTP 401, got 400/ },
  'no-key-check': { id: 'merchant/key-first/unknown-key-valid-body/answers', status: 'failed', rule: 'CB-KEY-401', message: /expected HTTP 401, got 200/ },
  'ignores-validity': { id: 'merchant/key-first/expired-key/answers', status: 'failed', rule: 'CB-KEY-401', message: /expected HTTP 401, got 200/ },
  'key-403': { id: 'merchant/key-first/missing-key/answers', status: 'failed', rule: 'CB-KEY-401', message: /expected HTTP 401, got 403/ },
  'dedupe-request-uuid': { id: 'merchant/idempotency/redelivered-deposit/processed#2', status: 'failed', rule: 'CB-UUID', message: /expected 0 processing\(s\), the probe shows 2/ },
  'no-dedupe': { id: 'merchant/idempotency/redelivered-withdrawal/processed#2', status: 'failed', rule: 'CB-ONCE', message: /expected 0 processing\(s\), the probe shows 2/ },
  'deposit-by-txid': { id: 'merchant/idempotency/deposit-wrapped-contract-twins/processed#2', status: 'failed', rule: 'CB-ID-DEPOSIT', message: /expected 1 processing\(s\), the probe shows 0/ },
  'withdrawal-by-tracking': { id: 'merchant/idempotency/withdrawal-same-txid/processed#2', status: 'failed', rule: 'CB-ID-WITHDRAW', message: /expected 0 processing\(s\), the probe shows 1/ },
  'other-by-type': { id: 'merchant/idempotency/other-distinct-events/processed#2', status: 'failed', rule: 'CB-ID-OTHER', message: /expected 1 processing\(s\), the probe shows 0/ },
  'dup-nonzero': { id: 'merchant/idempotency/redelivered-deposit/answers#2', status: 'failed', rule: 'CB-DUP-ACK', message: /expected errCode 0, got \{"errCode":409/ },
  'racy-dedupe': { id: 'merchant/idempotency/concurrent-identical/processed', status: 'failed', rule: 'CB-ONCE', message: /expected 1 processing\(s\), the probe shows ([2-9]|\d\d)/ },
  'false-ack': { id: 'merchant/malformed/garbage/answers', status: 'warning', rule: 'CB-NO-FALSE-ACK', message: /answered errCode 0 to a callback it could not have processed/ },
  'dies-after-garbage': { id: 'merchant/malformed/garbage/answers#2', status: 'warning', rule: 'CB-AVAILABLE', message: /expected HTTP 200, got 400/ },
  'string-errcode': { id: 'merchant/raw-body/valid-deposit/answers', status: 'failed', rule: 'CB-ERRCODE', message: /expected errCode 0, got \{"errCode":"0"/ },
  'float-amounts': { id: 'merchant/raw-body/valid-deposit/processed-exact', status: 'failed', rule: 'CB-RAW-BODY', message: /^amount: sent 12345678901234567890\.123, the probe shows 12345678901234567000 \(parsed as a binary float\?\)/ },
  'forgets-old-keys': { id: 'merchant/idempotency/redelivery-after-long-history/processed#3', status: 'failed', rule: 'CB-ONCE', message: /expected 0 processing\(s\), the probe shows 1/ },
  'forgets-on-restart': { id: 'merchant/idempotency/redelivery-across-restart/processed#2', status: 'failed', rule: 'CB-ONCE', message: /expected 0 processing\(s\), the probe shows 1/ },
  'interface-spelling-only': { id: 'merchant/idempotency/redelivered-deposit/processed', status: 'warning', rule: 'U-CB-FIELDS', message: /^passes with one spelling only: with txId\/chainName .*expected 1 processing\(s\), the probe shows 0/ },
};

describe('merchant suites against deliberately faulty merchants', () => {
  const reports = new Map<MerchantFault, Report>();
  beforeAll(async () => {
    for (const fault of Object.keys(MERCHANT_FAULTS) as MerchantFault[]) reports.set(fault, await verify(fault));
  }, 180_000);
  afterAll(() => reports.clear());

  it('pass every check against the fault-free merchant, with nothing skipped (restart included)', () => {
    const report = reports.get('none')!;
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBeGreaterThan(90);
  });

  for (const [fault, expected] of Object.entries(CATCHES) as Array<[Exclude<MerchantFault, 'none'>, Catch]>) {
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
