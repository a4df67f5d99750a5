import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { DEFAULT_PROFILE } from '../src/core/profile.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites, type Suite } from '../src/runner/suite.js';
import type { Report } from '../src/runner/types.js';
import { MERCHANT_FAULTS, startFaultyMerchant, type MerchantFault } from './fixtures/faulty-merchant.js';
import { MERCHANT_CATCHES, type MerchantCatch } from './fixtures/merchant-catches.js';
import { limit } from './support/limit.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const suites = loadSuites().filter((suite) => suite.side === 'merchant');
const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const profile = { ...DEFAULT_PROFILE };

/**
 * Full runs (every merchant suite) stay where the test asserts what a run reports beyond one catch:
 * the fault-free merchants (everything passes), the one-spelling reader (only U-CB-FIELDS warnings)
 * and, for each check, one fault it alone catches (SOLE_CATCHERS). Every other fault runs only the
 * case of its catch (MERCHANT_CATCHES): the cases are independent (each delivers its own events), so
 * its verdict there is the one a full run gives, for a fraction of the RSA and the settle waits.
 */
const SOLE_CATCHERS: Record<string, Exclude<MerchantFault, 'none'>> = {
  answers: 'acks-not-json',
  processed: 'deposit-by-tracking-id',
  'processed-exact': 'latin1-plaintext',
};
const FULL_RUNS: MerchantFault[] = ['none', 'interface-spelling-only', ...Object.values(SOLE_CATCHERS)];

/**
 * How late the late bookers book, after their answer: past the runner's first read and its first
 * poll (100 ms later), so the settle wait, and the grace before a duplicate's read, are what find
 * them. The full late run is one chain of steps that each wait about this long (300 ms made it 39 s).
 */
const LATE_MS = 150;

/** The merchant suites cut to the case of a result id (`<suite name>/<case>/<check>`; a derived suite's name has three parts). */
function caseOf(id: string): Suite[] {
  const [name, suite] = [id.split('/').at(-2), id.split('/').slice(0, -2).join('/')];
  return suites
    .filter((s) => s.name === suite)
    .map((s) => ({ ...s, cases: s.cases.filter((c) => c.id === name) }))
    .filter((s) => s.cases.length > 0);
}

/**
 * Runs the merchant suites (or `only` those) against one variant. A fault that never processes what
 * a check expects makes each such step wait the settle limit, so the faults run with 500 ms (the late
 * bookings here come LATE_MS after the answer); the fault-free merchants run with the default.
 */
async function verify(fault: MerchantFault, options: { bookAfterMs?: number; only?: Suite[] } = {}): Promise<Report> {
  const { bookAfterMs, only } = options;
  const merchant = await startFaultyMerchant(fault, {
    apiKey: 'ak-good',
    expiredKey: 'ak-old',
    futureKey: 'ak-next',
    publicKey: privateKey.publicKey,
    profile,
    ...(bookAfterMs === undefined ? {} : { bookAfterMs }),
  });
  const settle = fault === 'none' ? {} : { settleMs: 500 };
  try {
    return await runSuites({
      target: {
        side: 'merchant',
        callbackUrl: merchant.callbackUrl,
        probeUrl: merchant.probeUrl,
        apiKey: 'ak-good',
        expiredKey: 'ak-old',
        futureKey: 'ak-next',
        privateKey,
        profile,
        restartHook: merchant.restart,
        ...settle,
      },
      suites: only ?? suites,
      rules,
    });
  } finally {
    await merchant.close();
  }
}

describe('merchant suites against deliberately faulty merchants', () => {
  const reports = new Map<MerchantFault, Report>();
  /** Merchants that answer first and book LATE_MS later: fault-free (processes-after-ack), and without deduplication. */
  const late = new Map<'processes-after-ack' | 'late-duplicate', Report>();
  const LATE_DUPLICATE = 'merchant/idempotency/redelivered-withdrawal/processed#2';
  beforeAll(async () => {
    // Eight runs at a time, the next starting as soon as one ends: a run mostly waits on the settle
    // limit and loopback, each merchant on its own port with its own store.
    const runs: Array<() => Promise<void>> = [
      async () => void late.set('processes-after-ack', await verify('none', { bookAfterMs: LATE_MS })),
      async () =>
        void late.set(
          'late-duplicate',
          await verify('no-dedupe', { bookAfterMs: LATE_MS, only: caseOf(LATE_DUPLICATE) }),
        ),
      ...FULL_RUNS.map((fault) => async () => void reports.set(fault, await verify(fault))),
      ...(Object.keys(MERCHANT_CATCHES) as Array<Exclude<MerchantFault, 'none'>>)
        .filter((fault) => !FULL_RUNS.includes(fault))
        .map(
          (fault) => async () =>
            void reports.set(fault, await verify(fault, { only: caseOf(MERCHANT_CATCHES[fault].id) })),
        ),
    ];
    const slot = limit(8);
    await Promise.all(runs.map((run) => slot(run)));
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

  it(`pass every check against a merchant that books each event ${LATE_MS} ms after acknowledging it, exactly once (processing may end after the answer)`, () => {
    const report = late.get('processes-after-ack')!;
    expect(report.summary.failed).toBe(0);
    expect(report.results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(report.summary.passed).toBe(reports.get('none')!.summary.passed);
  });

  it(`catch a merchant that acknowledges a duplicate and books it again ${LATE_MS} ms later under CB-ONCE`, () => {
    const result = late.get('late-duplicate')!.results.find((r) => r.id === LATE_DUPLICATE);
    expect({ status: result?.status, hasRule: result?.rules.includes('CB-ONCE') }).toEqual({
      status: 'failed',
      hasRule: true,
    });
    expect(result!.message).toMatch(/expected 0 processing\(s\), the probe shows 2/);
  });

  for (const [fault, expected] of Object.entries(MERCHANT_CATCHES) as Array<
    [Exclude<MerchantFault, 'none'>, MerchantCatch]
  >) {
    it(`catch "${fault}" (${MERCHANT_FAULTS[fault]}) at ${expected.id} as ${expected.status} under ${expected.rule}`, () => {
      const result = reports.get(fault)!.results.find((r) => r.id === expected.id);
      expect(result, `no result ${expected.id}`).toBeTruthy();
      expect({ status: result!.status, hasRule: result!.rules.includes(expected.rule) }).toEqual({
        status: expected.status,
        hasRule: true,
      });
      expect(result!.message).toMatch(expected.message);
    });

    const own = [expected.rule, ...(expected.alsoBreaks ?? [])];
    it(`report "${fault}" only under the rules it breaks (every failure and warning names one of ${own.join(', ')}, or is a listed cascade)`, () => {
      const cascades = expected.cascades ?? {};
      const wrong = reports
        .get(fault)!
        .results.filter(
          (r) =>
            (r.status === 'failed' || r.status === 'warning') &&
            !r.rules.some((rule) => own.includes(rule)) &&
            !(r.id in cascades),
        );
      expect(wrong.map((r) => `${r.status} ${r.id} [${r.rules.join(', ')}] ${r.message.slice(0, 160)}`)).toEqual([]);
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
    const checks = new Set(
      suites.flatMap((suite) =>
        suite.cases.flatMap((c) => c.steps.flatMap((step) => (step.expect ?? []).map((e) => e.check))),
      ),
    );
    expect(
      [...checks].filter((check) => !(check in SOLE_CATCHERS)),
      'a check without a fault it alone catches (SOLE_CATCHERS)',
    ).toEqual([]);
    for (const [check, fault] of Object.entries(SOLE_CATCHERS)) {
      // A full run: every result of every suite, so "only" is what the whole run reports.
      const catching = new Set(
        reports
          .get(fault)!
          .results.filter((r) => r.status === 'failed' || r.status === 'warning')
          .map((r) => r.id.split('/').at(-1)!.replace(/#\d+$/, '')),
      );
      expect([...catching], `${fault} is caught by ${check} alone`).toEqual([check]);
    }
  });

  it('count at least 18 faults', () => {
    expect(Object.keys(MERCHANT_FAULTS).length - 1).toBeGreaterThanOrEqual(18);
  });
});
