import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plaintextBlockSize } from '../src/core/profile.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { CryptoError } from '../src/crypto/errors.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig, resolveEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { describeMerchantKeys } from '../src/emulator/key-description.js';
import { EMULATOR_FAULTS, FAULT_NAMES, faultyVariant, type EmulatorFault } from './fixtures/emulator-faults.js';
import { SealPool } from '../src/emulator/seal-pool.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import { openEmulatorStore, type EmulatorStore } from '../src/emulator/store.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const ORDER = '/api/v1/api/order/withdrawWithoutVerify';

let dir: string;
let config: EmulatorConfig;
let merchant: EmulatorMerchant;
let keys: ReturnType<typeof describeMerchantKeys>;
let server: Server;
let callbackUrl: string;
let received: Array<{ headers: IncomingHttpHeaders; body: string; text: string; payload: Record<string, unknown> }> =
  [];
let answerStatus = 200;
/** One pool of sealing threads for every emulator of the table (loading a thread costs more than a probe). */
let sealer: SealPool;
/** The body the callback server answers with instead of errCode 0 / 1 (for readings of an answer). */
let answerBody: string | undefined;

/** What a probe can do against one emulator. */
interface Harness {
  emulator: RunningEmulator;
  call(
    path: string,
    plain: unknown,
    options?: { apiKey?: string; contentType?: string },
  ): Promise<{ status: number; text: string; body: Record<string, unknown> }>;
  control(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** Emits a callback and waits until `count` deliveries arrived and the queue settled. */
  emit(request: Record<string, unknown>, count: number): Promise<typeof received>;
  close(body: Record<string, string>): Promise<Record<string, unknown>>;
}

const energyQuery = { symbol: 'ENERGY', chainName: 'TRON' };
const order = (fields: Record<string, unknown> = {}) => ({
  userId: 10086,
  tenantUserId: '20931',
  tenantType: 1,
  callBackId: 'cb-fault-1',
  symbol: 'USDT',
  chainName: 'TRON',
  toAddr: 'TQn9',
  amount: 10,
  ...fields,
});

/** Opens an envelope's data like a merchant: 'ok' or the reason it cannot. */
function openReason(data: unknown): string {
  try {
    openJson(String(data), 'response', merchant.keyPair.publicKey, { profile: merchant.profile });
    return 'ok';
  } catch (error) {
    return error instanceof CryptoError ? error.reason : 'error';
  }
}

/** The decrypted callback text, or '' when it does not open. */
function tryOpen(body: string): string {
  try {
    return openJson(body, 'callback', merchant.keyPair.publicKey, { profile: merchant.profile }).text;
  } catch {
    return '';
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(probe: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

/**
 * `queue` is a second handle on the emulator's SQLite file: `unfinishedDeliveries() === 0` is the
 * deterministic signal that no further callback will be sent (the dispatcher sends only pending
 * deliveries), so no probe sleeps to show that nothing follows.
 */
function harness(emulator: RunningEmulator, queue: EmulatorStore): Harness {
  const h: Harness = {
    emulator,
    async call(path, plain, options = {}) {
      const data = sealJson(plain, 'request', merchant.keyPair.publicKey, { profile: merchant.profile });
      const res = await fetch(emulator.url + path, {
        method: 'POST',
        headers: {
          'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
          'x-api-key': options.apiKey ?? merchant.apiKey,
        },
        body: new URLSearchParams({ data }).toString(),
      });
      const text = await res.text();
      return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
    },
    async control(method, path, body) {
      const res = await fetch(emulator.url + path, {
        method,
        headers: { 'x-control-token': config.control.token },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await res.json()) as Record<string, unknown>;
    },
    async emit(request, count) {
      received = [];
      await h.control('POST', `/__control/merchants/${merchant.userId}/callbacks`, request);
      await until(() => received.length >= count && queue.unfinishedDeliveries() === 0);
      return received;
    },
    async close(body) {
      const res = await fetch(`${emulator.cardUrl}/card/close`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as Record<string, unknown>;
    },
  };
  return h;
}

const result = async (h: Harness, path: string, plain: unknown) => {
  const answer = await h.call(path, plain);
  return openJson(String(answer.body.data), 'response', merchant.keyPair.publicKey).value as Record<string, unknown>;
};
/** The HTTP status of a POST to `path` (the energy query) with exactly these headers and body (no key added). */
const bare = async (h: Harness, headers: Record<string, string>, body: string | Uint8Array, path = ENERGY) =>
  (await fetch(h.emulator.url + path, { method: 'POST', headers, body })).status;
const FORM = 'application/x-www-form-urlencoded';
/** Form field data sealed for the merchant: `plain` encrypted as the profile names. */
const sealed = (plain: unknown) =>
  sealJson(plain, 'request', merchant.keyPair.publicKey, { profile: merchant.profile });
/** Is an energy query whose data is `data` (the sealed query, then changed) accepted (code 0)? */
const dataAccepted = async (
  h: Harness,
  change: (data: string) => string,
  needs: (data: string) => boolean = () => true,
) => {
  let data = sealed({ ...energyQuery, pad: 'x'.repeat(150) });
  // PKCS#1 v1.5 padding is random: seal again until the text has what the change needs (bounded).
  for (let i = 0; i < 50 && !needs(data); i++) data = sealed({ ...energyQuery, pad: 'x'.repeat(150) });
  const res = await fetch(h.emulator.url + ENERGY, {
    method: 'POST',
    headers: { 'content-type': FORM, 'x-api-key': merchant.apiKey },
    body: `data=${encodeURIComponent(change(data)).replaceAll('%20', ' ')}`,
  });
  return ((await res.json()) as { code: unknown }).code === 0;
};
/** Is an order with `plain` accepted (code 0), on a balance of 10 transactions? */
const orderAccepted = async (h: Harness, plain: unknown) => {
  await h.control('PUT', '/__control/merchants/10086/energy', { balance: 640000, costPerTx: 64000 });
  return (await h.call(ORDER, plain)).body.code === 0;
};
const without = (field: string) => Object.fromEntries(Object.entries(order()).filter(([name]) => name !== field));
/** The deliveries of one type 4 event whose first attempt is answered HTTP 500, then errCode 0. */
const retried = async (h: Harness) => {
  answerStatus = 500;
  try {
    const first = h.emit({ type: 4, retryDelaysMs: [100] }, 1);
    await until(() => received.length >= 1);
    answerStatus = 200;
    return (await first).filter((r) => r.payload.type === 4);
  } finally {
    answerStatus = 200;
  }
};
/** The deliveries of one event whose every attempt is answered `body` (HTTP 200), retried twice at most. */
const answeredWith = async (h: Harness, body: string) => {
  answerBody = body;
  try {
    // Counted by type: a withdrawal callback of an earlier probe's order may still arrive.
    return (await h.emit({ type: 4, retryDelaysMs: [10, 10] }, 1)).filter((r) => r.payload.type === 4).length;
  } finally {
    answerBody = undefined;
  }
};
/** energyMaxCount after an order with `fields` on a balance of 10 transactions. */
const energyAfter = async (h: Harness, fields: Record<string, unknown>) => {
  await h.control('PUT', '/__control/merchants/10086/energy', { balance: 640000, costPerTx: 64000 });
  await h.call(ORDER, order(fields));
  return (await result(h, ENERGY, energyQuery)).energyMaxCount?.toString();
};
const card = (serial: string, powerCardId: string) => ({
  merchantId: '10086',
  merchantUserId: 'u-1001',
  powerCardId,
  channel: 'APP',
  closeSerialNo: serial,
});

/**
 * One row per fault: a probe, what a conforming emulator shows, and what the faulty one shows
 * instead. The runner's own tests rely on each fault being observable this way.
 */
const TABLE: Record<EmulatorFault, { probe: (h: Harness) => Promise<unknown>; good: unknown; faulty: unknown }> = {
  'err401-wrong-body': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: 'nope' })).text,
    good: '{"code":"UNAUTHORIZED","message":"unauthorized"}',
    faulty: '{"code":"UNAUTHENTICATED","message":"unauthorized"}',
  },
  'err401-status-200': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: 'nope' })).status,
    good: 401,
    faulty: 200,
  },
  'err401-expired-ok': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: keys.expiredKey! })).status,
    good: 401,
    faulty: 200,
  },
  'no-403': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: keys.forbiddenKey! })).status,
    good: 403,
    faulty: 200,
  },
  'err404-wrong-body': {
    probe: async (h) => (await fetch(`${h.emulator.url}/nope`)).text(),
    good: '{"code":"NOT FOUND","message":"not found"}',
    faulty: '{"code":"NOT_FOUND","message":"Not Found"}',
  },
  'err404-status-400': {
    probe: async (h) => {
      const res = await fetch(`${h.emulator.url}/nope`);
      return `${res.status} ${await res.text()}`;
    },
    good: '404 {"code":"NOT FOUND","message":"not found"}',
    faulty: '400 {"code":"NOT FOUND","message":"not found"}',
  },
  'ct-any': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { contentType: 'text/plain' })).body.code,
    good: 40001,
    faulty: 0,
  },
  'envelope-code-string': {
    probe: async (h) => typeof (await h.call(ENERGY, energyQuery)).body.code,
    good: 'number',
    faulty: 'string',
  },
  'envelope-message-null': {
    probe: async (h) => (await h.call(ENERGY, energyQuery)).body.message,
    good: '',
    faulty: null,
  },
  'response-urlsafe-base64': {
    probe: async (h) => openReason((await h.call(ENERGY, energyQuery)).body.data),
    good: 'ok',
    faulty: expect.stringMatching(/url-safe-alphabet|missing-padding|bad-base64-length/),
  },
  'response-line-breaks': {
    probe: async (h) => openReason((await h.call(ENERGY, energyQuery)).body.data),
    good: 'ok',
    faulty: 'line-breaks',
  },
  'response-wrong-key': {
    probe: async (h) => openReason((await h.call(ENERGY, energyQuery)).body.data),
    good: 'ok',
    faulty: 'wrong-key',
  },
  'energy-round': {
    probe: async (h) => {
      await h.control('PUT', '/__control/merchants/10086/energy', { balance: 190, costPerTx: 100 });
      return (await result(h, ENERGY, energyQuery)).energyMaxCount?.toString();
    },
    good: '1',
    faulty: '2',
  },
  'energy-stale': {
    probe: async (h) => {
      await h.control('PUT', '/__control/merchants/10086/energy', { balance: 640000, costPerTx: 64000 });
      return (await result(h, ENERGY, energyQuery)).energyMaxCount?.toString();
    },
    good: '10',
    faulty: '312',
  },
  'energy-lease-debits-amount': {
    probe: async (h) => {
      await h.control('PUT', '/__control/merchants/10086/energy', { balance: 30, costPerTx: 3 });
      await h.call(ORDER, order({ symbol: 'ENERGY', amount: 7, expiryHours: 24 }));
      return (await result(h, ENERGY, energyQuery)).energyMaxCount?.toString();
    },
    good: '3',
    faulty: '7',
  },
  'order-tenant-type-any': {
    probe: async (h) => (await h.call(ORDER, order({ tenantType: 2 }))).body.code,
    good: 40011,
    faulty: 0,
  },
  'order-energy-no-expiry': {
    probe: async (h) => (await h.call(ORDER, order({ symbol: 'ENERGY', amount: 1 }))).body.code,
    good: 40013,
    faulty: 0,
  },
  'order-result-string': {
    probe: async (h) =>
      openJson(String((await h.call(ORDER, order())).body.data), 'response', merchant.keyPair.publicKey).text,
    good: '{"tenantUserId":20931,"id":"cb-fault-1"}',
    faulty: '{"tenantUserId":"20931","id":"cb-fault-1"}',
  },
  'order-id-echo-wrong': {
    probe: async (h) => (await result(h, ORDER, order())).id,
    good: 'cb-fault-1',
    faulty: 'cb-fault-1-1',
  },
  'order-amount-float': {
    probe: async (h) => {
      received = [];
      await h.call(
        ORDER,
        `{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"f-1","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":12345678901234567890.123}`,
      );
      await until(() => received.length >= 1);
      return /"amount":([^,}]+)/.exec(received[0]!.text)?.[1];
    },
    good: '12345678901234567890.123',
    faulty: '12345678901234567000',
  },
  'card-missing-fields': {
    probe: async (h) => 'errorMessageEn' in (await h.close(card('s-1', 'pc-none'))),
    good: true,
    faulty: false,
  },
  'card-repeat-serial-ok': {
    probe: async (h) => {
      await h.close(card('s-same', 'pc-5500-0001'));
      return (await h.close(card('s-same', 'pc-5500-0002'))).success;
    },
    good: false,
    faulty: true,
  },
  'callback-form-field': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.body.startsWith('data='),
    good: false,
    faulty: true,
  },
  'callback-no-api-key': {
    probe: async (h) => 'x-api-key' in (await h.emit({ type: 4 }, 1))[0]!.headers,
    good: true,
    faulty: false,
  },
  'callback-wrong-api-key': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.headers['x-api-key'] === merchant.apiKey,
    good: true,
    faulty: false,
  },
  'callback-same-uuid': {
    probe: async (h) => new Set((await h.emit({ type: 1, deliveries: 2 }, 2)).map((r) => r.payload.requestUUID)).size,
    good: 2,
    faulty: 1,
  },
  'callback-new-tracking-id': {
    probe: async (h) => new Set((await h.emit({ type: 1, deliveries: 2 }, 2)).map((r) => r.payload.trackingId)).size,
    good: 1,
    faulty: 2,
  },
  'callback-retry-after-ack': {
    probe: async (h) => (await h.emit({ type: 4, retryDelaysMs: [10, 10] }, 1)).length,
    good: 1,
    faulty: 2,
  },
  'callback-no-retry': {
    probe: async (h) => {
      answerStatus = 500;
      try {
        return (await h.emit({ type: 4, retryDelaysMs: [10, 10] }, 1)).length;
      } finally {
        answerStatus = 200;
      }
    },
    good: 3,
    faulty: 1,
  },
  'callback-public-key': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.text !== '',
    good: true,
    faulty: false,
  },
  'err401-after-content-type': {
    probe: (h) => bare(h, { 'content-type': 'text/plain' }, 'not a form'),
    good: 401,
    faulty: 200,
  },
  'err401-after-form': {
    probe: (h) => bare(h, { 'content-type': 'application/x-www-form-urlencoded' }, 'symbol=ENERGY'),
    good: 401,
    faulty: 200,
  },
  'order-kind-ignore-case': {
    probe: (h) => energyAfter(h, { symbol: 'energy', amount: 2, expiryHours: 24 }),
    good: '10',
    faulty: '8',
  },
  'order-withdrawal-leases': { probe: (h) => energyAfter(h, { symbol: 'USDT', amount: 3 }), good: '10', faulty: '7' },
  'callback-ack-no-errcode': { probe: (h) => answeredWith(h, '{"message":"ok"}'), good: 3, faulty: 1 },
  'callback-ack-code-zero': { probe: (h) => answeredWith(h, '{"code":0}'), good: 3, faulty: 1 },
  'callback-ack-text-body': { probe: (h) => answeredWith(h, 'success'), good: 3, faulty: 1 },
  'callback-ack-string-zero': { probe: (h) => answeredWith(h, '{"errCode":"0"}'), good: 3, faulty: 1 },
  'callback-retry-new-to-address': {
    probe: async (h) => {
      answerStatus = 500;
      try {
        return new Set(
          (await h.emit({ type: 1, retryDelaysMs: [10] }, 2))
            .filter((r) => r.payload.type === 1)
            .map((r) => r.payload.toAddress),
        ).size;
      } finally {
        answerStatus = 200;
      }
    },
    good: 1,
    faulty: 2,
  },
  'callback-resend-chain-case': {
    probe: async (h) => new Set((await h.emit({ type: 1, deliveries: 2 }, 2)).map((r) => r.payload.chain)).size,
    good: 1,
    faulty: 2,
  },
  'err403-wrong-body': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: keys.forbiddenKey! })).text,
    good: '{"code":"FORBIDDEN","message":"forbidden"}',
    faulty: '{"code":"PERMISSION_DENIED","message":"forbidden"}',
  },
  'err403-status-401': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { apiKey: keys.forbiddenKey! })).status,
    good: 403,
    faulty: 401,
  },
  'ct-missing-ok': {
    probe: async (h) => {
      // A byte body: fetch adds no Content-Type.
      const res = await fetch(h.emulator.url + ENERGY, {
        method: 'POST',
        headers: { 'x-api-key': merchant.apiKey },
        body: new TextEncoder().encode(new URLSearchParams({ data: sealed(energyQuery) }).toString()),
      });
      return ((await res.json()) as { code: unknown }).code === 0;
    },
    good: false,
    faulty: true,
  },
  'ct-text-plain-ok': {
    probe: async (h) => (await h.call(ENERGY, energyQuery, { contentType: 'text/plain' })).body.code === 0,
    good: false,
    faulty: true,
  },
  'key-missing-first-merchant': {
    probe: (h) => bare(h, { 'content-type': FORM }, new URLSearchParams({ data: sealed(energyQuery) }).toString()),
    good: 401,
    faulty: 200,
  },
  'key-missing-ok-energy': {
    probe: (h) => bare(h, { 'content-type': FORM }, new URLSearchParams({ data: sealed(energyQuery) }).toString()),
    good: 401,
    faulty: 200,
  },
  'data-url-safe-ok': {
    probe: (h) => dataAccepted(h, (data) => data.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')),
    good: false,
    faulty: true,
  },
  'data-line-breaks-ok': {
    probe: (h) => dataAccepted(h, (data) => data.replace(/.{76}(?=.)/g, '$&\r\n')),
    good: false,
    faulty: true,
  },
  'data-plus-as-space-ok': {
    probe: (h) =>
      dataAccepted(
        h,
        (data) => data.replaceAll('+', ' '),
        (data) => data.includes('+'),
      ),
    good: false,
    faulty: true,
  },
  'energy-req-default-chain': {
    probe: async (h) => (await h.call(ENERGY, { symbol: 'ENERGY' })).body.code === 0,
    good: false,
    faulty: true,
  },
  'energy-req-default-symbol': {
    probe: async (h) => (await h.call(ENERGY, { chainName: 'TRON' })).body.code === 0,
    good: false,
    faulty: true,
  },
  'energy-res-missing-symbol': {
    probe: async (h) => 'symbol' in (await result(h, ENERGY, energyQuery)),
    good: true,
    faulty: false,
  },
  'energy-res-chain-lowercase': {
    probe: async (h) => (await result(h, ENERGY, energyQuery)).chainName,
    good: 'TRON',
    faulty: 'tron',
  },
  'envelope-message-absent': {
    probe: async (h) => 'message' in (await h.call(ENERGY, energyQuery)).body,
    good: true,
    faulty: false,
  },
  'envelope-code-missing': {
    probe: async (h) => 'code' in (await h.call(ENERGY, energyQuery)).body,
    good: true,
    faulty: false,
  },
  'envelope-data-empty': {
    probe: async (h) => (await h.call(ENERGY, energyQuery)).body.data === '',
    good: false,
    faulty: true,
  },
  'envelope-data-absent': {
    probe: async (h) => 'data' in (await h.call(ENERGY, energyQuery)).body,
    good: true,
    faulty: false,
  },
  'order-tenant-type-at-most-1': {
    probe: (h) => orderAccepted(h, order({ tenantType: 0 })),
    good: false,
    faulty: true,
  },
  'order-missing-userid-ok': { probe: (h) => orderAccepted(h, without('userId')), good: false, faulty: true },
  'order-missing-toaddr-ok': { probe: (h) => orderAccepted(h, without('toAddr')), good: false, faulty: true },
  'order-energy-amount-rounded': {
    probe: (h) => orderAccepted(h, order({ symbol: 'ENERGY', amount: 2.5, expiryHours: 24 })),
    good: false,
    faulty: true,
  },
  'order-energy-amount-truncated': {
    probe: (h) => orderAccepted(h, order({ symbol: 'ENERGY', amount: 2.5, expiryHours: 24 })),
    good: false,
    faulty: true,
  },
  'order-energy-null-expiry-ok': {
    probe: (h) => orderAccepted(h, order({ symbol: 'ENERGY', amount: 1, expiryHours: null })),
    good: false,
    faulty: true,
  },
  'response-other-half': {
    probe: async (h) => openReason((await h.call(ENERGY, energyQuery)).body.data) === 'ok',
    good: true,
    faulty: false,
  },
  'card-success-no-bizid': {
    probe: async (h) => typeof ((await h.close(card('s-2', 'pc-5500-0001'))).data as { bizId?: unknown } | null)?.bizId,
    good: 'string',
    faulty: 'undefined',
  },
  'card-success-error-code-null': {
    probe: async (h) => (await h.close(card('s-2', 'pc-5500-0001'))).errorCode,
    good: '',
    faulty: null,
  },
  'card-error-code-number': {
    probe: async (h) => typeof (await h.close(card('s-1', 'pc-none'))).errorCode,
    good: 'string',
    faulty: 'number',
  },
  'card-req-numeric-merchant-id': {
    probe: async (h) => (await h.close(card('s-3', 'pc-5500-0002'))).success,
    good: true,
    faulty: false,
  },
  'callback-json-content-type': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.headers['content-type'],
    good: FORM,
    faulty: 'application/json',
  },
  'callback-json-body': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.body.startsWith('{'),
    good: false,
    faulty: true,
  },
  'callback-stranger-key': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.text !== '',
    good: true,
    faulty: false,
  },
  'callback-api-key-upper': {
    probe: async (h) => (await h.emit({ type: 4 }, 1))[0]!.headers['x-api-key'] === merchant.apiKey,
    good: true,
    faulty: false,
  },
  'callback-retry-same-uuid': {
    probe: async (h) => new Set((await retried(h)).map((r) => r.payload.requestUUID)).size,
    good: 2,
    faulty: 1,
  },
  'callback-retry-new-tracking-id': {
    probe: async (h) => new Set((await retried(h)).map((r) => r.payload.trackingId)).size,
    good: 1,
    faulty: 2,
  },
  'path-any-version': {
    probe: (h) =>
      bare(
        h,
        { 'content-type': FORM, 'x-api-key': merchant.apiKey },
        new URLSearchParams({ data: sealed(energyQuery) }).toString(),
        ENERGY.replace('/v1/', '/v2/'),
      ),
    good: 404,
    faulty: 200,
  },
  'energy-path-lowercase': {
    probe: async (h) => [
      (await h.call(ENERGY, energyQuery)).status,
      (await h.call(ENERGY.toLowerCase(), energyQuery)).status,
    ],
    good: [200, 404],
    faulty: [404, 200],
  },
  'energy-path-trailing-slash': {
    probe: async (h) => [(await h.call(ENERGY, energyQuery)).status, (await h.call(`${ENERGY}/`, energyQuery)).status],
    good: [200, 404],
    faulty: [404, 200],
  },
  'order-path-lowercase': {
    probe: async (h) => [
      (await h.call(ORDER, order())).status,
      (await h.call(ORDER.toLowerCase(), order({ callBackId: 'cb-fault-2' }))).status,
    ],
    good: [200, 404],
    faulty: [404, 200],
  },
  'order-path-trailing-slash': {
    probe: async (h) => [
      (await h.call(ORDER, order())).status,
      (await h.call(`${ORDER}/`, order({ callBackId: 'cb-fault-2' }))).status,
    ],
    good: [200, 404],
    faulty: [404, 200],
  },
  'card-ct-form-only': {
    probe: async (h) => (await h.close(card('s-3', 'pc-5500-0002'))).success,
    good: true,
    faulty: false,
  },
  'card-ct-charset-required': {
    probe: async (h) => (await h.close(card('s-3', 'pc-5500-0002'))).success,
    good: true,
    faulty: false,
  },
  'card-req-snake-case': {
    probe: async (h) => (await h.close(card('s-3', 'pc-5500-0002'))).success,
    good: true,
    faulty: false,
  },
  'path-unversioned-alias': {
    probe: (h) =>
      bare(
        h,
        { 'content-type': FORM, 'x-api-key': merchant.apiKey },
        new URLSearchParams({ data: sealed(energyQuery) }).toString(),
        ENERGY.replace('/v1/', '/'),
      ),
    good: 404,
    faulty: 200,
  },
  'order-path-v2-only': {
    probe: async (h) => [
      (await h.call(ORDER, order())).status,
      (await h.call(ORDER.replace('/v1/', '/v2/'), order({ callBackId: 'cb-fault-2' }))).status,
    ],
    good: [200, 404],
    faulty: [404, 200],
  },
  'energy-path-unversioned-only': {
    probe: async (h) => [
      (await h.call(ENERGY, energyQuery)).status,
      (await h.call(ENERGY.replace('/v1/', '/'), energyQuery)).status,
    ],
    good: [200, 404],
    faulty: [404, 200],
  },
  'key-ignore-case': {
    probe: async (h) => {
      const key = merchant.apiKey;
      return (
        await h.call(ENERGY, energyQuery, { apiKey: key.toUpperCase() !== key ? key.toUpperCase() : key.toLowerCase() })
      ).status;
    },
    good: 401,
    faulty: 200,
  },
  'request-whole-block-refused': {
    // The energy query padded with whitespace to exactly one block of plaintext.
    probe: async (h) => {
      const text = JSON.stringify(energyQuery);
      return (await h.call(ENERGY, `${text.slice(0, -1)}${' '.repeat(blockSize() - text.length)}}`)).body.code;
    },
    good: 0,
    faulty: 40005,
  },
  'order-id-digits-as-number': {
    probe: async (h) => {
      const id = (await result(h, ORDER, order({ callBackId: '000123' }))).id;
      return typeof id === 'string' ? id : `a number ${String(id)}`;
    },
    good: '000123',
    faulty: 'a number 123',
  },
  'energy-float-division': {
    probe: async (h) => {
      // 3·(2^53 + 1) + 2 over 3: a double division rounds the quotient 2^53 + 1 up to 2^53 + 2.
      await fetch(`${h.emulator.url}/__control/merchants/10086/energy`, {
        method: 'PUT',
        headers: { 'x-control-token': config.control.token },
        body: '{"balance":27021597764222981,"costPerTx":3}',
      });
      return (await result(h, ENERGY, energyQuery)).energyMaxCount?.toString();
    },
    good: '9007199254740993',
    faulty: '9007199254740994',
  },
  'response-drops-whole-block': {
    // {"tenantUserId":20931,"id":"…"} is 30 bytes around the id: an id of 2B − 30 bytes fills two blocks.
    probe: async (h) =>
      openReason((await h.call(ORDER, order({ callBackId: 'w'.repeat(2 * blockSize() - 30) }))).body.data),
    good: 'ok',
    faulty: 'not-json',
  },
  'order-tenant-type-int32': {
    probe: (h) => orderAccepted(h, order({ tenantType: 4_294_967_297 })),
    good: false,
    faulty: true,
  },
  'order-null-chain-tron': { probe: (h) => orderAccepted(h, order({ chainName: null })), good: false, faulty: true },
  'ct-prefix-match': {
    probe: async (h) =>
      (await h.call(ENERGY, energyQuery, { contentType: 'application/x-www-form-urlencoded-v2' })).body.code,
    good: 40001,
    faulty: 0,
  },
};

/** The plaintext block size of the merchant's key and profile. */
const blockSize = () => plaintextBlockSize(merchant.profile, merchant.keyPair.privateKey.modulusBytes);

beforeAll(async () => {
  sealer = new SealPool();
  await sealer.warm();
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-faults-'));
  config = loadEmulatorConfig(initEmulatorDir(dir, { store: ':memory:', port: 0 }).configPath);
  merchant = config.merchants[0]!;
  keys = describeMerchantKeys(merchant);
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      const text = tryOpen(body);
      received.push({
        headers: req.headers,
        body,
        text,
        payload: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      });
      res
        .writeHead(answerStatus, { 'content-type': 'application/json' })
        .end(answerBody ?? (answerStatus === 200 ? '{"errCode":0}' : '{"errCode":1}'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`;
  merchant.callbackUrl = callbackUrl;
  config.callbacks = {
    timeoutMs: 1_000,
    withdrawalDelayMs: 10,
    retry: { initialDelayMs: 10, factor: 1, maxDelayMs: 10, maxAttempts: 3 },
  };
});

afterAll(async () => {
  await sealer?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('emulator faults', () => {
  it('covers at least 18 faults, each naming the rules it breaks, and the table covers every one', () => {
    expect(FAULT_NAMES.length).toBeGreaterThanOrEqual(18);
    expect(Object.keys(TABLE).sort()).toEqual([...FAULT_NAMES].sort());
    for (const fault of FAULT_NAMES) expect(EMULATOR_FAULTS[fault].rules.length, fault).toBeGreaterThan(0);
  });

  it('refuses unknown fault names, and faults cannot come from the YAML', async () => {
    expect(() => faultyVariant(['energy-flor'])).toThrow(/unknown emulator fault "energy-flor"/);
    expect(() =>
      resolveEmulatorConfig({ control: { token: 't' }, faults: ['ct-any'], merchants: [] }, dir, 'x.yaml'),
    ).toThrow(/unknown field 'faults'/);
  });

  for (const fault of FAULT_NAMES) {
    it(`${fault}: ${EMULATOR_FAULTS[fault].effect} (breaks ${EMULATOR_FAULTS[fault].rules.join(', ')})`, async () => {
      const row = TABLE[fault];
      for (const [faults, expected] of [
        [[], row.good],
        [[fault], row.faulty],
      ] as const) {
        const store = join(dir, `${fault}${faults.length ? '-faulty' : ''}.sqlite`);
        const emulator = await startEmulator({ ...config, store }, { port: 0, variant: faultyVariant(faults), sealer });
        const queue = openEmulatorStore(store);
        try {
          expect(await row.probe(harness(emulator, queue)), faults.length ? 'faulty' : 'conforming').toEqual(expected);
        } finally {
          queue.close();
          await emulator.close();
        }
      }
    });
  }
});
