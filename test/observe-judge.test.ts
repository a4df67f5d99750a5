/**
 * The observe judge (src/observe/judge.ts) on real traffic: the embedded emulator and the reference
 * merchant (or a faulty emulator variant / faulty merchant of test/fixtures) talk through two
 * loopback recording proxies (test/support/recording-proxy.ts); the recorded exchanges are judged
 * from traffic alone. Clean traffic has no failure; each fault is named by its rule; a capture
 * replays to the same verdict.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../src/core/exact-json.js';
import { sealJson } from '../src/crypto/codec.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import { openEmulatorStore } from '../src/emulator/store.js';
import type { EmulatorVariant } from '../src/emulator/variant.js';
import { startMerchantServer, type MerchantServer } from '../src/merchant/server.js';
import { readCaptureFile } from '../src/observe/capture.js';
import type { ObservedExchange, ObserveResult } from '../src/observe/exchange.js';
import { createJudge } from '../src/observe/judge.js';
import type { CheckResult } from '../src/runner/types.js';
import { readAcknowledgement } from '../src/wire/acknowledgement.js';
import { sealCallback, withRequestUUID } from '../src/wire/callback-delivery.js';
import { faultyVariant } from './fixtures/emulator-faults.js';
import { startFaultyMerchant, type MerchantFault } from './fixtures/faulty-merchant.js';
import { Recording, startRecordingProxy } from './support/recording-proxy.js';
import { until } from './support/until.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const ORDER = '/api/v1/api/order/withdrawWithoutVerify';

let dir: string;
let base: EmulatorConfig;
let merchant: EmulatorMerchant;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wc-observe-judge-'));
  base = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  merchant = base.merchants[0]!;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The emulator and a merchant with two recording proxies between them, torn down by `close`. */
interface World {
  recording: Recording;
  /** The merchant's base URL for the order endpoints: the order proxy. */
  orderUrl: string;
  emulator: RunningEmulator;
  control(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Resolves once the emulator has no delivery left to send (the deterministic end of the callback stream). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

let worlds = 0;

async function world(options: { variant?: EmulatorVariant; fault?: MerchantFault } = {}): Promise<World> {
  const recording = new Recording();
  let reference: MerchantServer | undefined;
  let faulty: Awaited<ReturnType<typeof startFaultyMerchant>> | undefined;
  let callbackUrl: string;
  if (options.fault) {
    faulty = await startFaultyMerchant(options.fault, {
      apiKey: merchant.apiKey,
      publicKey: merchant.keyPair.publicKey,
      profile: merchant.profile,
    });
    callbackUrl = faulty.callbackUrl;
  } else {
    reference = await startMerchantServer({
      apiKeys: [merchant.apiKey],
      publicKey: merchant.keyPair.publicKey,
      profile: merchant.profile,
      store: ':memory:',
    });
    callbackUrl = reference.callbackUrl;
  }
  const upstream = new URL(callbackUrl);
  const callbackProxy = await startRecordingProxy(upstream.origin, 'service→merchant', recording);
  const store = join(dir, `world-${++worlds}.sqlite`);
  const config: EmulatorConfig = {
    ...base,
    store,
    merchants: [{ ...merchant, callbackUrl: `${callbackProxy.url}${upstream.pathname}` }],
    callbacks: {
      ...base.callbacks,
      timeoutMs: 2000,
      withdrawalDelayMs: 20,
      retry: { initialDelayMs: 20, factor: 2, maxDelayMs: 80, maxAttempts: 3 },
    },
  };
  const emulator = await startEmulator(config, { port: 0, ...(options.variant ? { variant: options.variant } : {}) });
  const queue = openEmulatorStore(store);
  const orderProxy = await startRecordingProxy(emulator.url, 'merchant→service', recording);
  return {
    recording,
    orderUrl: orderProxy.url,
    emulator,
    async control(method, path, body) {
      const res = await fetch(`${emulator.url}/__control${path}`, {
        method,
        headers: { 'x-control-token': base.control.token, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async settled() {
      await until(() => queue.unfinishedDeliveries() === 0, 10_000);
    },
    async close() {
      queue.close();
      await emulator.close();
      await orderProxy.close();
      await callbackProxy.close();
      await reference?.close();
      await faulty?.close();
    },
  };
}

/** The merchant as an API client: an order request through the order proxy. */
async function order(w: World, path: string, plain: Record<string, unknown>): Promise<{ code: number }> {
  const data = sealJson(stringifyExact(plain), 'request', merchant.keyPair.publicKey, { profile: merchant.profile });
  const res = await fetch(`${w.orderUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
    body: new URLSearchParams({ data }).toString(),
  });
  return (await res.json()) as { code: number };
}

const withdrawal = (callBackId: string) => ({
  userId: merchant.userId,
  tenantUserId: 'u-20931',
  tenantType: 1,
  callBackId,
  symbol: 'USDT',
  chainName: 'TRON',
  toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  amount: '12.5',
});

/** Judges the recorded exchanges in seq order, as the observe proxy feeds them. */
function judgeAll(
  exchanges: readonly ObservedExchange[],
  strict = false,
): { live: CheckResult[]; result: ObserveResult } {
  const judge = createJudge({
    keys: {
      publicKeyPem: merchant.keyPair.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: merchant.keyPair.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
      apiKey: merchant.apiKey,
    },
    strict,
    limits: { retryWaitMs: 5_000, orderCallbackWaitMs: 5_000 },
  });
  const live: CheckResult[] = [];
  for (const exchange of [...exchanges].sort((a, b) => a.seq - b.seq)) live.push(...judge.accept(exchange));
  return { live, result: judge.finish() };
}

const lines = (results: CheckResult[], status: string) =>
  results
    .filter((r) => r.status === status)
    .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`)
    .join('\n');

describe('clean traffic: the emulator and the reference merchant', () => {
  let w: World;
  let judged: ReturnType<typeof judgeAll>;

  beforeAll(async () => {
    w = await world();
    expect((await order(w, ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).code).toBe(0);
    expect((await order(w, ORDER, withdrawal(`obs-${randomUUID().slice(0, 8)}`))).code).toBe(0);
    expect((await order(w, ORDER, withdrawal(`obs-${randomUUID().slice(0, 8)}`))).code).toBe(0);
    expect(
      (
        await order(w, ORDER, {
          ...withdrawal(`obs-${randomUUID().slice(0, 8)}`),
          symbol: 'ENERGY',
          amount: 2,
          expiryHours: 1,
        })
      ).code,
    ).toBe(0);
    const card = await fetch(`${w.orderUrl}/card/close`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        merchantId: String(merchant.userId),
        merchantUserId: 'u-1001',
        powerCardId: 'pc-5500-0001',
        channel: 'app',
        closeSerialNo: `cs-${randomUUID().slice(0, 8)}`,
      }),
    });
    expect(card.status).toBe(200);
    expect((await w.control('POST', `/merchants/${merchant.userId}/callbacks`, { type: 1 })).status).toBe(200);
    expect(
      (await w.control('POST', `/merchants/${merchant.userId}/callbacks`, { type: 4, deliveries: 3 })).status,
    ).toBe(200);
    await w.settled();
    await until(() => w.recording.exchanges.filter((e) => e.kind === 'callback').length >= 6, 10_000);
    judged = judgeAll(w.recording.exchanges);
  }, 60_000);
  afterAll(() => w?.close());

  it('has no failure, judges every leg, and counts agree with the results', () => {
    const { report } = judged.result;
    expect(report.summary.failed, lines(report.results, 'failed')).toBe(0);
    expect(judged.live.filter((r) => r.status === 'failed')).toEqual([]);
    const ids = new Set(report.results.filter((r) => r.status === 'passed').map((r) => r.id));
    for (const check of [
      'energy-request',
      'order-request',
      'envelope',
      'result',
      'card-request',
      'card-response',
      'callback-raw-body',
      'callback-headers',
      'callback-decrypts',
      'callback-answer',
      'callback-request-uuid',
      'callback-same-event',
      'order-callback',
    ]) {
      expect(ids, check).toContain(`observe/all/${check}`);
    }
    const { summary, results } = report;
    expect([summary.passed, summary.failed, summary.warnings, summary.skipped]).toEqual(
      ['passed', 'failed', 'warning', 'skipped'].map((s) => results.filter((r) => r.status === s).length),
    );
    expect(judged.result.exchanges).toBe(w.recording.exchanges.length);
    expect(judged.result.forgottenEvents).toBe(0);
  });

  it('aggregates passes: one result per check, not one per exchange', () => {
    const passes = judged.result.report.results.filter((r) => r.status === 'passed');
    expect(new Set(passes.map((r) => r.id)).size).toBe(passes.length);
    expect(passes.find((r) => r.id === 'observe/all/callback-decrypts')?.message).toMatch(
      /^passed on [6-9] judgements|^passed on \d\d judgements/,
    );
  });

  it('warns at most about resends after an acknowledgement (U-RETRY: traffic cannot tell a resend from a retry)', () => {
    const warnings = judged.result.report.results.filter((r) => r.status === 'warning');
    for (const warning of warnings) expect(warning.rules, `${warning.id}: ${warning.message}`).toEqual(['U-RETRY']);
    // The two resends of the type 4 event (a delivery the emulator timed out and retried on a loaded machine would add one).
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]!.assumptions?.[0]?.rule).toBe('U-RETRY');
  });

  it('reports what it cannot see as skipped "not observable", never passed', () => {
    const skipped = judged.result.report.results.filter((r) => r.status === 'skipped');
    const once = skipped.find((r) => r.rules.includes('CB-ONCE'));
    expect(once?.message).toMatch(/^\d+ judgements?: not observable from traffic/);
    expect(
      judged.result.report.results.filter((r) => r.status === 'passed' && r.rules.includes('CB-KEY-FIRST')),
    ).toEqual([]);
  });

  it('shows the opened plaintext as evidence, and never the API key or the private key', () => {
    const text = JSON.stringify(judged.result.report);
    expect(text).not.toContain(merchant.apiKey);
    expect(text).not.toContain('PRIVATE KEY');
    const warning = judged.result.report.results.find((r) => r.status === 'warning');
    expect(JSON.stringify(warning?.evidence)).toMatch(/"plaintext":"\{\\"type\\":4/);
  });

  it('judges a replay of the same exchanges, and of their capture file, to the same verdict', async () => {
    const again = judgeAll(w.recording.exchanges);
    expect(again.result.report).toEqual(judged.result.report);
    const file = join(dir, 'clean.capture.jsonl');
    writeFileSync(file, `${w.recording.exchanges.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const read: ObservedExchange[] = [];
    for await (const exchange of readCaptureFile(file)) read.push(exchange);
    expect(judgeAll(read).result.report).toEqual(judged.result.report);
  });

  it('under --strict, the U-RETRY warnings fail and nothing else changes', () => {
    const strict = judgeAll(w.recording.exchanges, true).result.report;
    expect(
      strict.results.filter((r) => r.status === 'failed').every((r) => r.rules.includes('U-RETRY')),
      lines(strict.results, 'failed'),
    ).toBe(true);
  });

  it('forgets events past its window and says so', () => {
    const judge = createJudge({
      keys: { publicKeyPem: merchant.keyPair.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString() },
      strict: false,
      window: 1,
    });
    for (const exchange of [...w.recording.exchanges].sort((a, b) => a.seq - b.seq)) judge.accept(exchange);
    const result = judge.finish();
    expect(result.forgottenEvents).toBeGreaterThan(0);
    expect(result.report.notes?.join('\n')).toMatch(/events? (was|were) forgotten by the stream window \(1 events/);
  });
});

describe('faults named by their rule from traffic alone', () => {
  it('a merchant answering without errCode: CB-ERRCODE, failed against the merchant', async () => {
    const w = await world({ fault: 'code-not-errcode' });
    try {
      expect(
        (await w.control('POST', `/merchants/${merchant.userId}/callbacks`, { type: 4, retryDelaysMs: [10, 10] }))
          .status,
      ).toBe(200);
      await w.settled();
      const { report } = judgeAll(w.recording.exchanges).result;
      const failed = report.results.filter((r) => r.status === 'failed');
      expect(failed.length, lines(report.results, 'failed')).toBe(3);
      for (const result of failed) {
        expect(result.rules).toEqual(['CB-ERRCODE']);
        expect(result.message).toMatch(
          /^HTTP 200 without errCode \(HTTP 200 without errCode\): the service counts a delivery successful only by errCode 0/,
        );
        expect(result.title).toMatch(/^the merchant's answer/);
      }
      // The service did its part: it retried each refusal (CB-ERRCODE on its side passes).
      expect(report.results.find((r) => r.id === 'observe/all/callback-retry')?.status).toBe('passed');
    } finally {
      await w.close();
    }
  }, 30_000);

  it('a service reusing requestUUID: CB-UUID, failed against the service', async () => {
    const w = await world({ variant: faultyVariant(['callback-same-uuid']) });
    try {
      expect(
        (await w.control('POST', `/merchants/${merchant.userId}/callbacks`, { type: 4, deliveries: 3 })).status,
      ).toBe(200);
      await w.settled();
      const { report } = judgeAll(w.recording.exchanges).result;
      const failed = report.results.filter((r) => r.status === 'failed');
      expect(failed.length, lines(report.results, 'failed')).toBeGreaterThanOrEqual(2);
      for (const result of failed) expect(result.rules).toEqual(['CB-UUID']);
      expect(failed[0]!.message).toMatch(/^requestUUID [0-9a-f-]{36} was already sent on the delivery of seq \d+$/);
    } finally {
      await w.close();
    }
  }, 30_000);

  it('an unencrypted envelope: CRYPTO-ENVELOPE, failed against the service', async () => {
    const variant: EmulatorVariant = {
      successEnvelope: (envelope, { result }) => ({ ...envelope, data: stringifyExact(result) }),
    };
    const w = await world({ variant });
    try {
      await order(w, ENERGY, { symbol: 'ENERGY', chainName: 'TRON' });
      const { report } = judgeAll(w.recording.exchanges).result;
      const failed = report.results.filter((r) => r.status === 'failed');
      expect(
        failed.map((r) => [r.id, r.rules]),
        lines(report.results, 'failed'),
      ).toEqual([['observe/seq-1/envelope', ['CRYPTO-ENVELOPE']]]);
      expect(failed[0]!.message).toMatch(/^data is not standard Base64/);
      expect(failed[0]!.evidence).toMatchObject({
        seq: 1,
        path: ENERGY,
        status: 200,
        request: { plaintext: '{"symbol":"ENERGY","chainName":"TRON"}' },
      });
    } finally {
      await w.close();
    }
  }, 30_000);

  it('a merchant that form-parses the body (a + becomes a space): CB-RAW-BODY, failed against the merchant', async () => {
    // The service here is the test itself, sealing and sending as src/wire/callback-delivery.ts does and
    // retrying what is not acknowledged: one event whose delivery bodies hold '+', one whose body holds none.
    const recording = new Recording();
    const faulty = await startFaultyMerchant('form-field-reader', {
      apiKey: merchant.apiKey,
      publicKey: merchant.keyPair.publicKey,
      profile: merchant.profile,
    });
    const proxy = await startRecordingProxy(new URL(faulty.callbackUrl).origin, 'service→merchant', recording);
    try {
      // One RSA block (a short payload): PKCS#1 v1.5 with the private key pads without randomness, so only a
      // fresh requestUUID changes the ciphertext, and whether its Base64 holds '+' is a matter of chance.
      const send = async (trackingId: string, plus: boolean) => {
        for (let attempt = 0; attempt < 3; attempt++) {
          let body = '';
          for (let tries = 0; tries < 5000 && (body === '' || body.includes('+') !== plus); tries++)
            body = sealCallback(
              withRequestUUID({ type: new LosslessNumber('4'), trackingId, chain: 'TRON' }),
              merchant.keyPair.privateKey,
              merchant.profile,
            );
          expect(body.includes('+')).toBe(plus);
          const res = await fetch(`${proxy.url}/callback`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
            body,
          });
          if (readAcknowledgement({ status: res.status, body: await res.text() }).verdict === 'acknowledged') return;
        }
      };
      await send('adr-plus', true);
      await send('adr-plain', false);
      const { live, result } = judgeAll(recording.exchanges);
      const failed = result.report.results.filter((r) => r.status === 'failed');
      expect(
        failed.map((r) => [r.case, r.rules]),
        lines(result.report.results, 'failed'),
      ).toEqual([
        ['seq-1', ['CB-RAW-BODY']],
        ['seq-2', ['CB-RAW-BODY']],
        ['seq-3', ['CB-RAW-BODY']],
      ]);
      expect(failed[0]!.message).toMatch(
        /refused this valid delivery .* whose body holds '\+', while it acknowledged 1 valid delivery without '\+' and none with '\+': it reads the body as a form/,
      );
      // Known the moment the contrast shows (the acknowledged body without '+'), printed live then.
      expect(live.filter((r) => r.status === 'failed')).toHaveLength(3);
    } finally {
      await proxy.close();
      await faulty.close();
    }
  }, 30_000);
});
