import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { validateSchema } from '../src/core/schemas.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import type { RsaPublicKey } from '../src/crypto/keys.js';
import { ENVELOPE_CODES } from '../src/service/codes.js';
import type { EmulatorConfig, EmulatorMerchant } from '../src/emulator/config.js';
import { loadEmulatorConfig, resolveEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { describeMerchantKeys } from '../src/emulator/key-description.js';
import { DEFAULT_POLICIES, type ServicePolicies } from '../src/service/policies.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const ORDER = '/api/v1/api/order/withdrawWithoutVerify';
const FORM = 'application/x-www-form-urlencoded';

let dir: string;
let config: EmulatorConfig;
let emulator: RunningEmulator;
let main: EmulatorMerchant;
let oaep: EmulatorMerchant;
let keys: ReturnType<typeof describeMerchantKeys>;

/** POSTs a form body; `data` is the raw field value (percent-encoded here, as a correct client does). */
async function postForm(
  path: string,
  data: string | undefined,
  apiKey: string | undefined,
  contentType = FORM,
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (apiKey !== undefined) headers['x-api-key'] = apiKey;
  const res = await fetch(emulator.url + path, {
    method: 'POST',
    headers,
    body: data === undefined ? '' : new URLSearchParams({ data }).toString(),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

/** Encrypts a plain request as a merchant does (public key, the merchant's profile) and calls an order endpoint. */
async function call(path: string, plain: unknown, merchant = main, apiKey = merchant.apiKey) {
  const sealed = sealJson(plain, 'request', merchant.keyPair.publicKey, { profile: merchant.profile });
  const answer = await postForm(path, sealed, apiKey);
  const data = answer.body.data;
  const opened =
    typeof data === 'string' && data !== ''
      ? openJson(data, 'response', merchant.keyPair.publicKey, { profile: merchant.profile })
      : undefined;
  return { ...answer, sealed, result: opened?.text };
}

function order(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    userId: 10086,
    tenantUserId: '20931',
    tenantType: 1,
    callBackId: `cb-${Math.random().toString(36).slice(2)}`,
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: 10,
    ...fields,
  };
}

async function control(method: string, path: string, body?: unknown, token = config.control.token) {
  const res = await fetch(emulator.url + path, {
    method,
    headers: { 'x-control-token': token, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-endpoints-'));
  initEmulatorDir(dir, { store: ':memory:', port: 0 });
  const pair = generateMerchantKeyPair(2048);
  writeFileSync(join(dir, 'oaep-private.pem'), pair.privatePem);
  writeFileSync(join(dir, 'oaep-public.b64'), pair.publicBase64);
  const base = loadEmulatorConfig(join(dir, 'emulator.yaml'));
  // A second merchant with its own 2048-bit key pair and an OAEP-SHA-256 profile, written as YAML.
  const yaml = `
control: {token: ${base.control.token}}
requestTimeoutMs: 600
headersTimeoutMs: 300
merchants:
  - userId: 10086
    apiKey: ${base.merchants[0]!.apiKey}
    apiKeys:
      - {key: ${describeMerchantKeys(base.merchants[0]!).forbiddenKey}, permissions: [withdrawWithoutVerify]}
      - {key: ${describeMerchantKeys(base.merchants[0]!).expiredKey}, permissions: [getEnergyMaxCount], notAfter: '2020-01-01T00:00:00Z'}
      - {key: not-yet-valid, permissions: [getEnergyMaxCount], notBefore: '2999-01-01T00:00:00Z'}
    privateKey: merchant-private.pem
    publicKey: merchant-public.pem
    energy: {balance: 20000000, costPerTx: 64000}
    cards:
      - {powerCardId: pc-1, merchantUserId: u-1}
      - {powerCardId: pc-2, merchantUserId: u-1}
      - {powerCardId: pc-3, merchantUserId: u-1, status: closed}
  - userId: 20001
    apiKey: oaep-main-key
    privateKey: oaep-private.pem
    publicKey: oaep-public.b64
    profile: {padding: oaep-sha256}
    energy: {balance: '123456789012345678901234567890', costPerTx: 7}
`;
  writeFileSync(join(dir, 'two.yaml'), yaml);
  config = loadEmulatorConfig(join(dir, 'two.yaml'));
  main = config.merchants[0]!;
  oaep = config.merchants[1]!;
  keys = describeMerchantKeys(main);
  emulator = await startEmulator(config, { port: 0 });
});

afterAll(async () => {
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('getEnergyMaxCount', () => {
  it('answers the success envelope whose data opens with the public key and holds floor(balance / costPerTx)', async () => {
    const answer = await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['code', 'message', 'data']);
    expect(answer.body).toMatchObject({ code: 0, message: '' });
    expect(validateSchema('EnergyMaxCountEnvelope', answer.body)).toEqual([]);
    expect(answer.result).toBe('{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}');
  });

  it('computes ENERGY-FLOOR from the live balance after PUT energy, exactly beyond 2^53', async () => {
    expect((await control('PUT', '/__control/merchants/10086/energy', { balance: 199, costPerTx: 100 })).body).toEqual({
      balance: 199,
      costPerTx: 100,
    });
    expect((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).result).toContain('"energyMaxCount":1}');
    await control(
      'PUT',
      '/__control/merchants/10086/energy',
      '{"balance":100000000000000000000000000001,"costPerTx":3}',
    );
    expect((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).result).toContain(
      '"energyMaxCount":33333333333333333333333333333}',
    );
    await control('PUT', '/__control/merchants/10086/energy', { balance: 20000000, costPerTx: 64000 });
  });

  it('refuses other resources with a documented code (ENERGY-REQ allows it) and bad requests with 40006', async () => {
    expect((await call(ENERGY, { symbol: 'BANDWIDTH', chainName: 'TRON' })).body).toMatchObject({
      code: ENVELOPE_CODES.unsupportedResource,
    });
    expect((await call(ENERGY, { symbol: 'ENERGY' })).body).toMatchObject({ code: ENVELOPE_CODES.invalidRequest });
    expect((await call(ENERGY, '{"symbol":1e999,"chainName":"TRON"}')).body).toMatchObject({
      code: ENVELOPE_CODES.invalidRequest,
    });
    expect((await call(ENERGY, [1, 2])).body).toMatchObject({ code: ENVELOPE_CODES.badJson });
    expect((await call(ENERGY, 'not json at all')).body).toMatchObject({ code: ENVELOPE_CODES.badJson });
  });

  it('serves several merchants at once, each with its own key pair and profile (2048-bit, OAEP-SHA-256)', async () => {
    const answer = await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' }, oaep);
    expect(answer.body.code).toBe(0);
    expect(answer.result).toContain('"energyMaxCount":17636684144620811271604938270}');
    // The first merchant's key does not open the second merchant's requests.
    const crossed = await postForm(
      ENERGY,
      sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.publicKey),
      oaep.apiKey,
    );
    expect(crossed.body.code).toBe(ENVELOPE_CODES.cannotDecrypt);
  });
});

describe('ERR-401, ERR-403, ERR-404', () => {
  const unauthorized = { code: 'UNAUTHORIZED', message: 'unauthorized' };
  it('answers 401 for a missing, empty, unknown, expired or not-yet-valid key, on both order endpoints', async () => {
    for (const path of [ENERGY, ORDER]) {
      for (const key of [undefined, '', 'no-such-key', keys.expiredKey, 'not-yet-valid']) {
        const answer = await postForm(
          path,
          sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.publicKey),
          key,
        );
        expect(answer.status, `${path} ${key}`).toBe(401);
        expect(answer.text).toBe(JSON.stringify(unauthorized));
      }
    }
    expect(keys.expiredKey).toMatch(/^expired-/);
  });

  it('answers 403 for a valid key without the permission', async () => {
    const answer = await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' }, main, keys.forbiddenKey);
    expect(answer.status).toBe(403);
    expect(answer.text).toBe('{"code":"FORBIDDEN","message":"forbidden"}');
    // The same key holds withdrawWithoutVerify.
    expect((await call(ORDER, order(), main, keys.forbiddenKey)).body.code).toBe(0);
  });

  it('answers 404 with the exact body for unknown paths, near misses and other methods', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/api/order/getEnergyMaxCounts'],
      ['POST', '/api/v2/api/order/getEnergyMaxCount'],
      ['POST', `${ENERGY}/`],
      ['GET', ENERGY],
      ['GET', '/'],
      ['PUT', '/card/close'],
      ['POST', '/API/V1/API/ORDER/GETENERGYMAXCOUNT'],
    ] as const) {
      const res = await fetch(emulator.url + path, { method, headers: { 'x-api-key': main.apiKey } });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.text()).toBe('{"code":"NOT FOUND","message":"not found"}');
    }
  });
});

describe('form body and encryption', () => {
  it("accepts Base64 with '+', '/' and '=' and long multi-block requests and responses", async () => {
    const callBackId = `long-${'x'.repeat(700)}-ü€`;
    let seen = { plus: false, slash: false, pad: false };
    for (let i = 0; i < 40 && !(seen.plus && seen.slash && seen.pad); i++) {
      const answer = await call(ORDER, order({ callBackId: `${callBackId}-${i}` }));
      expect(answer.body.code).toBe(0);
      expect(answer.result).toBe(`{"tenantUserId":20931,"id":"${callBackId}-${i}"}`);
      expect((answer.body.data as string).length).toBeGreaterThan(4 * 172);
      seen = {
        plus: seen.plus || answer.sealed.includes('+'),
        slash: seen.slash || answer.sealed.includes('/'),
        pad: seen.pad || answer.sealed.endsWith('='),
      };
    }
    expect(seen.plus && seen.slash).toBe(true);
  });

  it("refuses a '+' that arrived as a space (a client that forgot to percent-encode) with 40003", async () => {
    let sealed = '';
    while (!sealed.includes('+'))
      sealed = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.publicKey);
    const res = await fetch(emulator.url + ENERGY, {
      method: 'POST',
      headers: { 'content-type': FORM, 'x-api-key': main.apiKey },
      body: `data=${sealed}`,
    });
    const body = (await res.json()) as { code: number; message: string };
    expect(body.code).toBe(ENVELOPE_CODES.badBase64);
    expect(body.message).toMatch(/plus-as-space/);
  });

  it('refuses a missing, repeated or malformed data field and a wrong Content-Type with documented codes', async () => {
    expect((await postForm(ENERGY, undefined, main.apiKey)).body).toMatchObject({ code: ENVELOPE_CODES.missingData });
    const twice = await fetch(emulator.url + ENERGY, {
      method: 'POST',
      headers: { 'content-type': FORM, 'x-api-key': main.apiKey },
      body: 'data=AAAA&data=AAAA',
    });
    expect(((await twice.json()) as { code: number }).code).toBe(ENVELOPE_CODES.missingData);
    for (const data of ['!!!', 'AAAA-_', 'QUJD\nREVG', 'AAA', 'AAAA'.repeat(10)]) {
      const answer = await postForm(ENERGY, data, main.apiKey);
      expect([ENVELOPE_CODES.badBase64, ENVELOPE_CODES.cannotDecrypt], data).toContain(answer.body.code);
      expect(answer.body.message).toEqual(expect.any(String));
      expect(answer.body).not.toHaveProperty('data');
    }
    const sealed = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.publicKey);
    for (const type of ['application/json', 'text/plain', 'multipart/form-data; boundary=x']) {
      expect((await postForm(ENERGY, sealed, main.apiKey, type)).body).toMatchObject({
        code: ENVELOPE_CODES.badContentType,
      });
    }
    const noType = await fetch(emulator.url + ENERGY, {
      method: 'POST',
      headers: { 'x-api-key': main.apiKey },
      body: new Blob([`data=${encodeURIComponent(sealed)}`]),
    });
    expect(((await noType.json()) as { code: number }).code).toBe(ENVELOPE_CODES.badContentType);
    expect(
      (await postForm(ENERGY, sealed, main.apiKey, 'application/x-www-form-urlencoded; charset=UTF-8')).body.code,
    ).toBe(0);
  });

  it('refuses ciphertext under the wrong key half or another key size with 40004', async () => {
    const other = generateMerchantKeyPair(1024);
    const { parseKey } = await import('../src/crypto/keys.js');
    const stranger = parseKey(other.publicPem) as RsaPublicKey;
    expect(
      (await postForm(ENERGY, sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', stranger), main.apiKey)).body
        .code,
    ).toBe(ENVELOPE_CODES.cannotDecrypt);
    const privateSealed = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.privateKey, {
      profile: { ...main.profile, request: 'private' },
    });
    expect((await postForm(ENERGY, privateSealed, main.apiKey)).body.code).toBe(ENVELOPE_CODES.cannotDecrypt);
    expect(
      (
        await postForm(
          ENERGY,
          sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', oaep.keyPair.publicKey, {
            profile: oaep.profile,
          }),
          main.apiKey,
        )
      ).body.code,
    ).toBe(ENVELOPE_CODES.cannotDecrypt);
  });

  it('answers 413 JSON for a body over the limit and keeps serving', async () => {
    const res = await fetch(emulator.url + ENERGY, {
      method: 'POST',
      headers: { 'content-type': FORM, 'x-api-key': main.apiKey },
      body: `data=${'A'.repeat(70_000)}`,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'request body exceeds 65536 bytes' });
    expect((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).body.code).toBe(0);
  });
});

describe('withdrawWithoutVerify', () => {
  it('creates a withdrawal and returns tenantUserId as an integer with exact digits and id = callBackId', async () => {
    const answer = await call(
      ORDER,
      order({ tenantUserId: '9223372036854775807', callBackId: 'wd-exact-1', amount: '12345678901234567890.123' }),
    );
    expect(answer.body.code).toBe(0);
    expect(answer.result).toBe('{"tenantUserId":9223372036854775807,"id":"wd-exact-1"}');
  });

  it('gives a non-numeric tenantUserId a stable surrogate integer id', async () => {
    const first = await call(ORDER, order({ tenantUserId: 'u-20931' }));
    const again = await call(ORDER, order({ tenantUserId: 'u-20931' }));
    const other = await call(ORDER, order({ tenantUserId: 'u-77' }));
    const id = (text: string | undefined) => /"tenantUserId":(\d+),/.exec(text ?? '')?.[1];
    expect(id(first.result)).toMatch(/^9\d{15}$/);
    expect(id(again.result)).toBe(id(first.result));
    expect(id(other.result)).not.toBe(id(first.result));
    expect(validateSchema('OrderResult', JSON.parse(first.result!))).toEqual([]);
  });

  it('refuses a duplicate callBackId, tenantType other than 1, an ENERGY order without expiryHours or with a fractional amount', async () => {
    expect((await call(ORDER, order({ callBackId: 'dup-1' }))).body.code).toBe(0);
    expect((await call(ORDER, order({ callBackId: 'dup-1' }))).body).toMatchObject({
      code: ENVELOPE_CODES.duplicateCallBackId,
    });
    expect((await call(ORDER, order({ tenantType: 2 }))).body).toMatchObject({ code: ENVELOPE_CODES.tenantType });
    expect((await call(ORDER, order({ tenantType: '1' }))).body).toMatchObject({ code: ENVELOPE_CODES.tenantType });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 2 }))).body).toMatchObject({
      code: ENVELOPE_CODES.expiryHours,
    });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 2, expiryHours: 0 }))).body).toMatchObject({
      code: ENVELOPE_CODES.expiryHours,
    });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 2.5, expiryHours: 24 }))).body).toMatchObject({
      code: ENVELOPE_CODES.energyAmount,
    });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: '2.5', expiryHours: 24 }))).body).toMatchObject({
      code: ENVELOPE_CODES.energyAmount,
    });
    expect((await call(ORDER, order({ userId: 10087 }))).body).toMatchObject({ code: ENVELOPE_CODES.userIdMismatch });
    expect((await call(ORDER, order({ symbol: 'usdt!' }))).body).toMatchObject({
      code: ENVELOPE_CODES.unsupportedSymbol,
    });
    expect((await call(ORDER, order({ amount: 0 }))).body).toMatchObject({ code: ENVELOPE_CODES.amount });
    expect((await call(ORDER, order({ amount: -5 }))).body).toMatchObject({ code: ENVELOPE_CODES.amount });
    expect((await call(ORDER, order({ amount: '1e999' }))).body).toMatchObject({ code: ENVELOPE_CODES.amount });
  });

  it('refuses wrong types and huge numbers with a failure envelope, never a crash', async () => {
    const huge = '9'.repeat(400);
    for (const text of [
      `{"userId":${huge},"tenantUserId":"1","tenantType":1,"callBackId":"h1","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":1}`,
      `{"userId":10086,"tenantUserId":"1","tenantType":1e999,"callBackId":"h2","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":1}`,
      `{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"h3","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":1e999}`,
      `{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"h4","symbol":"ENERGY","chainName":"TRON","toAddr":"T","amount":${huge},"expiryHours":1}`,
      `{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"h5","symbol":"ENERGY","chainName":"TRON","toAddr":"T","amount":1,"expiryHours":${huge}}`,
      `{"userId":10086,"tenantUserId":1,"tenantType":1,"callBackId":7,"symbol":null,"chainName":[],"toAddr":{},"amount":true}`,
      `{"userId":10086,"tenantUserId":1e999,"tenantType":1,"callBackId":1.5e400,"symbol":"USDT","chainName":"TRON","toAddr":-1e999,"amount":1}`,
      `{"userId":"10086"}`,
      '{"userId":10086,',
      `{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"h6","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":1,"x":${'['.repeat(4000)}${']'.repeat(4000)}}`,
    ]) {
      const answer = await call(ORDER, text);
      expect(answer.status, text.slice(0, 80)).toBe(200);
      expect(answer.body.code, text.slice(0, 80)).not.toBe(0);
      expect(answer.body.code, text.slice(0, 80)).not.toBe(ENVELOPE_CODES.internal);
      expect(validateSchema('OrderEnvelope', answer.body)).toEqual([]);
    }
  });

  it('leases energy: the balance drops by amount × costPerTx, and a lease beyond it is refused', async () => {
    await control('PUT', '/__control/merchants/10086/energy', { balance: 1000, costPerTx: 100 });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 3, expiryHours: 24 }))).body.code).toBe(0);
    expect((await control('GET', '/__control/merchants/10086/energy')).body).toEqual({ balance: 700, costPerTx: 100 });
    expect((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).result).toContain('"energyMaxCount":7}');
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 8, expiryHours: 24 }))).body).toMatchObject({
      code: ENVELOPE_CODES.insufficientEnergy,
    });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: '7', expiryHours: 24 }))).body.code).toBe(0);
    expect((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).result).toContain('"energyMaxCount":0}');
    await control('PUT', '/__control/merchants/10086/energy', { balance: 20000000, costPerTx: 64000 });
  });
});

describe('card close', () => {
  async function close(body: unknown, contentType = 'application/json') {
    const res = await fetch(`${emulator.cardUrl}/card/close`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Record<string, unknown>;
    expect(validateSchema('CardCloseResponse', json)).toEqual([]);
    return json;
  }
  const request = (fields: Record<string, unknown> = {}) => ({
    merchantId: '10086',
    merchantUserId: 'u-1',
    powerCardId: 'pc-1',
    channel: 'APP',
    closeSerialNo: `s-${Math.random()}`,
    ...fields,
  });

  it('closes an open card once, then refuses it as closed, with a fresh requestId every time', async () => {
    const first = await close(request({ closeSerialNo: 'serial-1' }));
    expect(first).toMatchObject({ success: true, errorCode: '', data: { status: 'CLOSED' } });
    expect((first.data as { bizId: string }).bizId).toMatch(/^biz-/);
    const second = await close(request());
    expect(second).toMatchObject({ success: false, errorCode: 'CARD_ALREADY_CLOSED', data: null });
    expect(second.requestId).not.toBe(first.requestId);
    expect((await close(request({ powerCardId: 'pc-3' }))).errorCode).toBe('CARD_ALREADY_CLOSED');
  });

  it('refuses a repeated closeSerialNo, an unknown card, another holder and an unknown merchant, filling every failure field', async () => {
    expect((await close(request({ powerCardId: 'pc-2', closeSerialNo: 'serial-1' }))).errorCode).toBe(
      'DUPLICATE_SERIAL_NO',
    );
    for (const [fields, code] of [
      [{ powerCardId: 'pc-404' }, 'CARD_NOT_FOUND'],
      [{ powerCardId: 'pc-2', merchantUserId: 'u-2' }, 'CARD_NOT_FOUND'],
      [{ merchantId: '99999' }, 'MERCHANT_NOT_FOUND'],
      [{ merchantId: 10086 }, 'BAD_REQUEST'],
      [{ channel: '' }, 'BAD_REQUEST'],
      [{ closeSerialNo: undefined }, 'BAD_REQUEST'],
    ] as const) {
      const answer = await close(request(fields));
      expect(answer.errorCode, JSON.stringify(fields)).toBe(code);
      for (const field of ['errorMessage', 'errorMessageEn', 'detailMessage', 'requestId'])
        expect((answer[field] as string).length, field).toBeGreaterThan(0);
      expect(answer.success).toBe(false);
    }
    expect((await close('{not json')).errorCode).toBe('BAD_REQUEST');
    expect((await close('[1]')).errorCode).toBe('BAD_REQUEST');
    expect(
      (
        await close(
          '{"merchantId":"10086","merchantUserId":"u-1","powerCardId":1e999,"channel":"APP","closeSerialNo":"n-1"}',
        )
      ).errorCode,
    ).toBe('BAD_REQUEST');
    expect((await close(request({ powerCardId: 'pc-2' }), 'text/plain')).errorCode).toBe('BAD_CONTENT_TYPE');
    expect((await close(request({ powerCardId: 'pc-2' }))).success).toBe(true);
  });

  it('closes cards created through the control API; a sent X-API-KEY must be valid and hold closeCard', async () => {
    expect(
      (await control('POST', '/__control/merchants/10086/cards', { powerCardId: 'pc-new', merchantUserId: 'u-9' }))
        .body,
    ).toEqual({
      powerCardId: 'pc-new',
      merchantUserId: 'u-9',
      status: 'open',
    });
    const keyed = (apiKey: string) =>
      fetch(`${emulator.cardUrl}/card/close`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify(request({ powerCardId: 'pc-new', merchantUserId: 'u-9' })),
      });
    expect((await keyed('unknown')).status).toBe(401);
    expect((await keyed(keys.forbiddenKey!)).status).toBe(403);
    expect((await keyed(oaep.apiKey)).status).toBe(403);
    expect(((await (await keyed(main.apiKey)).json()) as { success: boolean }).success).toBe(true);
  });
});

describe('control API', () => {
  it('answers 401 for a missing or wrong token, 404 for unknown merchants and routes, 400 for invalid bodies', async () => {
    expect(
      (await control('PUT', '/__control/merchants/10086/energy', { balance: 1, costPerTx: 1 }, 'wrong')).status,
    ).toBe(401);
    const noToken = await fetch(`${emulator.url}/__control/deliveries?trackingId=x`);
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toEqual({ error: expect.any(String) });
    expect((await control('PUT', '/__control/merchants/4242/energy', { balance: 1, costPerTx: 1 })).status).toBe(404);
    expect((await control('GET', '/__control/nothing')).status).toBe(404);
    for (const body of [
      { balance: -1, costPerTx: 1 },
      { balance: 1, costPerTx: 0 },
      { balance: 1.5, costPerTx: 1 },
      { balance: 1 },
      { balance: 1, costPerTx: 1, extra: 1 },
      '{bad',
    ]) {
      const answer = await control('PUT', '/__control/merchants/10086/energy', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(validateSchema('ControlError', answer.body)).toEqual([]);
    }
    expect((await control('PUT', '/__control/merchants/10086/callback-url', { url: 'ftp://x' })).status).toBe(400);
    expect((await control('POST', '/__control/merchants/10086/callbacks', { type: 9 })).status).toBe(400);
    expect((await control('POST', '/__control/merchants/20001/callbacks', { type: 1 })).status).toBe(400);
    expect((await control('GET', '/__control/deliveries')).status).toBe(400);
    expect((await control('GET', '/__control/deliveries?trackingId=nope')).body).toEqual({ attempts: [] });
  });
});

describe('slow clients', () => {
  /**
   * Writes `head` on a raw connection, then `trickle` more pieces 40 ms apart (all of them well
   * within the emulator's 300 ms headers deadline, so no byte reaches a closed socket), and resolves
   * with everything the emulator answered before it closed the connection. Rejects when the emulator
   * cannot be reached, so an unreachable emulator fails these tests instead of passing them.
   */
  function rawExchange(head: string, trickle: string[] = []): Promise<string> {
    const { port } = new URL(emulator.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      let connected = false;
      socket.on('connect', () => (connected = true));
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('error', (error) => !connected && reject(error));
      socket.on('close', () => resolve(text));
      socket.write(head);
      const next = (rest: string[]) => {
        if (rest.length === 0) return;
        setTimeout(() => {
          if (text === '' && socket.writable) socket.write(rest[0]!);
          next(rest.slice(1));
        }, 40);
      };
      next(trickle);
    });
  }
  const TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n';

  it('answers HTTP 408 to a client that sends its headers too slowly, then serves the next request', async () => {
    const answer = await rawExchange(`POST ${ENERGY} HTTP/1.1\r\nHost: x\r\n`, ['X-Slow: 1\r\n', 'X-Slow: 2\r\n']);
    expect(answer).toBe(TIMEOUT);
    const next = await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' });
    expect([next.status, next.body.code]).toEqual([200, 0]);
  });

  it('answers HTTP 408 to a client that never finishes its body, then serves the next request', async () => {
    const answer = await rawExchange(
      `POST ${ENERGY} HTTP/1.1\r\nHost: x\r\nContent-Type: ${FORM}\r\nX-API-KEY: ${main.apiKey}\r\nContent-Length: 1000\r\n\r\ndata=AAAA`,
    );
    expect(answer).toBe(TIMEOUT);
    const next = await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' });
    expect([next.status, next.body.code]).toEqual([200, 0]);
  });
});

describe('config', () => {
  it('refuses unknown fields and bad values with one line naming the field', () => {
    const base = {
      control: { token: 't' },
      merchants: [{ userId: 1, apiKey: 'k', privateKey: 'merchant-private.pem', publicKey: 'merchant-public.pem' }],
    };
    const load = (doc: unknown) => () => resolveEmulatorConfig(doc, dir, 'x.yaml');
    expect(load({ ...base, bodyLimitt: 1 })).toThrow(/^x\.yaml: unknown field 'bodyLimitt'/);
    expect(load({ ...base, merchants: [{ ...base.merchants[0], energy: { balanse: 1 } }] })).toThrow(
      /merchants\[0\]\.energy: unknown field 'balanse'/,
    );
    expect(
      load({ ...base, merchants: [{ ...base.merchants[0], apiKeys: [{ key: 'f', permissions: ['fly'] }] }] }),
    ).toThrow(/merchants\[0\]\.apiKeys\[0\]\.permissions\[0\]: must be one of/);
    expect(load({ ...base, merchants: [{ ...base.merchants[0], publicKey: 'oaep-public.b64' }] })).toThrow(
      /is not the public half of/,
    );
    expect(load({ ...base, merchants: [{ ...base.merchants[0], privateKey: 'missing.pem' }] })).toThrow(
      /cannot read private key .*missing\.pem: no such file/,
    );
    expect(load({ ...base, merchants: [{ ...base.merchants[0], profile: { padding: 'oaep' } }] })).toThrow(
      /padding must be one of/,
    );
    expect(load({ ...base, merchants: [base.merchants[0], { ...base.merchants[0], userId: 2 }] })).toThrow(
      /appears twice/,
    );
    expect(load({ ...base, control: {} })).toThrow(/control\.token: must be a non-empty string/);
    expect(load({ ...base, merchants: [{ ...base.merchants[0], apiKeyValidUntil: 'soon' }] })).toThrow(
      /apiKeyValidUntil: must be an ISO 8601/,
    );
    expect(resolveEmulatorConfig(base, dir).merchants[0]!.privateKey).toBe(join(dir, 'merchant-private.pem'));
    expect(() => resolveEmulatorConfig(stringify(base), dir)).toThrow(/expected a mapping/);
  });
});

describe('policies of the open points (emulator.yaml policies:)', () => {
  // The emulator reads its policies on every request, so one emulator serves each reading in turn.
  const use = (policies: Partial<ServicePolicies>) => {
    config.policies = { ...DEFAULT_POLICIES, ...policies };
  };
  const energyMaxCount = async () =>
    /"energyMaxCount":(\d+)/.exec((await call(ENERGY, { symbol: 'ENERGY', chainName: 'TRON' })).result ?? '')?.[1];
  const closeCard = async (fields: Record<string, unknown>) => {
    const res = await fetch(`${emulator.cardUrl}/card/close`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        merchantId: '10086',
        merchantUserId: 'u-1',
        channel: 'APP',
        closeSerialNo: `s-${Math.random()}`,
        ...fields,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  afterAll(async () => {
    use({});
    await control('PUT', '/__control/merchants/10086/energy', { balance: 20000000, costPerTx: 64000 });
  });

  it('refuses bad input with HTTP 4xx and {code, message} under refusals: http; card close keeps its shape', async () => {
    use({ refusals: 'http' });
    const refused = await call(ORDER, order({ tenantType: 2 }));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      code: String(ENVELOPE_CODES.tenantType),
      message: expect.stringContaining('tenantType'),
    });
    const card = await closeCard({ powerCardId: 'pc-none-http' });
    expect(card.status).toBe(404);
    expect(card.body).toMatchObject({ success: false, errorCode: 'CARD_NOT_FOUND' });
    expect(validateSchema('CardCloseResponse', card.body)).toEqual([]);
  });

  it('debits a lease later (after leaseDebitDelayMs) or never, counting pending debits against the balance', async () => {
    await control('PUT', '/__control/merchants/10086/energy', { balance: 650000, costPerTx: 65000 });
    use({ leaseDebit: 'later', leaseDebitDelayMs: 3_600_000 });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 6, expiryHours: 1 }))).body.code).toBe(0);
    expect(await energyMaxCount()).toBe('10');
    // 6 leased and pending: 5 more exceed the 10 the balance holds.
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 5, expiryHours: 1 }))).body.code).toBe(
      ENVELOPE_CODES.insufficientEnergy,
    );
    use({ leaseDebit: 'later', leaseDebitDelayMs: 0 });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 1, expiryHours: 1 }))).body.code).toBe(0);
    expect(await energyMaxCount()).toBe('9');
    use({ leaseDebit: 'never' });
    expect((await call(ORDER, order({ symbol: 'ENERGY', amount: 2, expiryHours: 1 }))).body.code).toBe(0);
    expect(await energyMaxCount()).toBe('9');
  });

  it("answers a repeated callBackId with the first order's result under duplicateCallBackId: replay", async () => {
    use({ duplicateCallBackId: 'replay' });
    const first = await call(ORDER, order({ callBackId: 'cb-replay', tenantUserId: '777' }));
    const again = await call(ORDER, order({ callBackId: 'cb-replay', tenantUserId: '888' }));
    expect([first.body.code, again.body.code]).toEqual([0, 0]);
    expect(again.result).toBe('{"tenantUserId":777,"id":"cb-replay"}');
  });

  it('closes a card never registered once under cardRegistry: off, then refuses it as closed', async () => {
    use({ cardRegistry: 'off' });
    expect((await closeCard({ powerCardId: 'pc-unregistered' })).body).toMatchObject({
      success: true,
      data: { status: 'CLOSED' },
    });
    expect((await closeCard({ powerCardId: 'pc-unregistered' })).body).toMatchObject({
      success: false,
      errorCode: 'CARD_ALREADY_CLOSED',
    });
  });

  it('caps amount digits and picks withdrawal symbols as the policies say', async () => {
    use({ amountIntegerDigits: 12, amountFractionDigits: 6 });
    const atCap = sealJson(
      '{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"cb-at-cap","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":123456789012.123456}',
      'request',
      main.keyPair.publicKey,
      { profile: main.profile },
    );
    expect((await postForm(ORDER, atCap, main.apiKey)).body.code).toBe(0);
    const tooLong = sealJson(
      '{"userId":10086,"tenantUserId":"1","tenantType":1,"callBackId":"cb-digits","symbol":"USDT","chainName":"TRON","toAddr":"T","amount":1234567890123.5}',
      'request',
      main.keyPair.publicKey,
      { profile: main.profile },
    );
    expect((await postForm(ORDER, tooLong, main.apiKey)).body.code).toBe(ENVELOPE_CODES.amount);
    use({ withdrawalSymbols: ['USDT', 'TRX'] });
    expect((await call(ORDER, order({ symbol: 'WCTEST' }))).body.code).toBe(ENVELOPE_CODES.unsupportedSymbol);
    expect((await call(ORDER, order({ symbol: 'TRX' }))).body.code).toBe(0);
    use({ withdrawalSymbols: 'any' });
    expect((await call(ORDER, order({ symbol: 'usdt-trc20' }))).body.code).toBe(0);
  });

  it('reads unpadded and non-canonical data under base64Padding: optional, and refuses them under required', async () => {
    const seal = () =>
      sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', main.keyPair.publicKey, { profile: main.profile });
    // The padding is random: sealed again until the text holds '+' or '/', which the last check
    // swaps (with the emulator's 1024-bit key, about 1 text in 230 holds neither).
    let sealed = seal();
    while (!/[+/]/.test(sealed)) sealed = seal();
    expect(sealed).toMatch(/=$/);
    const unpadded = sealed.replace(/=+$/, '');
    // The last character before the padding carries unused low bits: set one (the same bytes for Java's decoder).
    const body = sealed.replace(/=+$/, '');
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const nonCanonical = body.slice(0, -1) + last[last.indexOf(body.at(-1)!) | 1] + sealed.slice(body.length);
    expect(nonCanonical).not.toBe(sealed);
    use({});
    for (const data of [unpadded, nonCanonical])
      expect((await postForm(ENERGY, data, main.apiKey)).body.code).toBe(ENVELOPE_CODES.badBase64);
    use({ base64Padding: 'optional' });
    for (const data of [unpadded, nonCanonical, sealed])
      expect((await postForm(ENERGY, data, main.apiKey)).body.code).toBe(0);
    // Still refused: what the pattern itself refuses.
    expect((await postForm(ENERGY, sealed.replaceAll('+', '-').replaceAll('/', '_'), main.apiKey)).body.code).toBe(
      ENVELOPE_CODES.badBase64,
    );
  });

  it('binds "10086" to userId and 20931 to tenantUserId under typeCoercion: on, and refuses them under off', async () => {
    const coercible = { userId: '10086', tenantType: '1', tenantUserId: 20931 };
    use({});
    for (const [field, value] of Object.entries(coercible))
      expect((await call(ORDER, order({ [field]: value }))).body.code, field).not.toBe(0);
    use({ typeCoercion: 'on' });
    const accepted = await call(ORDER, order({ ...coercible, callBackId: 'cb-coerced' }));
    expect(accepted.body.code).toBe(0);
    expect(accepted.result).toBe('{"tenantUserId":20931,"id":"cb-coerced"}');
    expect((await call(ORDER, order({ userId: '10086.5' }))).body.code).toBe(ENVELOPE_CODES.invalidRequest);
  });
});
