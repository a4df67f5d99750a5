// The verdict model of runCase: which rule, binding whom; labels widen what a check accepts but never hide a
// MUST its finding names; one cause is judged once per rule. Suites run in-process (MSW transport or a
// hand-made one): no socket is opened.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mswTransport } from '../../test/support/msw-transport.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPublicKey } from '../crypto/keys.js';
import { createWalletHandlers } from '../generated/msw-handlers.js';
import { runSuites } from './engine.js';
import { loadSuites, selectSuites, type Suite } from './suite.js';
import type { Transport } from './transport.js';
import type { CheckResult, ServiceTarget } from './types.js';

const keys = generateMerchantKeyPair(1024);
const BASE = 'http://127.0.0.1:9';
const target: ServiceTarget = {
  side: 'service',
  baseUrl: BASE,
  cardBaseUrl: BASE,
  apiKey: 'ak_live',
  publicKey: parseKey(keys.publicPem, { expect: 'public' }) as RsaPublicKey,
  profile: { ...DEFAULT_PROFILE },
  userId: 10086,
  allowOrders: true,
};
const catalog = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const handlers = () =>
  createWalletHandlers({
    baseUrl: BASE,
    merchants: [{ userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem }],
  });

/** The MSW service, with the order endpoint's success `data` replaced by `data(original)`. */
function orderDataReplaced(data: (original: string) => string): Transport {
  const inner = mswTransport(handlers());
  return {
    async send(request) {
      const response = await inner.send(request);
      if (!request.url.endsWith('/withdrawWithoutVerify')) return response;
      const envelope = JSON.parse(response.body.toString('utf8')) as { code: number; data?: string };
      if (envelope.code !== 0 || !envelope.data) return response;
      return { ...response, body: Buffer.from(JSON.stringify({ ...envelope, data: data(envelope.data) })) };
    },
  };
}

const orders = selectSuites(loadSuites(), { glob: 'service/orders' });
const onlyCase = (suites: Suite[], id: string): Suite[] =>
  suites
    .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => c.id === id) }))
    .filter((suite) => suite.cases.length);
const show = (results: CheckResult[]) =>
  results.map((r) => `${r.status} ${r.id.split('/').slice(2).join('/')} [${r.rules.join(', ')}]`);

describe('runSuites: labels never hide a MUST', () => {
  it('fails orders/long-callback-id under CRYPTO-SAME when the accepted long order answers data that does not open (the envelope is labelled U-LIMITS only)', async () => {
    const transport = orderDataReplaced((data) =>
      Buffer.from(randomBytes(Buffer.from(data, 'base64').length)).toString('base64'),
    );
    const report = await runSuites({
      target,
      suites: onlyCase(orders, 'long-callback-id'),
      rules: catalog,
      transport,
      capabilities: { routes: {} },
    });
    expect(show(report.results)).toEqual([
      'failed long-callback-id/envelope [CRYPTO-SAME]',
      'skipped long-callback-id/result [CRYPTO-SAME]',
    ]);
    expect(report.results[0]!.message).toMatch(/does not decrypt with the merchant's key/);
    expect(report.results[1]!.message).toMatch(/the cause is reported once, by envelope, under CRYPTO-SAME\)$/);
  });

  it('reads an answer whose data lacks its = padding as Java does: a U-CRYPTO warning on the envelope, the result still judged', async () => {
    const transport = orderDataReplaced((data) => data.replace(/=+$/, ''));
    const report = await runSuites({
      target,
      suites: onlyCase(orders, 'withdrawal'),
      rules: catalog,
      transport,
      capabilities: { routes: {} },
    });
    expect(show(report.results)).toEqual([
      'passed withdrawal/status [ORDER-PATH, VERSION-V1]',
      'warning withdrawal/envelope [U-CRYPTO]',
      'passed withdrawal/result [ORDER-RES]',
    ]);
    const broken = await runSuites({
      target,
      suites: onlyCase(orders, 'withdrawal'),
      rules: catalog,
      transport: orderDataReplaced((data) => `${data.slice(0, -8).replace(/=+$/, '')}AAAA`),
      capabilities: { routes: {} },
    });
    expect(show(broken.results)[1]).toMatch(/^failed withdrawal\/envelope \[CRYPTO-/);
  });

  it('fails it under CRYPTO-ENVELOPE when the data breaks the Base64 pattern', async () => {
    const transport = orderDataReplaced((data) => data.replaceAll('+', '-').replaceAll('/', '_') + '-_');
    const report = await runSuites({
      target,
      suites: onlyCase(orders, 'long-callback-id'),
      rules: catalog,
      transport,
      capabilities: { routes: {} },
    });
    expect(show(report.results)[0]).toBe('failed long-callback-id/envelope [CRYPTO-ENVELOPE]');
  });

  it('keeps the open point for what the label widens: a refusal of the long order only warns under U-LIMITS', async () => {
    const inner = mswTransport(handlers());
    const transport: Transport = {
      async send(request) {
        if (!request.url.endsWith('/withdrawWithoutVerify')) return inner.send(request);
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from('{"code":40013,"message":"callBackId too long","data":null}'),
          durationMs: 1,
        };
      },
    };
    const report = await runSuites({
      target,
      suites: onlyCase(orders, 'long-callback-id'),
      rules: catalog,
      transport,
      capabilities: { routes: {} },
    });
    expect(show(report.results)).toEqual([
      'warning long-callback-id/envelope [U-LIMITS]',
      'skipped long-callback-id/result [ORDER-RES, CRYPTO-ENVELOPE]',
    ]);
    expect(
      (
        await runSuites({
          target,
          suites: onlyCase(orders, 'long-callback-id'),
          rules: catalog,
          transport,
          capabilities: { routes: {} },
          strict: true,
        })
      ).results[0]!.status,
    ).toBe('failed');
  });

  it('passes the case against the reference answers', async () => {
    const report = await runSuites({
      target,
      suites: onlyCase(orders, 'long-callback-id'),
      rules: catalog,
      transport: mswTransport(handlers()),
      capabilities: { routes: {} },
    });
    expect(show(report.results)).toEqual([
      'passed long-callback-id/envelope [U-LIMITS]',
      'passed long-callback-id/result [ORDER-RES, CRYPTO-ENVELOPE]',
    ]);
  });
});

/** A service suite of one request step with these expectations, answered by `transport`. */
function oneStep(expect: Suite['cases'][number]['steps'][number]['expect']): Suite[] {
  return [
    {
      name: 'service/verdict',
      title: 'verdict',
      side: 'service',
      cases: [
        {
          id: 'c',
          title: 'c',
          rules: ['ENERGY-RES'],
          steps: [{ request: { endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } }, expect }],
        },
      ],
    },
  ];
}
const gone: Transport = { send: () => Promise.reject(new Error('socket hang up')) };

describe('runSuites: one cause is judged once per rule', () => {
  it('reports a shared cause (no answer) once, by its first check, under every rule it kept the later checks from judging', async () => {
    const suites = oneStep([
      { check: 'status', equals: 200, rules: ['U-LIMITS'] },
      { check: 'envelope', outcome: 'success', rules: ['ENV-CODE'] },
      { check: 'status', equals: 200, rules: ['U-LIMITS'] },
      { check: 'result', schema: 'EnergyMaxCountResult', rules: ['ENERGY-RES', 'ENV-CODE'] },
    ]);
    const report = await runSuites({ target, suites, rules: catalog, transport: gone, capabilities: { routes: {} } });
    // The first check alone would only warn (U-LIMITS); the MUSTs the later checks could not judge make it fail.
    expect(show(report.results)).toEqual([
      'failed c/status [U-LIMITS, ENV-CODE, ENERGY-RES]',
      'skipped c/envelope [ENV-CODE]',
      'skipped c/status#2 [U-LIMITS]',
      'skipped c/result [ENERGY-RES, ENV-CODE]',
    ]);
    expect(report.results[0]!.message).toBe('no answer: socket hang up');
    expect(report.results[1]!.message).toBe(
      'not judged: no answer: socket hang up (the cause is reported once, by status, under U-LIMITS, ENV-CODE)',
    );
    expect(report.summary).toMatchObject({ failed: 1, skipped: 3, warnings: 0 });
  });

  it('leaves the first check a warning when the later ones judge only open points', async () => {
    const suites = oneStep([
      { check: 'status', equals: 200, rules: ['U-LIMITS'] },
      { check: 'envelope', outcome: 'success', rules: ['U-STATES'] },
    ]);
    const report = await runSuites({ target, suites, rules: catalog, transport: gone, capabilities: { routes: {} } });
    expect(show(report.results)).toEqual(['warning c/status [U-LIMITS, U-STATES]', 'skipped c/envelope [U-STATES]']);
  });

  it('judges a shared undecryptable answer once under its crypto rule, whatever the expectations are labelled', async () => {
    const junk = Buffer.from(randomBytes(128)).toString('base64');
    const transport: Transport = {
      send: async () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(`{"code":0,"message":"","data":"${junk}"}`),
        durationMs: 1,
      }),
    };
    const suites = oneStep([
      { check: 'envelope', outcome: 'success', rules: ['ENV-DATA'] },
      { check: 'result', schema: 'EnergyMaxCountResult', rules: ['ENERGY-RES'] },
      { check: 'energy-floor', balance: 1, costPerTx: 1, rules: ['U-STATES'] },
    ]);
    const report = await runSuites({ target, suites, rules: catalog, transport, capabilities: { routes: {} } });
    expect(show(report.results)).toEqual([
      'failed c/envelope [CRYPTO-SAME]',
      'skipped c/result [CRYPTO-SAME]',
      'skipped c/energy-floor [CRYPTO-SAME]',
    ]);
  });

  it('warns, naming why, when the failed rule binds the merchant and the target is a service', async () => {
    const report = await runSuites({
      target,
      suites: oneStep([{ check: 'status', equals: 200, rules: ['CB-KEY-FIRST'] }]),
      rules: catalog,
      transport: gone,
      capabilities: { routes: {} },
    });
    expect(report.results[0]).toMatchObject({
      status: 'warning',
      rules: ['CB-KEY-FIRST'],
      message: 'no answer: socket hang up (a warning: CB-KEY-FIRST binds the merchant, not the service under test)',
    });
  });
});

describe('runSuites: what a service may accept', () => {
  const energy = selectSuites(loadSuites(), { glob: 'service/energy' });
  const acceptsAll: Transport = {
    send: async () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"code":0,"message":"","data":"AQID"}'),
      durationMs: 1,
    }),
  };

  it('passes energy/unpadded-data on a service that refuses it, warns under U-CRYPTO (failed under strict) on one that accepts it', async () => {
    const refusing = await runSuites({
      target,
      suites: onlyCase(energy, 'unpadded-data'),
      rules: catalog,
      transport: mswTransport(handlers()),
      capabilities: { routes: {} },
    });
    expect(show(refusing.results)).toEqual(['passed unpadded-data/refused [U-CRYPTO]']);
    const accepting = await runSuites({
      target,
      suites: onlyCase(energy, 'unpadded-data'),
      rules: catalog,
      transport: acceptsAll,
      capabilities: { routes: {} },
    });
    expect(show(accepting.results)).toEqual(['warning unpadded-data/refused [U-CRYPTO]']);
    expect(accepting.results[0]!.message).toMatch(
      /data is Base64 with missing-padding: the pattern of ENERGY-DATA\/ORDER-DATA allows it/,
    );
    const strict = await runSuites({
      target,
      suites: onlyCase(energy, 'unpadded-data'),
      rules: catalog,
      transport: acceptsAll,
      capabilities: { routes: {} },
      strict: true,
    });
    expect(strict.results[0]!.status).toBe('failed');
  });

  it('still fails a service that accepts data outside the pattern (url-safe-data, line-broken-data) or a wrong Content-Type', async () => {
    const suites = energy.map((suite) => ({
      ...suite,
      cases: suite.cases.filter((c) =>
        ['url-safe-data', 'line-broken-data', 'form-body-wrong-content-type'].includes(c.id),
      ),
    }));
    const report = await runSuites({
      target,
      suites,
      rules: catalog,
      transport: acceptsAll,
      capabilities: { routes: {} },
    });
    expect(show(report.results)).toEqual([
      'failed form-body-wrong-content-type/refused [ENERGY-CT]',
      'failed url-safe-data/refused [ENERGY-DATA]',
      'failed line-broken-data/refused [ENERGY-DATA]',
    ]);
  });
});
