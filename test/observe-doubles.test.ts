/**
 * The observe judge on traffic between the independent Python doubles (test/doubles/python/: a
 * wallet service on http.server and a Flask receiver, written from the interface alone with their
 * own readings of the open points), through two loopback recording proxies. A correct pair must
 * judge with no failure; a failure here is read first as a check that enforces what the interface
 * leaves open.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealJson } from '../src/crypto/codec.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { startEmulator } from '../src/emulator/server.js';
import { openEmulatorStore } from '../src/emulator/store.js';
import { createJudge } from '../src/observe/judge.js';
import type { ObservedExchange } from '../src/observe/exchange.js';
import { encryptWithPublic } from './doubles/crypto.js';
import { pythonMissing, startPython, type PythonDouble } from './doubles/python.js';
import { ROOT } from './support/cli.js';
import { startPrinting } from './support/process.js';
import { Recording, startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';
import { until } from './support/until.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-observe-doubles-'));
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const apiKey = 'py-live-obs-2c7d41';
const controlToken = 'py-control-obs-9e1a';
const userId = 40417;

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

const JAVA = spawnSync('java', ['-version']).status === 0;

/** Starts a single-file Java double; resolves with the first match of `ready` in what it prints (30 s at most). */
async function startJava(file: string, args: string[], ready: RegExp): Promise<RegExpExecArray> {
  return (await startPrinting('java', [join(ROOT, 'test/doubles/java', file), ...args], ready, children, file)).match;
}

describe.skipIf(pythonMissing !== undefined)(
  `the Python doubles through the judge (skipped only when ${pythonMissing ?? 'python3, flask or cryptography is missing'})`,
  () => {
    let service: PythonDouble;
    let receiver: PythonDouble;
    let orderProxy: RecordingProxy;
    let callbackProxy: RecordingProxy;
    const recording = new Recording();

    beforeAll(async () => {
      receiver = await startPython(
        'receiver.py',
        {
          publicKeyPem: publicPem,
          store: join(dir, 'receiver.sqlite'),
          apiKeys: [{ key: apiKey, notBefore: '2020-01-01T00:00:00Z', notAfter: '2099-12-31T23:59:59Z' }],
        },
        dir,
      );
      service = await startPython(
        'service.py',
        {
          privateKeyPem: privatePem,
          apiKey,
          forbiddenKey: 'py-ro-obs',
          expiredKey: 'py-exp-obs',
          userId,
          controlToken,
        },
        dir,
      );
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
        const res = await fetch(`${service.origin}/wallet-api/__control/merchants/${userId}/${route}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-control-token': controlToken },
          body: JSON.stringify(body),
        });
        expect(res.status, await res.clone().text()).toBe(200);
      };
      await control('PUT', 'callback-url', { url: `${callbackProxy.url}/hooks/wallet` });
      const post = async (path: string, plain: unknown) => {
        const data = encryptWithPublic(Buffer.from(JSON.stringify(plain), 'utf8'), publicKey);
        const res = await fetch(`${orderProxy.url}/wallet-api/api/v1/api/order/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
          body: new URLSearchParams({ data }).toString(),
        });
        return ((await res.json()) as { code: number }).code;
      };
      expect(await post('getEnergyMaxCount', { symbol: 'ENERGY', chainName: 'TRON' })).toBe(0);
      expect(
        await post('withdrawWithoutVerify', {
          userId,
          tenantUserId: '20931',
          tenantType: 1,
          callBackId: `obs-${randomUUID().slice(0, 8)}`,
          symbol: 'USDT',
          chainName: 'TRON',
          toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
          amount: '10.5',
        }),
      ).toBe(0);
      await control('POST', 'cards', { powerCardId: 'pc-obs-1', merchantUserId: 'u-1' });
      const card = await fetch(`${orderProxy.url}/cardsvc/card/close`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          merchantId: String(userId),
          merchantUserId: 'u-1',
          powerCardId: 'pc-obs-1',
          channel: 'app',
          closeSerialNo: `cs-${randomUUID().slice(0, 8)}`,
        }),
      });
      expect(card.status).toBeLessThan(500);
      await control('POST', 'callbacks', { type: 1 });
      await control('POST', 'callbacks', { type: 6 });
      await until(
        () => recording.exchanges.filter((e) => e.kind === 'callback' && e.response?.status === 200).length >= 3,
        15_000,
        20,
      );

      const judge = createJudge({
        keys: { publicKeyPem: publicPem, privateKeyPem: privatePem, apiKey },
        strict: false,
      });
      for (const exchange of [...recording.exchanges].sort((a: ObservedExchange, b: ObservedExchange) => a.seq - b.seq))
        judge.accept(exchange);
      const { report } = judge.finish();
      const failed = report.results
        .filter((r) => r.status === 'failed')
        .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`);
      expect(failed, `${failed.join('\n')}\n${service.output()}\n${receiver.output()}`).toEqual([]);
      const passed = new Set(report.results.filter((r) => r.status === 'passed').map((r) => r.id));
      for (const check of [
        'energy-request',
        'order-request',
        'envelope',
        'result',
        'card-response',
        'callback-decrypts',
        'callback-answer',
        'callback-request-uuid',
        'order-callback',
      ])
        expect(passed, check).toContain(`observe/all/${check}`);
    }, 60_000);
  },
);

describe.skipIf(!JAVA)('the Java doubles through the judge (skipped only without a JDK)', () => {
  it("judges order and card close traffic with Service.java, and the emulator's callbacks to Receiver.java, with no failure", async () => {
    const emuDir = join(dir, 'java-emulator');
    const config = loadEmulatorConfig(initEmulatorDir(emuDir, { store: ':memory:', port: 0 }).configPath);
    const merchant = config.merchants[0]!;
    const recording = new Recording();
    const receiverUrl = await startJava(
      'Receiver.java',
      ['--port', '0', '--public-key', join(emuDir, 'merchant-public.pem'), '--api-key', merchant.apiKey],
      /listening on (http:\/\/127\.0\.0\.1:\d+)\/callback/,
    );
    const serviceUrl = await startJava(
      'Service.java',
      [
        '--port',
        '0',
        '--private-key',
        join(emuDir, 'merchant-private.pem'),
        '--api-key',
        merchant.apiKey,
        '--user-id',
        String(merchant.userId),
      ],
      /listening on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const callbackProxy = await startRecordingProxy(receiverUrl[1]!, 'service→merchant', recording);
    const orderProxy = await startRecordingProxy(serviceUrl[1]!, 'merchant→service', recording);
    const store = join(emuDir, 'emulator.sqlite');
    const emulator = await startEmulator(
      { ...config, store, merchants: [{ ...merchant, callbackUrl: `${callbackProxy.url}/callback` }] },
      { port: 0 },
    );
    const queue = openEmulatorStore(store);
    try {
      const post = async (path: string, plain: unknown) => {
        const data = sealJson(JSON.stringify(plain), 'request', merchant.keyPair.publicKey);
        const res = await fetch(`${orderProxy.url}/api/v1/api/order/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
          body: new URLSearchParams({ data }).toString(),
        });
        return ((await res.json()) as { code: number }).code;
      };
      expect(await post('getEnergyMaxCount', { symbol: 'ENERGY', chainName: 'TRON' })).toBe(0);
      expect(
        await post('withdrawWithoutVerify', {
          userId: merchant.userId,
          tenantUserId: '20931',
          tenantType: 1,
          callBackId: `obs-${randomUUID().slice(0, 8)}`,
          symbol: 'USDT',
          chainName: 'TRON',
          toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
          amount: '10.5',
        }),
      ).toBe(0);
      await fetch(`${orderProxy.url}/card/close`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          merchantId: String(merchant.userId),
          merchantUserId: 'u-1',
          powerCardId: 'pc-obs-1',
          channel: 'app',
          closeSerialNo: `cs-${randomUUID().slice(0, 8)}`,
        }),
      });
      for (const type of [1, 3, 6]) {
        const res = await fetch(`${emulator.url}/__control/merchants/${merchant.userId}/callbacks`, {
          method: 'POST',
          headers: { 'x-control-token': config.control.token },
          body: JSON.stringify({ type }),
        });
        expect(res.status).toBe(200);
      }
      await until(
        () =>
          queue.unfinishedDeliveries() === 0 && recording.exchanges.filter((e) => e.kind === 'callback').length >= 3,
        15_000,
        20,
      );
      const judge = createJudge({
        keys: {
          publicKeyPem: merchant.keyPair.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
          privateKeyPem: merchant.keyPair.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
          apiKey: merchant.apiKey,
        },
        strict: false,
      });
      for (const exchange of [...recording.exchanges].sort((a, b) => a.seq - b.seq)) judge.accept(exchange);
      const { report } = judge.finish();
      const failed = report.results
        .filter((r) => r.status === 'failed')
        .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`);
      expect(failed, failed.join('\n')).toEqual([]);
      const passed = new Set(report.results.filter((r) => r.status === 'passed').map((r) => r.id));
      for (const check of [
        'energy-request',
        'order-request',
        'envelope',
        'result',
        'card-response',
        'callback-decrypts',
        'callback-answer',
        'callback-request-uuid',
      ])
        expect(passed, check).toContain(`observe/all/${check}`);
    } finally {
      queue.close();
      await emulator.close();
      await orderProxy.close();
      await callbackProxy.close();
    }
  }, 90_000);
});
