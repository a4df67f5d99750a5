import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateSchema } from '../src/core/schemas.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { describeMerchantKeys } from '../src/emulator/key-description.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const ORDER = '/api/v1/api/order/withdrawWithoutVerify';
const REQUESTS = 10_000;

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let dir: string;
let config: EmulatorConfig;
let merchant: EmulatorMerchant;
let emulator: RunningEmulator;
let agent: Agent;

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

function send(req: Sent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(emulator.url);
    const r = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        headers: { ...req.headers, 'content-length': String(req.body.length) },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-fuzz-'));
  config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  merchant = config.merchants[0]!;
  // No callback URL: withdrawal callbacks stay queued; the fuzz is about the request side.
  delete merchant.callbackUrl;
  emulator = await startEmulator(config, { port: 0 });
  agent = new Agent({ keepAlive: true, maxSockets: 16 });
});

afterAll(async () => {
  agent?.destroy();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fuzz', () => {
  it(
    `survives ${REQUESTS} random and mutated requests with correct answers and bounded memory, then still serves valid requests`,
    { timeout: 120_000 },
    async () => {
      const seed = Number(process.env.FUZZ_SEED ?? 20261123);
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const int = (max: number) => Math.floor(random() * max);
      const keys = describeMerchantKeys(merchant);
      const seal = (plain: unknown) => sealJson(plain, 'request', merchant.keyPair.publicKey);
      const huge = '9'.repeat(400);
      let serial = 0;
      const plains: Array<() => unknown> = [
        () => ({ symbol: 'ENERGY', chainName: 'TRON' }),
        () => ({
          userId: 10086,
          tenantUserId: String(int(1e6)),
          tenantType: 1,
          callBackId: `fz-${serial++}`,
          symbol: pick(['USDT', 'ENERGY', 'usdt', '', 'X'.repeat(30)]),
          chainName: 'TRON',
          toAddr: 'T',
          amount: pick([1, 0, -1, 2.5, '3', 'abc']),
          ...(random() < 0.5 ? { expiryHours: pick([1, 0, 24, 1e6, -3, 1.5]) } : {}),
        }),
        () =>
          `{"userId":${pick([huge, '1e999', '-0', '10086.0', '10086'])},"tenantUserId":"1","tenantType":${pick(['1', '2', '1e999', huge, '"1"'])},"callBackId":"fz-${serial++}","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":${pick([huge, '1e999', '1e-999', '0.1', '12345678901234567890.123', '1e1000000000'])}}`,
        () =>
          pick([
            'null',
            '[]',
            '"x"',
            '1',
            'true',
            '{}',
            '{"a":'.repeat(200),
            `[${'['.repeat(1000)}`,
            '\u0000\uffff',
            '{"symbol":{"$ne":null}}',
          ]),
        () => ({ symbol: 'ENERGY', chainName: 'TRON', pad: 'ü€'.repeat(int(400)) }),
        () => `{"symbol":"ENERGY","chainName":"TRON","x":${'['.repeat(3000 + int(4000))}]}`,
      ];
      const mutate = (text: string): string => {
        const chars = [...text];
        switch (int(9)) {
          case 0:
            chars[int(chars.length)] = pick(['A', '+', '/', '=', ' ', '-', '_', '%', '\n']);
            break;
          case 1:
            return text.slice(0, int(text.length));
          case 2:
            return text.replaceAll('+', ' ');
          case 3:
            return text.replaceAll('+', '-').replaceAll('/', '_');
          case 4:
            return text.replace(/.{76}/g, '$&\r\n');
          case 5:
            return `${text}${text}`;
          case 6:
            return text.replace(/=+$/, '');
          case 7:
            return encodeURIComponent(text);
          default:
            chars.splice(int(chars.length), 0, pick(['A', 'AAAA', '====', '\u00e9']));
        }
        return chars.join('');
      };
      const bodies: Array<() => Buffer> = [
        () => Buffer.from(new URLSearchParams({ data: seal(pick(plains)()) }).toString()),
        () => Buffer.from(`data=${mutate(seal(pick(plains)()))}`),
        () => Buffer.from(new URLSearchParams({ data: mutate(seal(pick(plains)())) }).toString()),
        () => Buffer.from(Array.from({ length: int(600) }, () => int(256))),
        () => Buffer.from(pick(['['.repeat(60_000), '{"a":'.repeat(12_000), `data=${'%5B'.repeat(20_000)}`])),
        () =>
          Buffer.from(
            pick([
              '',
              'data=',
              'data',
              '=',
              '&&&',
              'data=%zz',
              'data=AAAA&data=BBBB',
              `data=${'A'.repeat(int(5000))}`,
              '{"data":"AAAA"}',
            ]),
          ),
        () =>
          Buffer.from(
            JSON.stringify({
              merchantId: pick(['10086', '', 10086, null]),
              merchantUserId: pick(['u-1001', 'x']),
              powerCardId: pick(['pc-5500-0001', 'pc-x', '']),
              channel: 'APP',
              closeSerialNo: `s-${int(50)}`,
            }),
          ),
        () =>
          Buffer.from(
            pick([
              '{"balance":1,"costPerTx":1}',
              '{"type":1,"deliveries":0}',
              `{"balance":${huge},"costPerTx":1}`,
              '{"url":"javascript:1"}',
              '[',
              '{"type":4,"fields":[]}',
            ]),
          ),
      ];
      const paths = [
        ENERGY,
        ENERGY,
        ORDER,
        ORDER,
        '/card/close',
        '/__control/merchants/10086/energy',
        '/__control/merchants/10086/callbacks',
        '/__control/merchants/1/cards',
        '/__control/deliveries?trackingId=x',
        '/',
        '/api/v1/api/order/',
        `${ENERGY}?x=1`,
        '/%00',
        '/card/close/',
      ];
      const types = [
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded; charset=utf-8',
        'application/json',
        'text/plain',
        '',
        'multipart/form-data',
        'APPLICATION/X-WWW-FORM-URLENCODED',
      ];
      const apiKeys = [
        merchant.apiKey,
        merchant.apiKey,
        merchant.apiKey,
        keys.forbiddenKey!,
        keys.expiredKey!,
        '',
        'x'.repeat(300),
        `${merchant.apiKey} `,
      ];

      const heapBefore = process.memoryUsage().heapUsed;
      const statuses = new Map<number, number>();
      const problems: string[] = [];
      let successes = 0;
      let next = 0;
      const worker = async () => {
        while (next < REQUESTS) {
          const n = next++;
          const randomPath = pick(paths);
          const headers: Record<string, string> = {};
          const type = pick(types);
          if (type) headers['content-type'] = type;
          if (random() < 0.9) headers['x-api-key'] = pick(apiKeys);
          if (random() < 0.5) headers['x-control-token'] = random() < 0.7 ? config.control.token : 'wrong';
          let req: Sent = {
            method: random() < 0.93 ? 'POST' : pick(['GET', 'PUT', 'DELETE', 'PATCH']),
            path: randomPath,
            headers,
            body: pick(bodies)(),
          };
          const wellFormed = random() < 0.2;
          if (wellFormed) {
            // A well-formed request now and then: the valid path must keep working among the noise.
            const energyQuery = random() < 0.5;
            const plain = energyQuery
              ? { symbol: 'ENERGY', chainName: 'TRON' }
              : {
                  userId: 10086,
                  tenantUserId: String(int(1e9)),
                  tenantType: 1,
                  callBackId: `ok-${serial++}`,
                  symbol: 'USDT',
                  chainName: 'TRON',
                  toAddr: 'T',
                  amount: '0.01',
                };
            req = {
              method: 'POST',
              path: energyQuery ? ENERGY : ORDER,
              headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
              body: Buffer.from(new URLSearchParams({ data: seal(plain) }).toString()),
            };
          }
          const answer = await send(req);
          const path = req.path;
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          let json: Record<string, unknown> | undefined;
          try {
            json = JSON.parse(answer.text) as Record<string, unknown>;
          } catch {
            problems.push(`#${n} ${req.method} ${path}: not JSON (${answer.status}) ${answer.text.slice(0, 80)}`);
            continue;
          }
          if (![200, 400, 401, 403, 404].includes(answer.status))
            problems.push(`#${n} ${req.method} ${req.path}: status ${answer.status} ${answer.text.slice(0, 120)}`);
          if (answer.status === 200 && req.method === 'POST' && (path === ENERGY || path === ORDER)) {
            const issues = validateSchema(path === ENERGY ? 'EnergyMaxCountEnvelope' : 'OrderEnvelope', json);
            if (issues.length > 0) problems.push(`#${n} ${path}: envelope ${issues[0]!.message}`);
            if (json.code === 50000) problems.push(`#${n} ${path}: internal error ${answer.text.slice(0, 160)}`);
            if (wellFormed && json.code !== 0)
              problems.push(`#${n} ${path}: a well-formed request failed: ${answer.text.slice(0, 160)}`);
            if (json.code === 0) {
              successes++;
              openJson(String(json.data), 'response', merchant.keyPair.publicKey);
            }
          }
          if (answer.status === 200 && path === '/card/close' && req.method === 'POST') {
            if (validateSchema('CardCloseResponse', json).length > 0) problems.push(`#${n} card close shape`);
            if (json.errorCode === 'INTERNAL_ERROR')
              problems.push(`#${n} card close internal error: ${String(json.detailMessage)}`);
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(problems, `seed ${seed}`).toEqual([]);
      expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
      // The mix reached every layer: successes, envelope failures, 401, 403, 404.
      for (const status of [200, 401, 403, 404])
        expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(50);
      expect(successes).toBeGreaterThan(1_500);

      const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
      expect(heapGrowth).toBeLessThan(100 * 1024 * 1024);

      // Still correct afterwards.
      const energy = await send({
        method: 'POST',
        path: ENERGY,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
        body: Buffer.from(new URLSearchParams({ data: seal({ symbol: 'ENERGY', chainName: 'TRON' }) }).toString()),
      });
      const envelope = JSON.parse(energy.text) as { code: number; data: string };
      expect(envelope.code).toBe(0);
      expect(openJson(envelope.data, 'response', merchant.keyPair.publicKey).text).toMatch(
        /^\{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":\d+\}$/,
      );
      const order = await send({
        method: 'POST',
        path: ORDER,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
        body: Buffer.from(
          new URLSearchParams({
            data: seal({
              userId: 10086,
              tenantUserId: '7',
              tenantType: 1,
              callBackId: 'after-fuzz',
              symbol: 'USDT',
              chainName: 'TRON',
              toAddr: 'T',
              amount: 1,
            }),
          }).toString(),
        ),
      });
      const orderEnvelope = JSON.parse(order.text) as { code: number; data: string };
      expect(orderEnvelope.code).toBe(0);
      expect(openJson(orderEnvelope.data, 'response', merchant.keyPair.publicKey).text).toBe(
        '{"tenantUserId":7,"id":"after-fuzz"}',
      );
    },
  );
});
