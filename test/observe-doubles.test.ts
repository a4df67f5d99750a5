/**
 * The observe judge on traffic between the independent Python doubles (test/doubles/python/: a
 * wallet service on http.server and a Flask receiver, written from the interface alone with their
 * own readings of the open points), through two loopback recording proxies. A correct pair must
 * judge with no failure; a failure here is read first as a check that enforces what the interface
 * leaves open.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJudge } from '../src/observe/judge.js';
import type { ObservedExchange } from '../src/observe/exchange.js';
import { encryptWithPublic } from './doubles/crypto.js';
import { pythonMissing, startPython, type PythonDouble } from './doubles/python.js';
import { Recording, startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-observe-doubles-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const apiKey = 'py-live-obs-2c7d41';
const controlToken = 'py-control-obs-9e1a';
const userId = 40417;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(pythonMissing !== undefined)(`the Python doubles through the judge (skipped only when ${pythonMissing ?? 'python3, flask or cryptography is missing'})`, () => {
  let service: PythonDouble;
  let receiver: PythonDouble;
  let orderProxy: RecordingProxy;
  let callbackProxy: RecordingProxy;
  const recording = new Recording();

  beforeAll(async () => {
    receiver = await startPython('receiver.py', { publicKeyPem: publicPem, store: join(dir, 'receiver.sqlite'), apiKeys: [{ key: apiKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2099-12-31T23:59:59Z' }] }, dir);
    service = await startPython('service.py', { privateKeyPem: privatePem, apiKey, forbiddenKey: 'py-ro-obs', expiredKey: 'py-exp-obs', userId, controlToken }, dir);
    orderProxy = await startRecordingProxy(service.origin, 'merchant→service', recording);
    callbackProxy = await startRecordingProxy(receiver.origin, 'service→merchant', recording);
  }, 60_000);
  afterAll(async () => {
    await orderProxy?.close();
    await callbackProxy?.close();
    await service?.close();
    await receiver?.close();
  });

  it('judges energy, order, card close and callback traffic with no failure', async () => {
    const control = async (method: string, route: string, body: unknown) => {
      const res = await fetch(`${service.origin}/wallet-api/__control/merchants/${userId}/${route}`, { method, headers: { 'content-type': 'application/json', 'x-control-token': controlToken }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    await control('PUT', 'callback-url', { url: `${callbackProxy.url}/hooks/wallet` });
    const post = async (path: string, plain: unknown) => {
      const data = encryptWithPublic(Buffer.from(JSON.stringify(plain), 'utf8'), publicKey);
      const res = await fetch(`${orderProxy.url}/wallet-api/api/v1/api/order/${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey }, body: new URLSearchParams({ data }).toString() });
      return ((await res.json()) as { code: number }).code;
    };
    expect(await post('getEnergyMaxCount', { symbol: 'ENERGY', chainName: 'TRON' })).toBe(0);
    expect(await post('withdrawWithoutVerify', { userId, tenantUserId: '20931', tenantType: 1, callBackId: `obs-${randomUUID().slice(0, 8)}`, symbol: 'USDT', chainName: 'TRON', toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', amount: '10.5' })).toBe(0);
    await control('POST', 'cards', { powerCardId: 'pc-obs-1', merchantUserId: 'u-1' });
    const card = await fetch(`${orderProxy.url}/cardsvc/card/close`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ merchantId: String(userId), merchantUserId: 'u-1', powerCardId: 'pc-obs-1', channel: 'app', closeSerialNo: `cs-${randomUUID().slice(0, 8)}` }) });
    expect(card.status).toBeLessThan(500);
    await control('POST', 'callbacks', { type: 1 });
    await control('POST', 'callbacks', { type: 6 });
    await until(() => recording.exchanges.filter((e) => e.kind === 'callback' && e.response?.status === 200).length >= 3);

    const judge = createJudge({ keys: { publicKeyPem: publicPem, privateKeyPem: privatePem, apiKey }, strict: false });
    for (const exchange of [...recording.exchanges].sort((a: ObservedExchange, b: ObservedExchange) => a.seq - b.seq)) judge.accept(exchange);
    const { report } = judge.finish();
    const failed = report.results.filter((r) => r.status === 'failed').map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`);
    expect(failed, `${failed.join('\n')}\n${service.output()}\n${receiver.output()}`).toEqual([]);
    const passed = new Set(report.results.filter((r) => r.status === 'passed').map((r) => r.id));
    for (const check of ['energy-request', 'order-request', 'envelope', 'result', 'card-response', 'callback-decrypts', 'callback-answer', 'callback-request-uuid', 'order-callback']) expect(passed, check).toContain(`observe/all/${check}`);
  }, 60_000);
});
