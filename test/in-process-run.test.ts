// The engine with an injected transport: the service suites run against the generated MSW handlers
// in-process (no socket: nothing listens at the target's loopback port), as fast as the checks themselves.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../src/core/profile.js';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPublicKey } from '../src/crypto/keys.js';
import { createWalletHandlers } from '../src/generated/msw-handlers.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites, selectSuites } from '../src/runner/suite.js';
import type { ServiceTarget } from '../src/runner/types.js';
import { mswTransport } from './support/msw-transport.js';

const keys = generateMerchantKeyPair(1024);
/** A loopback port where nothing listens: only the in-process transport answers there. */
const BASE = 'http://127.0.0.1:9';
const handlers = () =>
  createWalletHandlers({
    baseUrl: BASE,
    merchants: [
      { userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem },
      { userId: 10087, apiKey: 'ak_orders_only', privateKey: keys.privatePem, permissions: ['withdrawWithoutVerify'] },
    ],
  });
const target: ServiceTarget = {
  side: 'service',
  baseUrl: BASE,
  cardBaseUrl: BASE,
  apiKey: 'ak_live',
  publicKey: parseKey(keys.publicPem, { expect: 'public' }) as RsaPublicKey,
  profile: { ...DEFAULT_PROFILE },
  userId: 10086,
  forbiddenKey: 'ak_orders_only',
  allowOrders: true,
};
const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const energy = selectSuites(loadSuites(), { glob: 'service/energy' });

describe('runSuites with an injected transport', () => {
  it('runs the energy suite in-process against the MSW handlers: nothing fails, the key cases pass', async () => {
    const report = await runSuites({ target, suites: energy, rules, transport: mswTransport(handlers()) });
    const status = (id: string) =>
      report.results.filter((result) => result.id.startsWith(`service/energy/${id}/`)).map((result) => result.status);
    expect(
      report.results.filter((result) => result.status === 'failed').map((result) => `${result.id}: ${result.message}`),
    ).toEqual([]);
    expect([status('success'), status('missing-key'), status('unknown-key'), status('forbidden-key')]).toEqual([
      ['passed', 'passed', 'passed'],
      ['passed', 'passed'],
      ['passed', 'passed'],
      ['passed', 'passed'],
    ]);
    // Without a control token the live-balance case is skipped, as against any target.
    expect(status('floor-of-live-balance')).toEqual(['skipped', 'skipped', 'skipped']);
  });

  it('sends every request through it: without it, the same host cannot be reached', async () => {
    const seen: string[] = [];
    const inner = mswTransport(handlers());
    await runSuites({
      target,
      suites: energy,
      rules,
      transport: {
        send: (request) => (seen.push(`${request.method} ${new URL(request.url).pathname}`), inner.send(request)),
      },
    });
    expect(seen.length).toBeGreaterThan(5);
    expect(new Set(seen)).toContain('POST /api/v1/api/order/getEnergyMaxCount');
    const direct = await runSuites({
      target,
      suites: energy.map((suite) => ({ ...suite, cases: suite.cases.filter((c) => c.id === 'success') })),
      rules,
    });
    expect(direct.results[0]).toMatchObject({
      status: 'failed',
      message: expect.stringMatching(/no answer: .*127\.0\.0\.1:9.*ECONNREFUSED/),
    });
  });
});
