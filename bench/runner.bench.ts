/**
 * Figures of the runner: the embedded `run` end to end (both sides, every suite), and the runner's
 * overhead against a plain script that makes the same HTTP calls with the same crypto and the
 * same judgement (decrypt + validate), in the same run. Goal: runner ÷ plain script ≤ 1.5x.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { startEmbedded } from '../src/cli/embedded.js';
import { median } from './median.js';
import { parseExactJson } from '../src/core/exact-json.js';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { validateSchema } from '../src/core/schemas.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { runSuites } from '../src/runner/engine.js';
import { runGenerated } from '../src/property/generated-run.js';
import { validCases } from '../src/property/service-exchange.js';
import { send } from '../src/runner/http-client.js';
import { loadSuites, type Suite } from '../src/runner/suite.js';
import type { ServiceTarget } from '../src/runner/types.js';

const CASES = 300;

/** N cases, each one energy query judged by status, envelope and result checks. */
function energySuite(n: number): Suite {
  return {
    name: 'bench/energy',
    title: 'bench',
    side: 'service',
    cases: Array.from({ length: n }, (_, i) => ({
      id: `q${i}`,
      title: 'energy query',
      rules: ['ENERGY-RES'],
      steps: [
        {
          request: { endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } },
          expect: [
            { check: 'status', equals: 200 },
            { check: 'envelope', outcome: 'success' },
            { check: 'result', schema: 'EnergyMaxCountResult' },
          ],
        },
      ],
    })),
  };
}

/** The same calls by hand: seal, POST the form, parse, decrypt, validate. */
async function plainScript(target: ServiceTarget, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const data = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', target.publicKey, {
      profile: target.profile,
    });
    const response = await send({
      method: 'POST',
      url: `${target.baseUrl}/api/v1/api/order/getEnergyMaxCount`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': target.apiKey },
      body: new URLSearchParams({ data }).toString(),
    });
    const envelope = parseExactJson(response.body.toString('utf8')) as Record<string, unknown>;
    const opened = openJson(String(envelope.data), 'response', target.publicKey, { profile: target.profile });
    if (
      response.status === 200 &&
      validateSchema('Envelope', envelope).length === 0 &&
      validateSchema('EnergyMaxCountResult', opened.value).length === 0
    )
      ok++;
  }
  return ok;
}

export default async function bench(): Promise<void> {
  const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
  const embedded = await startEmbedded();
  try {
    const suite = energySuite(CASES);
    // Warm both paths (JIT, keep-alive sockets) before measuring.
    await runSuites({ target: embedded.service, suites: [energySuite(30)], rules });
    await plainScript(embedded.service, 30);
    const rounds: Array<{ runner: number; script: number }> = [];
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      const report = await runSuites({ target: embedded.service, suites: [suite], rules });
      const runner = performance.now() - t;
      if (report.summary.failed > 0) throw new Error('the bench suite failed against the emulator');
      t = performance.now();
      const ok = await plainScript(embedded.service, CASES);
      const script = performance.now() - t;
      if (ok !== CASES) throw new Error('the plain script saw failures');
      rounds.push({ runner, script });
    }
    const best = (key: 'runner' | 'script') => Math.min(...rounds.map((r) => r[key]));
    console.log(`${CASES} energy queries (1024-bit, default profile), each: seal, POST, decrypt, validate; best of 3`);
    console.log(
      `  runner ${((CASES / best('runner')) * 1000).toFixed(0)} cases/s, plain script ${((CASES / best('script')) * 1000).toFixed(0)} calls/s, runner/script = ${(best('runner') / best('script')).toFixed(2)}x (goal <= 1.5x)`,
    );
    // Generated cases (issue 15): property 1 (valid requests, energy queries and orders) against the
    // same emulator, and the generation alone, so a slow generator would show apart from the target's RSA.
    const handWritten = (CASES / best('runner')) * 1000;
    /** Best rate of 3 rounds of property 1 against `target`. */
    const generatedRate = async (target: ServiceTarget): Promise<number> => {
      const rates: number[] = [];
      for (let round = 0; round < 3; round++) {
        const t = performance.now();
        const [result] = await runGenerated(target, {
          numRuns: CASES,
          seed: 1000 + round,
          reportsDir: mkdtempSync(join(tmpdir(), 'wc-bench-')),
          rules,
          only: ['valid-requests'],
        });
        if (result?.status !== 'passed')
          throw new Error(`generated cases failed against the emulator: ${result?.message}`);
        rates.push((CASES / (performance.now() - t)) * 1000);
      }
      return Math.max(...rates);
    };
    // Like for like: generated energy queries (orders off) against the same hand-written energy queries.
    const energyOnly = await generatedRate({ ...embedded.service, allowOrders: false });
    const mixed = await generatedRate(embedded.service);
    const t = performance.now();
    fc.sample(validCases(embedded.service), { numRuns: 10 * CASES, seed: 1 });
    const drawn = ((10 * CASES) / (performance.now() - t)) * 1000;
    console.log(
      `  generated energy queries (seal + POST + decrypt + judge): ${energyOnly.toFixed(0)} cases/s = ${(energyOnly / handWritten).toFixed(2)}x the hand-written rate (goal >= 0.8x)`,
    );
    console.log(
      `  generated mix (3/4 orders: longer plaintexts, 2 RSA blocks, an order stored and its callback sent): ${mixed.toFixed(0)} cases/s; drawing the cases alone ${drawn.toFixed(0)} cases/s`,
    );
  } finally {
    await embedded.close();
  }

  // The embedded run end to end: start both servers, every suite of both sides, stop; then what the
  // derived suites (spec/dimensions.yaml) cost: the same run without them, rounds alternating, the
  // median of the rounds' ratios (goal: they add at most 30%).
  const all = loadSuites();
  const handWrittenOnly = all.filter((suite) => !suite.name.includes('/derived/'));
  const endToEnd = async (suites: Suite[]): Promise<{ ms: number; checks: number; failed: number }> => {
    const t = performance.now();
    const again = await startEmbedded();
    try {
      const service = await runSuites({
        target: again.service,
        suites: suites.filter((s) => s.side === 'service'),
        rules,
      });
      const merchant = await runSuites({
        target: again.merchant,
        suites: suites.filter((s) => s.side === 'merchant'),
        rules,
      });
      return {
        ms: performance.now() - t,
        checks: service.results.length + merchant.results.length,
        failed: service.summary.failed + merchant.summary.failed,
      };
    } finally {
      await again.close();
    }
  };
  const ratios: number[] = [];
  let whole = await endToEnd(all);
  for (let round = 0; round < 3; round++) {
    const without = await endToEnd(handWrittenOnly);
    whole = await endToEnd(all);
    ratios.push(whole.ms / without.ms);
  }
  console.log(
    `embedded run end to end: ${whole.checks} checks, ${whole.failed} failed, ${(whole.ms / 1000).toFixed(1)} s`,
  );
  console.log(
    `  with the derived suites / without them: ${median(ratios).toFixed(2)}x (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}; goal <= 1.30x)`,
  );
}
