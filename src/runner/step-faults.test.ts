// Green means checked: a step that fails because of the target is the target's failure under the
// rules of the checks it kept from judging; one that fails because of the setup or the suite is the
// run's error (a `fault`, exit 2); nothing is `skipped` for a thrown step, and a check that returns
// no finding or names a rule the catalogue lacks is a suite error. In-process: no socket is opened.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mswTransport } from '../../test/support/msw-transport.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../crypto/keys.js';
import { createWalletHandlers } from '../generated/msw-handlers.js';
import { ConfigError } from '../core/errors.js';
import { CHECKS_BY_ID } from './checks/index.js';
import { runSuites } from './engine.js';
import type { Case, Step, Suite } from './model.js';
import { faultOf, StepError } from './step-fault.js';
import { loadSuites, selectSuites } from './suite.js';
import type { Transport } from './transport.js';
import type { CheckResult, MerchantTarget, ServiceTarget } from './types.js';

const keys = generateMerchantKeyPair(1024);
const BASE = 'http://127.0.0.1:9';
const catalog = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const service: ServiceTarget = {
  side: 'service',
  baseUrl: BASE,
  cardBaseUrl: BASE,
  apiKey: 'ak_live',
  publicKey: parseKey(keys.publicPem, { expect: 'public' }) as RsaPublicKey,
  profile: { ...DEFAULT_PROFILE },
  userId: 10086,
  allowOrders: true,
};
const merchant: MerchantTarget = {
  side: 'merchant',
  callbackUrl: `${BASE}/callback`,
  probeUrl: `${BASE}/probe`,
  apiKey: 'ak-good',
  privateKey: parseKey(keys.privatePem) as RsaPrivateKey,
  profile: { ...DEFAULT_PROFILE },
  settleMs: 0,
};
const handlers = () =>
  createWalletHandlers({
    baseUrl: BASE,
    merchants: [{ userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem }],
  });
const suiteOf = (side: Suite['side'], steps: Step[], rules = ['CB-ONCE']): Suite[] => [
  { name: `${side}/faults`, title: 'faults', side, cases: [{ id: 'one', title: 'one', rules, steps } as Case] },
];
const show = (results: CheckResult[]) =>
  results.map((r) => `${r.status}${r.fault ? `(${r.fault})` : ''} ${r.id.split('/').at(-1)} [${r.rules.join(', ')}]`);
const answer = (status: number, body: string) => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(body),
  durationMs: 1,
});

/** A merchant that acknowledges every callback; its probe answers `probe(n)` to its n-th read (0 first). */
function merchantTransport(probe: (read: number) => { status: number; body: string }): Transport {
  let reads = 0;
  return {
    send: async (request) => {
      if (request.url.startsWith(`${BASE}/probe`)) {
        const { status, body } = probe(reads++);
        return answer(status, body);
      }
      return answer(200, '{"errCode":0,"message":""}');
    },
  };
}

const deliverTwice: Step[] = [
  {
    deliver: { type: 1, event: 'e' },
    expect: [
      { check: 'answers', rules: ['CB-ERRCODE'] },
      { check: 'processed', count: 1 },
    ],
  },
  {
    deliver: { same: 'e' },
    expect: [
      { check: 'answers', rules: ['CB-ERRCODE'] },
      { check: 'processed', count: 0 },
    ],
  },
];

describe('a merchant whose probe fails after the baseline has failed; a probe that never answered is the setup', () => {
  it('fails the probe checks under CB-ONCE once the probe answered HTTP 500 after the baseline, and still judges the answers', async () => {
    const report = await runSuites({
      target: { ...merchant },
      suites: suiteOf('merchant', deliverTwice),
      rules: catalog,
      transport: merchantTransport((read) =>
        read === 0 ? { status: 200, body: '{"processed":[]}' } : { status: 500, body: 'oops' },
      ),
    });
    expect(show(report.results)).toEqual([
      'passed answers [CB-ERRCODE]',
      'failed processed [CB-ONCE]',
      'passed answers#2 [CB-ERRCODE]',
      'failed processed#2 [CB-ONCE]',
    ]);
    expect(report.results[1]!.message).toMatch(
      /^the merchant's probe failed after answering earlier in the run: the probe .* answered 500/,
    );
    expect(report.summary.skipped).toBe(0);
  });

  it('fails them the same when the probe answers an unreadable body after the baseline', async () => {
    const report = await runSuites({
      target: { ...merchant },
      suites: suiteOf('merchant', deliverTwice),
      rules: catalog,
      transport: merchantTransport((read) =>
        read === 0 ? { status: 200, body: '{"processed":[]}' } : { status: 200, body: '<html>' },
      ),
    });
    expect(report.results[1]).toMatchObject({ status: 'failed', rules: ['CB-ONCE'] });
    expect(report.results[1]!.message).toMatch(/gave no JSON/);
    expect(report.results[1]!.fault).toBeUndefined();
  });

  it('makes the probe checks a setup error (exit 2) when the probe never answered in the run', async () => {
    const report = await runSuites({
      target: { ...merchant, probeUrl: `${BASE}/probe-never` },
      suites: suiteOf('merchant', deliverTwice.slice(0, 1)),
      rules: catalog,
      transport: merchantTransport(() => ({ status: 404, body: 'not found' })),
    });
    expect(show(report.results)).toEqual(['passed answers [CB-ERRCODE]', 'failed(setup) processed [CB-ONCE]']);
    expect(report.results[1]!.message).toMatch(
      /^setup error: the merchant's probe never answered in this run \(check --probe-url or --probe-cmd\)/,
    );
  });

  it('makes a deliver step naming no earlier event a suite error, not a skip', async () => {
    const report = await runSuites({
      target: { ...merchant },
      suites: suiteOf('merchant', [
        { deliver: { same: 'nowhere' }, expect: [{ check: 'answers', rules: ['CB-ERRCODE'] }] },
      ]),
      rules: catalog,
      transport: merchantTransport(() => ({ status: 200, body: '{"processed":[]}' })),
    });
    expect(show(report.results)).toEqual(['failed(suite) answers [CB-ERRCODE]']);
    expect(report.results[0]!.message).toBe('suite error: deliver.same names nowhere, which no earlier step defined');
  });
});

describe('a service whose control API fails mid-run has failed the checks that step prepared', () => {
  const energy = selectSuites(loadSuites(), { glob: 'service/energy' }).map((suite) => ({
    ...suite,
    cases: suite.cases.filter((c) => c.id === 'floor-of-live-balance'),
  }));

  /** The energy case run with a control API that sets the energy once, then answers `status` with `body`. */
  const withControlFailing = async (status: number, body: string) => {
    const inner = mswTransport(handlers());
    let controls = 0;
    const transport: Transport = {
      send: async (request) => {
        if (request.method === 'PUT' && /energy/i.test(request.url) && !request.url.includes('getEnergyMaxCount'))
          return ++controls === 1 ? answer(200, '{}') : answer(status, body);
        return inner.send(request);
      },
    };
    return runSuites({
      target: { ...service, controlToken: 'ct' },
      suites: energy,
      rules: catalog,
      transport,
      capabilities: { routes: { 'PUT energy': { present: true, detail: 'answered 400' } } },
    });
  };

  it('fails the later checks of the case under their rules with the control API answer as evidence, none skipped', async () => {
    const report = await withControlFailing(503, '{"error":"control store down"}');
    // The first check is judged on what the in-process service answers (it keeps no control state): only its absence of a fault matters here.
    expect(report.results[0]!.message).not.toMatch(/control API/);
    expect(show(report.results).slice(1)).toEqual([
      'failed energy-floor#2 [ENERGY-FLOOR]',
      'failed energy-floor#3 [ENERGY-FLOOR]',
    ]);
    expect(report.results[1]!.message).toBe(
      'the control API failed: control API answered 503: {"error":"control store down"}',
    );
    expect(JSON.stringify(report.results[2]!.evidence)).toContain('control store down');
    expect(report.summary.skipped).toBe(0);
  });

  it('does not judge the checks (skipped, with the reason) when the control API refuses a documented request with a 4xx', async () => {
    const report = await withControlFailing(400, '{"error":"balance out of range"}');
    // A control API that cannot take the request proves nothing about the interface: not a failure, not exit 2.
    expect(show(report.results).slice(1)).toEqual([
      'skipped energy-floor#2 [ENERGY-FLOOR]',
      'skipped energy-floor#3 [ENERGY-FLOOR]',
    ]);
    expect(report.results[1]!.message).toBe(
      `not judged: the service's control API refused a documented request (control API answered 400: {"error":"balance out of range"}); the case needs one that accepts it`,
    );
    expect(report.results[1]!.fault).toBeUndefined();
  });
});

describe('engine soft paths: a check that says nothing or names an unknown rule is a suite error', () => {
  afterEach(() => vi.restoreAllMocks());
  const oneRequest = (expect: NonNullable<Step['expect']>) =>
    suiteOf(
      'service',
      [{ request: { endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } }, expect }],
      ['ENERGY-RES'],
    );

  it('fails a check that returns no finding as a suite error instead of passing it', async () => {
    vi.spyOn(CHECKS_BY_ID.status, 'run').mockReturnValue([]);
    const report = await runSuites({
      target: service,
      suites: oneRequest([{ check: 'status', equals: 200 }]),
      rules: catalog,
      transport: mswTransport(handlers()),
      capabilities: { routes: {} },
    });
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      fault: 'suite',
      message: 'suite error: check status returned no finding',
    });
  });

  it('fails a finding under a rule the catalogue lacks as a suite error instead of warning', async () => {
    const report = await runSuites({
      target: service,
      suites: oneRequest([{ check: 'status', equals: 201, rules: ['NO-SUCH-RULE'] }]),
      rules: catalog,
      transport: mswTransport(handlers()),
      capabilities: { routes: {} },
    });
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      fault: 'suite',
      message: 'suite error: status names NO-SUCH-RULE, which the rule catalogue (spec/rules.yaml) lacks',
    });
  });

  it("blames a thrown error by its kind: the step's own blame, a configuration error the setup, anything else the toolkit", () => {
    expect(faultOf(new StepError('target', 'gone', 'probe'))).toEqual({
      blame: 'target',
      message: 'gone',
      lost: 'probe',
    });
    expect(faultOf(new ConfigError('bad-flags', '--restart exited 3'))).toEqual({
      blame: 'setup',
      message: '--restart exited 3',
    });
    expect(faultOf(new TypeError('x is undefined'))).toEqual({
      blame: 'toolkit',
      message: 'the toolkit could not run the step (a bug; please report it): x is undefined',
    });
  });
});
