import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../src/core/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { describeMerchantKeys, initEmulatorDir, loadEmulatorConfig } from '../src/emulator/config.js';
import { DEFAULT_POLICIES, POLICIES, POLICY_NAMES, type EmulatorPolicies, type PolicyName } from '../src/emulator/policies.js';
import { startEmulator } from '../src/emulator/server.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { CheckResult, Report, ServiceTarget } from '../src/runner/types.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
// Cases that wait for a person to trigger a callback (--listen) are covered in listen.test.ts.
const suites = loadSuites()
  .filter((suite) => suite.side === 'service')
  .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

type Combination = Partial<Record<PolicyName, unknown>>;

/**
 * Pairwise combinations of every value of every policy (greedy, deterministic): each pair of values
 * of two policies appears in at least one combination, so each value is tried at least once.
 */
function pairwise(): Combination[] {
  const names = [...POLICY_NAMES].sort((a, b) => POLICIES[b].values.length - POLICIES[a].values.length);
  const uncovered = new Set<string>();
  const key = (a: PolicyName, i: number, b: PolicyName, j: number) => `${a}=${i}|${b}=${j}`;
  names.forEach((a, x) => names.slice(x + 1).forEach((b) => POLICIES[a].values.forEach((_, i) => POLICIES[b].values.forEach((__, j) => uncovered.add(key(a, i, b, j))))));
  const rows: Array<Map<PolicyName, number>> = [];
  for (let guard = 0; uncovered.size > 0 && guard < 100; guard++) {
    const row = new Map<PolicyName, number>();
    for (const name of names) {
      let best = 0;
      let bestGain = -1;
      POLICIES[name].values.forEach((_, i) => {
        const gain = [...row].filter(([other, j]) => uncovered.has(key(other, j, name, i))).length + (row.size === 0 && [...uncovered].some((k) => k.startsWith(`${name}=${i}|`)) ? 1 : 0);
        if (gain > bestGain) [best, bestGain] = [i, gain];
      });
      row.set(name, best);
    }
    const before = uncovered.size;
    for (const [a, i] of row) for (const [b, j] of row) uncovered.delete(key(a, i, b, j));
    if (uncovered.size === before) break;
    rows.push(row);
  }
  return rows.map((row) => Object.fromEntries([...row].map(([name, i]) => [name, POLICIES[name].values[i]])));
}

/** A running emulator with `policies` and the target that points at it. */
async function emulatorWith(policies: EmulatorPolicies, dir: string) {
  const config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  config.callbacks = { ...config.callbacks, withdrawalDelayMs: 100, timeoutMs: 2000, retry: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 5 } };
  config.policies = policies;
  const account = config.merchants[0]!;
  // Callbacks wait until a case points them at the runner's receiver.
  delete account.callbackUrl;
  const keys = describeMerchantKeys(account);
  const emulator = await startEmulator(config, { port: 0 });
  const target: ServiceTarget = {
    side: 'service',
    baseUrl: emulator.url,
    cardBaseUrl: emulator.cardUrl,
    apiKey: keys.apiKey,
    publicKey: account.keyPair.publicKey,
    profile: account.profile,
    userId: account.userId,
    ...(keys.forbiddenKey ? { forbiddenKey: keys.forbiddenKey } : {}),
    ...(keys.expiredKey ? { expiredKey: keys.expiredKey } : {}),
    controlToken: config.control.token,
    allowOrders: true,
  };
  return { target, close: () => emulator.close() };
}

/** The U-* rules the non-default policies of a combination rest on. */
function rulesOf(combination: Combination): string[] {
  return POLICY_NAMES.filter((name) => JSON.stringify(combination[name]) !== JSON.stringify(DEFAULT_POLICIES[name])).map((name) => POLICIES[name].rule);
}

const show = (results: CheckResult[]) => results.map((r) => `${r.status} ${r.id} [${r.rules.join(', ')}] ${r.message.slice(0, 160)}`);
const label = (combination: Combination) => Object.entries(combination).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(DEFAULT_POLICIES[name as PolicyName])).map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(' ') || 'defaults';

describe('service suites against the emulator under every legal reading of the open points', () => {
  // The defaults first (the greedy search may start with them too: one run each).
  const combinations: Combination[] = [{}, ...pairwise().filter((combination) => label(combination) !== 'defaults')];
  const reports = new Map<number, { plain: Report; strict: Report }>();
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wallet-conformance-policies-'));
    // One emulator per combination, six at a time; each runs the suites once without and once with --strict.
    for (let i = 0; i < combinations.length; i += 6) {
      const batch = combinations.slice(i, i + 6).map((combination, j) => ({ combination, n: i + j }));
      await Promise.all(
        batch.map(async ({ combination, n }) => {
          const running = await emulatorWith({ ...DEFAULT_POLICIES, ...combination } as EmulatorPolicies, join(dir, String(n)));
          try {
            const plain = await runSuites({ target: running.target, suites, rules });
            const strict = await runSuites({ target: running.target, suites, rules, strict: true });
            reports.set(n, { plain, strict });
          } finally {
            await running.close();
          }
        }),
      );
    }
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('try every value of every policy, and every pair of values of two policies', () => {
    for (const name of POLICY_NAMES) {
      const tried = combinations.map((combination) => JSON.stringify(combination[name] ?? DEFAULT_POLICIES[name]));
      for (const value of POLICIES[name].values) expect(tried, name).toContain(JSON.stringify(value));
    }
    expect(combinations.length).toBeLessThan(16);
  });

  it('pass every check with the default policies, with no warning', () => {
    expect(show(reports.get(0)!.plain.results.filter((r) => r.status !== 'passed'))).toEqual([]);
  });

  combinations.forEach((combination, n) => {
    it(`fail nothing without --strict under ${label(combination)}`, () => {
      const { plain } = reports.get(n)!;
      expect(show(plain.results.filter((r) => r.status === 'failed'))).toEqual([]);
      // Nothing is skipped: the emulator offers every capability, so a warning is the only other verdict.
      expect(show(plain.results.filter((r) => r.status === 'skipped'))).toEqual([]);
    });

    it(`name, with --strict, the open point of a non-default policy in every failure under ${label(combination)}`, () => {
      const { plain, strict } = reports.get(n)!;
      const allowed = rulesOf(combination);
      const failed = strict.results.filter((r) => r.status === 'failed');
      expect(show(failed.filter((r) => !r.rules.some((rule) => allowed.includes(rule))))).toEqual([]);
      // Every such failure is a warning without --strict: the same checks, only the severity differs.
      const warned = plain.results.filter((r) => r.status === 'warning').map((r) => r.id);
      expect(show(strict.results.filter((r) => warned.includes(r.id) !== (r.status === 'failed')))).toEqual([]);
    });
  });
});
