import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateSchema } from '../src/core/schemas.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { DEFAULT_POLICIES } from '../src/service/policies.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import { openEmulatorStore, type EmulatorStore } from '../src/emulator/store.js';
import { until } from './support/until.js';

const ORDER = '/api/v1/api/order/withdrawWithoutVerify';
const ENERGY = '/api/v1/api/order/getEnergyMaxCount';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The decrypted payload text. */
  text: string;
  payload: Record<string, unknown>;
}

/** The decrypted callback text, or '' when it does not open. */
function tryOpen(body: string, merchant: EmulatorMerchant): string {
  try {
    return openJson(body, 'callback', merchant.keyPair.publicKey, { profile: merchant.profile }).text;
  } catch {
    return '';
  }
}

type Answer = { status: number; body: string; delayMs?: number } | 'hang';

/** A local callback target that records raw requests and answers as told. */
class Receiver {
  readonly received: Received[] = [];
  answer: (n: number, payload: Record<string, unknown>) => Answer = () => ({
    status: 200,
    body: '{"errCode":0,"message":""}',
  });
  active = 0;
  maxActive = 0;
  #server!: Server;
  url = '';

  constructor(readonly merchant: () => EmulatorMerchant) {}

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1');
        const merchant = this.merchant();
        const text = tryOpen(body, merchant);
        const payload = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        this.received.push({ headers: req.headers, body, at: Date.now(), text, payload });
        const answer = this.answer(this.received.length, payload);
        if (answer === 'hang') return;
        this.active++;
        this.maxActive = Math.max(this.maxActive, this.active);
        setTimeout(() => {
          this.active--;
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
        }, answer.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/wallet/callback`;
    return this;
  }

  reset(): void {
    this.received.length = 0;
    this.maxActive = 0;
    this.answer = () => ({ status: 200, body: '{"errCode":0,"message":""}' });
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

let dir: string;
let config: EmulatorConfig;
let merchant: EmulatorMerchant;
let emulator: RunningEmulator;
let receiver: Receiver;

/**
 * An emulator of its own on a SQLite file, and a second handle on that file that reads its callback
 * queue. `queue.unfinishedDeliveries() === 0` is the deterministic signal that nothing more will be
 * sent (the dispatcher only sends pending deliveries); no test sleeps to show that nothing follows.
 */
async function watchedEmulator(
  name: string,
  base: EmulatorConfig = config,
): Promise<{ target: RunningEmulator; queue: EmulatorStore; close(): Promise<void> }> {
  const store = join(dir, `${name}.sqlite`);
  const target = await startEmulator({ ...base, store }, { port: 0 });
  const queue = openEmulatorStore(store);
  return {
    target,
    queue,
    async close() {
      queue.close();
      await target.close();
    },
  };
}

async function control(target: RunningEmulator, method: string, path: string, body?: unknown) {
  const res = await fetch(target.url + path, {
    method,
    headers: { 'x-control-token': config.control.token },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function emit(request: Record<string, unknown> | string, target = emulator): Promise<string> {
  const answer = await control(target, 'POST', `/__control/merchants/${merchant.userId}/callbacks`, request);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.trackingId as string;
}

async function attempts(trackingId: string, target = emulator) {
  const answer = await control(target, 'GET', `/__control/deliveries?trackingId=${encodeURIComponent(trackingId)}`);
  expect(validateSchema('ControlDeliveries', answer.body)).toEqual([]);
  return answer.body.attempts as Array<{
    at: string;
    requestUUID: string;
    status: number;
    answer: unknown;
    verdict: string;
    error?: string;
  }>;
}

async function callOrder(target: RunningEmulator, text: string) {
  const data = sealJson(text, 'request', merchant.keyPair.publicKey, { profile: merchant.profile });
  const res = await fetch(target.url + ORDER, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
    body: new URLSearchParams({ data }),
  });
  return (await res.json()) as { code: number; message: string; data?: string };
}

const orderText = (callBackId: string, amount = '12345678901234567890.123') =>
  `{"userId":10086,"tenantUserId":"u-20931","tenantType":1,"callBackId":"${callBackId}","symbol":"USDT","chainName":"TRON","toAddr":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE","amount":${amount}}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-callbacks-'));
  config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  merchant = config.merchants[0]!;
  receiver = await new Receiver(() => merchant).start();
  merchant.callbackUrl = receiver.url;
  config.callbacks = {
    timeoutMs: 300,
    withdrawalDelayMs: 50,
    retry: { initialDelayMs: 20, factor: 2, maxDelayMs: 80, maxAttempts: 4 },
  };
  emulator = await startEmulator(config, { port: 0 });
});

afterAll(async () => {
  await emulator?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('withdrawal orders lead to withdrawal callbacks', () => {
  it('delivers a type-3 callback as raw Base64 with CB-HEADERS, the amount digit for digit', async () => {
    receiver.reset();
    const answer = await callOrder(emulator, orderText('wd-cb-1'));
    expect(answer.code).toBe(0);
    const [got] = await until(() => receiver.received.length >= 1 && receiver.received);
    expect(got!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(got!.headers['x-api-key']).toBe(merchant.apiKey);
    expect(got!.body).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(got!.text).toContain('"amount":12345678901234567890.123}');
    expect(got!.payload).toMatchObject({
      type: 3,
      callBackId: 'wd-cb-1',
      chain: 'TRON',
      symbol: 'USDT',
      toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
      tenantUserId: 'u-20931',
    });
    expect(got!.payload.txid).toMatch(/^[0-9a-f]{64}$/);
    expect(validateSchema('CallbackPayload', JSON.parse(got!.text))).toEqual([]);
    const log = await until(async () => (await attempts(got!.payload.trackingId as string)).length > 0 && true).then(
      () => attempts(got!.payload.trackingId as string),
    );
    const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
    expect(log).toEqual([
      {
        at: iso,
        queuedAt: iso,
        sentAt: iso,
        settledAt: iso,
        requestUUID: got!.payload.requestUUID,
        status: 200,
        answer: { errCode: 0, message: '' },
        verdict: 'acknowledged',
      },
    ]);
    // Queued, sent, then its outcome, in that order; `at` is when it was sent.
    const [attempt] = log as unknown as Array<Record<string, string>>;
    expect(attempt!.queuedAt! <= attempt!.sentAt! && attempt!.sentAt! <= attempt!.settledAt!).toBe(true);
    expect(attempt!.at).toBe(attempt!.sentAt);
  });

  it('waits withdrawalDelayMs before the callback', async () => {
    receiver.reset();
    const sent = Date.now();
    await callOrder(emulator, orderText('wd-cb-delay', '0.000000000000000001'));
    const [got] = await until(() => receiver.received.length >= 1 && receiver.received);
    expect(got!.at - sent).toBeGreaterThanOrEqual(40);
    expect(got!.text).toContain('"amount":0.000000000000000001}');
  });
});

describe('retries (CB-ERRCODE, U-RETRY)', () => {
  it('retries until errCode is the number 0 and never after; a fresh requestUUID each attempt, one trackingId', async () => {
    receiver.reset();
    const answers: Answer[] = [
      { status: 500, body: '{"errCode":1}' },
      { status: 200, body: '{"errCode":"0"}' },
      { status: 200, body: 'OK' },
      { status: 200, body: '{"errCode":1}' },
      { status: 200, body: '{"errCode":0}' },
    ];
    receiver.answer = (n) => answers[n - 1] ?? { status: 200, body: '{"errCode":0}' };
    const own = await watchedEmulator('retries-until-ack');
    try {
      const trackingId = await emit({ type: 6, retryDelaysMs: [10, 10, 10, 10, 10, 10] }, own.target);
      await until(() => own.queue.unfinishedDeliveries() === 0);
      expect(receiver.received).toHaveLength(5);
      const log = await attempts(trackingId, own.target);
      expect(log.map((a) => a.verdict)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'acknowledged']);
      expect(log.map((a) => a.status)).toEqual([500, 200, 200, 200, 200]);
      expect(log[2]!.answer).toBe('OK');
      expect(new Set(log.map((a) => a.requestUUID)).size).toBe(5);
      expect(new Set(receiver.received.map((r) => r.payload.trackingId))).toEqual(new Set([trackingId]));
      const withoutUuid = receiver.received.map((r) => ({ ...r.payload, requestUUID: undefined }));
      for (const payload of withoutUuid) expect(payload).toEqual(withoutUuid[0]);
    } finally {
      await own.close();
    }
  });

  it('counts an ambiguous answer (errCode 0 with HTTP 500, 0 written 0.0) as acknowledged and records it as written (U-CB-RESPONSE)', async () => {
    const own = await watchedEmulator('ambiguous-acknowledged');
    try {
      for (const answer of [
        { status: 500, body: '{"errCode":0}' },
        { status: 200, body: '{"errCode":0.0}' },
      ]) {
        receiver.reset();
        receiver.answer = () => answer;
        const trackingId = await emit({ type: 6, retryDelaysMs: [10, 10] }, own.target);
        await until(() => own.queue.unfinishedDeliveries() === 0);
        expect(receiver.received).toHaveLength(1);
        const log = await attempts(trackingId, own.target);
        expect(log).toEqual([expect.objectContaining({ status: answer.status, verdict: 'acknowledged' })]);
        // The record keeps the answer as written: the control API shows errCode 0.0, not a rounded 0.
        const raw = await fetch(`${own.target.url}/__control/deliveries?trackingId=${encodeURIComponent(trackingId)}`, {
          headers: { 'x-control-token': config.control.token },
        });
        expect(await raw.text()).toContain(`"answer":${answer.body}`);
      }
    } finally {
      await own.close();
    }
  });

  it('gives up after the configured attempts with exponential backoff, and after retryDelaysMs.length + 1', async () => {
    receiver.reset();
    receiver.answer = () => ({ status: 503, body: '' });
    const own = await watchedEmulator('gives-up');
    try {
      const trackingId = await emit({ type: 4 }, own.target);
      await until(() => own.queue.unfinishedDeliveries() === 0);
      expect(receiver.received).toHaveLength(4);
      const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
      expect(gaps[0]).toBeGreaterThanOrEqual(15);
      expect(gaps[1]).toBeGreaterThanOrEqual(35);
      expect(gaps[2]).toBeGreaterThanOrEqual(75);
      expect((await attempts(trackingId, own.target)).map((a) => a.verdict)).toEqual([
        'rejected',
        'rejected',
        'rejected',
        'rejected',
      ]);

      receiver.reset();
      receiver.answer = () => ({ status: 500, body: '{}' });
      const short = await emit({ type: 4, retryDelaysMs: [5] }, own.target);
      await until(() => own.queue.unfinishedDeliveries() === 0);
      expect((await attempts(short, own.target)).map((a) => a.verdict)).toEqual(['rejected', 'rejected']);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await own.close();
    }
  });

  it('times out a hanging target and retries it', async () => {
    receiver.reset();
    receiver.answer = (n) => (n === 1 ? 'hang' : { status: 200, body: '{"errCode":0}' });
    const trackingId = await emit({ type: 5, retryDelaysMs: [10] });
    const log = await until(async () => (await attempts(trackingId)).length >= 2 && true, 5_000).then(() =>
      attempts(trackingId),
    );
    expect(log[0]).toMatchObject({
      status: 0,
      answer: null,
      verdict: 'failed',
      error: expect.stringMatching(/timed out/),
    });
    expect(log[1]).toMatchObject({ status: 200, verdict: 'acknowledged' });
  });

  it('records a refused connection as failed', async () => {
    await control(emulator, 'PUT', '/__control/merchants/10086/callback-url', { url: 'http://127.0.0.1:9/nothing' });
    const trackingId = await emit({ type: 4, retryDelaysMs: [] });
    const log = await until(async () => (await attempts(trackingId)).length >= 1 && true).then(() =>
      attempts(trackingId),
    );
    expect(log).toEqual([expect.objectContaining({ status: 0, verdict: 'failed', answer: null })]);
    await control(emulator, 'PUT', '/__control/merchants/10086/callback-url', { url: receiver.url });
  });
});

describe('control API callbacks', () => {
  it('emits a valid default payload for every type 1..7', async () => {
    receiver.reset();
    for (let type = 1; type <= 7; type++) await emit({ type });
    await until(() => receiver.received.length >= 7);
    for (const got of receiver.received) {
      expect(validateSchema('CallbackPayload', JSON.parse(got.text)), got.text).toEqual([]);
      expect(got.payload.requestUUID).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(receiver.received.map((r) => r.payload.type).sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const deposit = receiver.received.find((r) => r.payload.type === 1)!;
    expect(deposit.payload).toMatchObject({
      chain: 'TRON',
      symbol: 'USDT',
      amount: expect.stringMatching(/^\d+\.\d+$/),
      txIndex: 0,
    });
  });

  it('sends identical duplicates one after another: same trackingId and payload, fresh requestUUIDs', async () => {
    receiver.reset();
    receiver.answer = () => ({ status: 200, body: '{"errCode":0}', delayMs: 30 });
    const trackingId = await emit('{"type":1,"deliveries":3,"fields":{"amount":12345678901234567890.123}}');
    await until(() => receiver.received.length >= 3);
    expect(receiver.maxActive).toBe(1);
    const payloads = receiver.received.map((r) => ({ ...r.payload, requestUUID: undefined }));
    expect(payloads[1]).toEqual(payloads[0]);
    expect(payloads[2]).toEqual(payloads[0]);
    expect(receiver.received.every((r) => r.text.includes('"amount":12345678901234567890.123'))).toBe(true);
    expect(new Set(receiver.received.map((r) => r.payload.requestUUID)).size).toBe(3);
    expect(receiver.received.every((r) => r.payload.trackingId === trackingId)).toBe(true);
    await until(async () => (await attempts(trackingId)).length === 3);
  });

  it('sends concurrent duplicates at once', async () => {
    receiver.reset();
    receiver.answer = () => ({ status: 200, body: '{"errCode":0}', delayMs: 150 });
    await emit({ type: 2, deliveries: 5, concurrent: true });
    await until(() => receiver.received.length >= 5);
    expect(receiver.maxActive).toBeGreaterThanOrEqual(4);
  });

  it('keeps exact numbers in fields and makes wrapped-contract twins (same txid, another toAddress)', async () => {
    receiver.reset();
    const txid = 'ab'.repeat(32);
    await emit(
      `{"type":1,"fields":{"txid":"${txid}","toAddress":"TA","amount":12345678901234567890.123,"extra":{"n":1e400}}}`,
    );
    await emit({ type: 1, fields: { txid, toAddress: 'TB' } });
    await until(() => receiver.received.length >= 2);
    const [a, b] = [...receiver.received].sort((x, y) =>
      String(x.payload.toAddress).localeCompare(String(y.payload.toAddress)),
    );
    expect(a!.payload.txid).toBe(txid);
    expect(b!.payload.txid).toBe(txid);
    expect(a!.payload.trackingId).not.toBe(b!.payload.trackingId);
    expect(a!.text).toContain('"amount":12345678901234567890.123');
    expect(a!.text).toContain('"extra":{"n":1e400}');
  });

  it('waits delayMs before the first delivery', async () => {
    receiver.reset();
    const sent = Date.now();
    await emit({ type: 4, delayMs: 200 });
    await until(() => receiver.received.length >= 1);
    expect(receiver.received[0]!.at - sent).toBeGreaterThanOrEqual(190);
  });
});

describe('durability', () => {
  it('a restart with a file store keeps energy, orders and the pending callback queue', async () => {
    const store = join(dir, 'durable.sqlite');
    const fileConfig: EmulatorConfig = { ...config, store, callbacks: { ...config.callbacks, withdrawalDelayMs: 400 } };
    const first = await startEmulator(fileConfig, { port: 0 });
    receiver.reset();
    await control(first, 'PUT', '/__control/merchants/10086/energy', { balance: 500, costPerTx: 100 });
    expect(
      (
        await callOrder(
          first,
          '{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"lease-1","symbol":"ENERGY","chainName":"TRON","toAddr":"T","amount":2,"expiryHours":1}',
        )
      ).code,
    ).toBe(0);
    expect((await callOrder(first, orderText('persist-1'))).code).toBe(0);
    // A delivery in its retry wait survives too.
    receiver.answer = () => ({ status: 500, body: '{"errCode":500}' });
    const retrying = await emit({ type: 7, retryDelaysMs: [1000] }, first);
    await until(() => receiver.received.length >= 1);
    // The answer is recorded before the stop (a stop while an attempt is in flight records it as cut: failed).
    await until(async () => (await attempts(retrying, first)).some((a) => a.verdict === 'rejected') && true, 5_000);
    await first.close();
    expect(receiver.received.every((r) => r.payload.callBackId !== 'persist-1')).toBe(true);

    receiver.answer = () => ({ status: 200, body: '{"errCode":0}' });
    const second = await startEmulator(fileConfig, { port: 0 });
    try {
      const energy = await control(second, 'GET', '/__control/merchants/10086/energy');
      expect(energy.body).toEqual({ balance: 300, costPerTx: 100 });
      const data = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', merchant.keyPair.publicKey);
      const res = await fetch(second.url + ENERGY, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
        body: new URLSearchParams({ data }),
      });
      const envelope = (await res.json()) as { data: string };
      expect(openJson(envelope.data, 'response', merchant.keyPair.publicKey).text).toContain('"energyMaxCount":3}');
      expect((await callOrder(second, orderText('persist-1'))).code).toBe(40012);
      const withdrawal = await until(() => receiver.received.find((r) => r.payload.callBackId === 'persist-1'), 5_000);
      expect(withdrawal.text).toContain('"amount":12345678901234567890.123}');
      await until(async () => (await attempts(retrying, second)).length >= 2 && true, 5_000);
      expect((await attempts(retrying, second)).map((a) => a.verdict)).toEqual(['rejected', 'acknowledged']);
    } finally {
      await second.close();
    }
  });

  it('holds withdrawal callbacks of a merchant without a callback URL until one is set', async () => {
    const quiet: EmulatorConfig = {
      ...config,
      merchants: [{ ...merchant, callbackUrl: undefined as unknown as string }],
    };
    delete quiet.merchants[0]!.callbackUrl;
    const own = await watchedEmulator('held', quiet);
    const held = own.target;
    try {
      receiver.reset();
      expect((await callOrder(held, orderText('held-1'))).code).toBe(0);
      // The callback is queued and nothing is due: no URL, so the dispatcher has nothing to send.
      expect([own.queue.unfinishedDeliveries(), own.queue.nextDueAt()]).toEqual([1, undefined]);
      expect(receiver.received.filter((r) => r.payload.callBackId === 'held-1')).toEqual([]);
      expect((await control(held, 'POST', '/__control/merchants/10086/callbacks', { type: 1 })).status).toBe(400);
      await control(held, 'PUT', '/__control/merchants/10086/callback-url', { url: receiver.url });
      const got = await until(() => receiver.received.find((r) => r.payload.callBackId === 'held-1'));
      expect(got.payload.type).toBe(3);
    } finally {
      await own.close();
    }
  });
});

describe("callback policies (U-CB-FIELDS): the amount as a number or a string, the provider's spellings", () => {
  // The emulator reads its policies on every event, so one emulator serves each reading in turn.
  afterAll(() => {
    config.policies = { ...DEFAULT_POLICIES };
  });

  it('sends txId, chainName and the amount as a decimal string with every digit when the policies say so', async () => {
    receiver.reset();
    config.policies = { ...DEFAULT_POLICIES, callbackFieldNames: 'provider', callbackAmount: 'string' };
    expect((await callOrder(emulator, orderText('wd-provider-1'))).code).toBe(0);
    const [got] = await until(() => receiver.received.length >= 1 && receiver.received);
    expect(got!.text).toContain('"amount":"12345678901234567890.123"');
    expect(got!.payload).toMatchObject({ type: 3, callBackId: 'wd-provider-1', chainName: 'TRON', symbol: 'USDT' });
    expect(got!.payload.txId).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(got!.payload).filter((field) => field === 'txid' || field === 'chain')).toEqual([]);
  });

  it('sends a deposit amount as a JSON number with the same digits under callbackAmount: number', async () => {
    receiver.reset();
    config.policies = { ...DEFAULT_POLICIES, callbackAmount: 'number' };
    await emit({ type: 1, fields: { amount: '0.000000000000000001' } });
    const [got] = await until(() => receiver.received.length >= 1 && receiver.received);
    expect(got!.text).toContain('"amount":0.000000000000000001,');
    expect(got!.payload).toMatchObject({ type: 1, chain: 'TRON' });
  });

  it("keeps the toolkit's payload model by default: a deposit amount as a string, a withdrawal amount as a number", async () => {
    receiver.reset();
    config.policies = { ...DEFAULT_POLICIES };
    await emit({ type: 1, fields: { amount: '7.25' } });
    const [got] = await until(() => receiver.received.length >= 1 && receiver.received);
    expect(got!.text).toContain('"amount":"7.25"');
  });
});
