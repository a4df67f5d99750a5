import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { emulatorTarget } from '../src/cli/embedded.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import {
  DEFAULT_POLICIES,
  POLICIES,
  POLICY_NAMES,
  type ServicePolicies,
  type PolicyName,
} from '../src/service/policies.js';
import { startEmulator } from '../src/emulator/server.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { CheckResult, Report } from '../src/runner/types.js';

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
  const key = (a: PolicyName, i: number, b: PolicyName, j: number) =>
    names.indexOf(a) < names.indexOf(b) ? `${a}=${i}|${b}=${j}` : `${b}=${j}|${a}=${i}`;
  const uncovered = new Map<string, [PolicyName, number, PolicyName, number]>();
  names.forEach((a, x) =>
    names
      .slice(x + 1)
      .forEach((b) =>
        POLICIES[a].values.forEach((_, i) =>
          POLICIES[b].values.forEach((__, j) => uncovered.set(key(a, i, b, j), [a, i, b, j])),
        ),
      ),
  );
  const rows: Array<Map<PolicyName, number>> = [];
  // Each row starts from a pair not yet covered (so every row makes progress) and fills the other
  // policies with the value that covers the most uncovered pairs with what is already chosen.
  while (uncovered.size > 0 && rows.length < 50) {
    const [a, i, b, j] = uncovered.values().next().value!;
    const row = new Map<PolicyName, number>([
      [a, i],
      [b, j],
    ]);
    for (const name of names) {
      if (row.has(name)) continue;
      const gains = POLICIES[name].values.map(
        (_, v) => [...row].filter(([other, w]) => uncovered.has(key(other, w, name, v))).length,
      );
      row.set(name, gains.indexOf(Math.max(...gains)));
    }
    for (const [x, v] of row) for (const [y, w] of row) if (x !== y) uncovered.delete(key(x, v, y, w));
    rows.push(row);
  }
  return rows.map((row) => Object.fromEntries([...row].map(([name, v]) => [name, POLICIES[name].values[v]])));
}

/** A running emulator with `policies` and the target that points at it. */
async function emulatorWith(policies: ServicePolicies, dir: string) {
  const config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  config.callbacks = {
    ...config.callbacks,
    withdrawalDelayMs: 100,
    timeoutMs: 2000,
    retry: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 5 },
  };
  config.policies = policies;
  const account = config.merchants[0]!;
  // Callbacks wait until a case points them at the runner's receiver.
  delete account.callbackUrl;
  const emulator = await startEmulator(config, { port: 0 });
  return { target: emulatorTarget(emulator, config, account), close: () => emulator.close() };
}

/** The U-* rules the non-default policies of a combination rest on. */
function rulesOf(combination: Combination): string[] {
  return POLICY_NAMES.filter(
    (name) => JSON.stringify(combination[name]) !== JSON.stringify(DEFAULT_POLICIES[name]),
  ).map((name) => POLICIES[name].rule);
}

/**
 * Where a non-default reading shows (proof that the policy changes what the emulator does): the
 * result that warns under it, or for readings every check accepts, a passing result's message.
 */
const SHOWS: Array<{
  when: (c: ServicePolicies) => boolean;
  id: string;
  status: 'warning' | 'passed';
  message?: RegExp;
}> = [
  { when: (c) => c.cardRegistry === 'off', id: 'service/card/unknown-card/card-response#2', status: 'warning' },
  {
    when: (c) => c.leaseDebit === 'later' && c.leaseDebitDelayMs > 0,
    id: 'service/orders/energy-lease-uses-energy/energy-floor#2',
    status: 'warning',
  },
  {
    when: (c) => c.leaseDebit === 'never',
    id: 'service/orders/energy-lease-uses-energy/energy-floor#2',
    status: 'warning',
  },
  { when: (c) => c.amountIntegerDigits < 20, id: 'service/orders/amount-many-digits/envelope', status: 'warning' },
  { when: (c) => Array.isArray(c.withdrawalSymbols), id: 'service/orders/unlisted-symbol/envelope', status: 'warning' },
  {
    when: (c) => c.duplicateCallBackId === 'replay',
    id: 'service/orders/duplicate-callback-id/refused',
    status: 'warning',
  },
  { when: (c) => c.closeSerialNo === 'ignored', id: 'service/card/repeated-serial/card-response#3', status: 'warning' },
  {
    when: (c) => c.refusals === 'http',
    id: 'service/orders/tenant-type-2/refused',
    status: 'passed',
    message: /^HTTP 400: /,
  },
  {
    when: (c) => c.refusals === 'http',
    id: 'service/card/missing-field/card-response',
    status: 'passed',
    message: /^HTTP 400, success false/,
  },
];

const show = (results: CheckResult[]) =>
  results.map((r) => `${r.status} ${r.id} [${r.rules.join(', ')}] ${r.message.slice(0, 160)}`);
const label = (combination: Combination) =>
  Object.entries(combination)
    .filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(DEFAULT_POLICIES[name as PolicyName]))
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(' ') || 'defaults';

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
          const running = await emulatorWith(
            { ...DEFAULT_POLICIES, ...combination } as ServicePolicies,
            join(dir, String(n)),
          );
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
    const valueOf = (combination: Combination, name: PolicyName) =>
      JSON.stringify(combination[name] ?? DEFAULT_POLICIES[name]);
    const missingPairs = POLICY_NAMES.flatMap((a, x) =>
      POLICY_NAMES.slice(x + 1).flatMap((b) =>
        POLICIES[a].values.flatMap((va) =>
          POLICIES[b].values.map((vb) => [a, JSON.stringify(va), b, JSON.stringify(vb)] as const),
        ),
      ),
    )
      .filter(
        ([a, va, b, vb]) =>
          !combinations.some((combination) => valueOf(combination, a) === va && valueOf(combination, b) === vb),
      )
      .map((pair) => pair.join(' '));
    expect(missingPairs).toEqual([]);
    // Pairwise keeps the matrix small (the minimum for two three-valued policies is 9).
    expect(combinations.length).toBeLessThanOrEqual(20);
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

    it(`show each non-default reading in the verdicts under ${label(combination)}`, () => {
      const policies = { ...DEFAULT_POLICIES, ...combination } as ServicePolicies;
      const { plain } = reports.get(n)!;
      for (const shows of SHOWS.filter((entry) => entry.when(policies))) {
        const result = plain.results.find((r) => r.id === shows.id);
        expect(result && show([result])[0], shows.id).toMatch(new RegExp(`^${shows.status} `));
        if (shows.message) expect(result!.message).toMatch(shows.message);
      }
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
