// The generated MSW handlers (wallet-conformance/msw) against hand-built requests: plain fetch,
// forms and ciphertexts written here byte for byte, so every quirk of the wire is under test.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { SpecError } from '../src/core/errors.js';
import { LosslessNumber, stringifyExact, type ExactJson } from '../src/core/exact-json.js';
import { DEFAULT_PROFILE, resolveProfile, type CryptoProfile } from '../src/core/profile.js';
import { validateSchema, type SchemaName } from '../src/core/schemas.js';
import { openJson, sealBytes, sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaKey } from '../src/crypto/keys.js';
import { CARD_ERROR_CODES, ENVELOPE_CODES } from '../src/service/codes.js';
import { generateMswHandlers, mswEndpointTable } from '../src/generate/codegen/msw-handlers.js';
import { parseSpec, type SpecSource } from '../src/spec/document.js';
import {
  createWalletHandlers,
  createWalletMock,
  WALLET_ENDPOINTS,
  WALLET_SCENARIOS,
  type WalletCall,
  type WalletHandlersOptions,
  type WalletScenario,
} from '../src/generated/msw-handlers.js';

const ROOT = resolve(import.meta.dirname, '..');
const BASE = 'http://wallet.test';
const CARD_BASE = 'http://card.test/svc';
const ENERGY_URL = `${BASE}/api/v1/api/order/getEnergyMaxCount`;
const ORDER_URL = `${BASE}/api/v1/api/order/withdrawWithoutVerify`;
const CARD_URL = `${CARD_BASE}/card/close`;
const FORM = 'application/x-www-form-urlencoded';
const ERR_401 = '{"code":"UNAUTHORIZED","message":"unauthorized"}';
const ERR_403 = '{"code":"FORBIDDEN","message":"forbidden"}';
const ERR_404 = '{"code":"NOT FOUND","message":"not found"}';

const keys = generateMerchantKeyPair(1024);
const publicKey = parseKey(keys.publicPem, { expect: 'public' });
const privateKey = parseKey(keys.privatePem, { expect: 'private' });
const otherKeys = generateMerchantKeyPair(1024);
const otherPublicKey = parseKey(otherKeys.publicPem, { expect: 'public' });

const calls: WalletCall[] = [];
const wallet: WalletHandlersOptions = {
  baseUrl: BASE,
  cardBaseUrl: CARD_BASE,
  merchants: [
    {
      userId: 10086,
      apiKey: 'ak_live',
      privateKey: keys.privatePem,
      energy: { balance: 20_000_000n, costPerTx: 64_000n },
    },
    { userId: 10087, apiKey: 'ak_energy_only', privateKey: keys.privateBase64, permissions: ['getEnergyMaxCount'] },
  ],
  onCall: (call) => calls.push(call),
};
const server = setupServer(...createWalletHandlers(wallet));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  // Fresh handlers, so a fresh service state (callBackIds, energy, closed cards) per test.
  server.resetHandlers(...createWalletHandlers(wallet));
  calls.length = 0;
});
afterAll(() => server.close());

/** Swaps in handlers built from other options for the rest of the test. */
function useWallet(options: Partial<WalletHandlersOptions>): void {
  server.resetHandlers(...createWalletHandlers({ ...wallet, ...options }));
}

interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

async function post(
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': FORM, 'x-api-key': 'ak_live' },
  method = 'POST',
): Promise<Answer> {
  const response = await fetch(url, { method, headers, ...(method === 'GET' ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** Base64 of the plain request encrypted the way a merchant does: under its public key by default. */
function seal(plain: unknown, profile: CryptoProfile = DEFAULT_PROFILE, key: RsaKey = publicKey): string {
  return sealJson(plain, 'request', key, { profile });
}

/** The form body a careful client sends: `data=` with the Base64 percent-encoded. */
const form = (data: string): string => `data=${encodeURIComponent(data)}`;

const energyRequest = { symbol: 'ENERGY', chainName: 'TRON' };
const order = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  userId: 10086,
  tenantUserId: '20931',
  tenantType: 1,
  callBackId: 'wd-0001',
  symbol: 'USDT',
  chainName: 'TRON',
  toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  amount: new LosslessNumber('10.5'),
  ...fields,
});
const lease = (fields: Record<string, unknown> = {}) =>
  order({ symbol: 'ENERGY', amount: new LosslessNumber('12'), expiryHours: 24, callBackId: 'el-0001', ...fields });
const cardRequest = (fields: Record<string, unknown> = {}) => ({
  merchantId: '10086',
  merchantUserId: 'u-1',
  powerCardId: 'pc-1',
  channel: 'APP',
  closeSerialNo: 'cs-0001',
  ...fields,
});

const energyCall = (plain: unknown = energyRequest, profile?: CryptoProfile) =>
  post(ENERGY_URL, form(seal(plain, profile)));
const orderCall = (plain: unknown = order(), profile?: CryptoProfile) => post(ORDER_URL, form(seal(plain, profile)));
const cardCall = (plain: unknown = cardRequest()) =>
  post(CARD_URL, JSON.stringify(plain), { 'content-type': 'application/json' });

/** Checks a success envelope against the spec and returns the decrypted result, numbers exact. */
function openResult(
  answer: Answer,
  envelope: SchemaName,
  result: SchemaName,
  profile: CryptoProfile = DEFAULT_PROFILE,
): { text: string; value: Record<string, ExactJson> } {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json.code, answer.text).toBe(0);
  expect(answer.json.message).toBe('');
  expect(validateSchema(envelope, answer.json)).toEqual([]);
  const opened = openJson(answer.json.data as string, 'response', publicKey, { profile });
  expect(validateSchema(result, opened.value)).toEqual([]);
  return { text: opened.text, value: opened.value as Record<string, ExactJson> };
}

/** Rule ids a message names: `... [ORDER-TENANT-TYPE, ORDER-FIELDS]`. */
const rulesIn = (message: unknown): string[] =>
  [...String(message).matchAll(/\[([A-Z0-9, -]+)\]/g)].flatMap((match) => match[1]!.split(', '));

/** A failure envelope (never code 0, no result) with the expected code and the rule it names. */
function expectFailure(answer: Answer, code: number | readonly number[], rule?: string): void {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json.code, answer.text).not.toBe(0);
  expect(typeof code === 'number' ? [code] : code, answer.text).toContain(answer.json.code);
  expect(answer.json).not.toHaveProperty('data');
  expect(typeof answer.json.message === 'string' && answer.json.message.length > 0).toBe(true);
  if (rule) expect(rulesIn(answer.json.message), String(answer.json.message)).toContain(rule);
}

/** A card close failure (CARD-ERR) with every error field filled. */
function expectCardFailure(answer: Answer, errorCode: string, rule?: string): void {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json).toMatchObject({ success: false, errorCode });
  for (const field of ['errorMessage', 'errorMessageEn', 'detailMessage', 'requestId'])
    expect(answer.json[field]).toEqual(expect.any(String));
  if (rule) expect(rulesIn(answer.json.detailMessage), String(answer.json.detailMessage)).toContain(rule);
}

/** A Base64 ciphertext of the plain request that contains `char` (padding is random, so retry). */
function sealWith(char: string, plain: unknown = energyRequest): string {
  for (let attempt = 0; attempt < 200; attempt++) {
    const data = seal(plain);
    if (data.includes(char)) return data;
  }
  throw new Error(`no ciphertext with ${char} in 200 attempts`);
}

describe('successful calls of every endpoint', () => {
  it('answers getEnergyMaxCount with an envelope whose decrypted data is floor(balance / costPerTx)', async () => {
    const result = openResult(await energyCall(), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
    expect(result.text).toBe('{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}');
  });

  it('confirms an ordinary withdrawal with tenantUserId as an integer and id = callBackId', async () => {
    const result = openResult(await orderCall(), 'OrderEnvelope', 'OrderResult');
    expect(result.text).toBe('{"tenantUserId":20931,"id":"wd-0001"}');
    expect(calls.at(-1)).toMatchObject({ operationId: 'withdrawWithoutVerify', status: 200, userId: '10086' });
  });

  it('confirms an ENERGY lease and spends its energy, so the next query counts fewer transactions', async () => {
    const result = openResult(await orderCall(lease()), 'OrderEnvelope', 'OrderResult');
    expect(result.value.id).toBe('el-0001');
    const after = openResult(await energyCall(), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
    expect(String(after.value.energyMaxCount)).toBe('300');
  });

  it('closes a card on cardBaseUrl with a plain JSON answer in the card close shape', async () => {
    const answer = await cardCall();
    expect(answer.status).toBe(200);
    expect(validateSchema('CardCloseResponse', answer.json)).toEqual([]);
    expect(answer.json).toMatchObject({ success: true, errorCode: '', data: { status: 'CLOSED' } });
    expectCardFailure(await cardCall(cardRequest({ closeSerialNo: 'cs-0002' })), CARD_ERROR_CODES.alreadyClosed);
    expectCardFailure(await cardCall(cardRequest({ powerCardId: 'pc-2' })), CARD_ERROR_CODES.duplicateSerialNo);
  });
});

describe('HTTP errors of the interface', () => {
  it.each([
    ['an unknown X-API-KEY', { 'content-type': FORM, 'x-api-key': 'ak_wrong' }],
    ['no X-API-KEY', { 'content-type': FORM }],
    ['an empty X-API-KEY', { 'content-type': FORM, 'x-api-key': '' }],
  ])('answers 401 with the exact body of ERR-401 for %s', async (_, headers) => {
    for (const url of [ENERGY_URL, ORDER_URL]) {
      const answer = await post(url, form(seal(url === ENERGY_URL ? energyRequest : order())), headers);
      expect([answer.status, answer.text]).toEqual([401, ERR_401]);
    }
  });

  it('answers 401 before looking at the body, so an unknown key with garbage still gets ERR-401', async () => {
    const answer = await post(ENERGY_URL, 'nonsense', { 'content-type': 'text/plain', 'x-api-key': 'ak_wrong' });
    expect([answer.status, answer.text]).toEqual([401, ERR_401]);
  });

  it('answers 403 with the exact body of ERR-403 when the key lacks the permission', async () => {
    const answer = await post(ORDER_URL, form(seal(order({ userId: 10087 }))), {
      'content-type': FORM,
      'x-api-key': 'ak_energy_only',
    });
    expect([answer.status, answer.text]).toEqual([403, ERR_403]);
    const allowed = await post(ENERGY_URL, form(seal(energyRequest)), {
      'content-type': FORM,
      'x-api-key': 'ak_energy_only',
    });
    openResult(allowed, 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
  });

  it.each([
    ['an unknown path under baseUrl', `${BASE}/api/v1/api/order/unknown`, 'POST'],
    ['a v2 path under baseUrl', `${BASE}/api/v2/api/order/getEnergyMaxCount`, 'POST'],
    ['baseUrl itself', BASE, 'POST'],
    ['GET on an order endpoint', ENERGY_URL, 'GET'],
    ['an unknown path under cardBaseUrl', `${CARD_BASE}/card/open`, 'POST'],
    ['card close under baseUrl instead of cardBaseUrl', `${BASE}/card/close`, 'POST'],
  ])('answers 404 with the exact body of ERR-404 for %s', async (_, url, method) => {
    const answer = await post(url, form(seal(energyRequest)), { 'content-type': FORM, 'x-api-key': 'ak_live' }, method);
    expect([answer.status, answer.text]).toEqual([404, ERR_404]);
  });
});

describe('requests broken on the wire fail naming the rule, never code 0', () => {
  it('refuses a wrong Content-Type on each endpoint', async () => {
    const json = { 'content-type': 'application/json', 'x-api-key': 'ak_live' };
    expectFailure(await post(ENERGY_URL, form(seal(energyRequest)), json), ENVELOPE_CODES.badContentType, 'ENERGY-CT');
    expectFailure(await post(ORDER_URL, form(seal(order())), json), ENVELOPE_CODES.badContentType, 'ORDER-CT');
    expectFailure(
      await post(ORDER_URL, form(seal(order())), { 'x-api-key': 'ak_live' }),
      ENVELOPE_CODES.badContentType,
      'ORDER-CT',
    );
    const card = await post(CARD_URL, JSON.stringify(cardRequest()), { 'content-type': FORM });
    expectCardFailure(card, CARD_ERROR_CODES.badContentType, 'CARD-PATH');
  });

  it('accepts a charset parameter on the form Content-Type', async () => {
    const answer = await post(ENERGY_URL, form(seal(energyRequest)), {
      'content-type': `${FORM}; charset=UTF-8`,
      'x-api-key': 'ak_live',
    });
    openResult(answer, 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
  });

  it.each([
    ['no body at all', ''],
    ['another field but no data', 'payload=abc'],
    ['an empty data', 'data='],
    ['data twice', `${form(seal(energyRequest))}&${form(seal(energyRequest))}`],
  ])('refuses %s', async (_, body) => {
    expectFailure(await post(ENERGY_URL, body), ENVELOPE_CODES.missingData, 'ENERGY-DATA');
    expectFailure(await post(ORDER_URL, body), ENVELOPE_CODES.missingData, 'ORDER-DATA');
  });

  it('refuses URL-safe Base64', async () => {
    const data = sealWith('+');
    const urlSafe = data.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
    const answer = await post(ENERGY_URL, form(urlSafe));
    expectFailure(answer, ENVELOPE_CODES.badBase64, 'ENERGY-DATA');
    expect(answer.json.message).toContain('url-safe-alphabet');
  });

  it("refuses a '+' sent unencoded, which arrives as a space, and says so", async () => {
    const answer = await post(ENERGY_URL, `data=${sealWith('+')}`);
    expectFailure(answer, ENVELOPE_CODES.badBase64, 'ENERGY-DATA');
    expect(answer.json.message).toContain('plus-as-space');
  });

  it('accepts the same Base64 when every character is percent-encoded', async () => {
    openResult(await post(ENERGY_URL, form(sealWith('+'))), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
  });

  it('refuses MIME-style line breaks in data', async () => {
    const wrapped = seal(order()).replace(/(.{76})/g, '$1\r\n');
    const answer = await post(ORDER_URL, form(wrapped));
    expectFailure(answer, ENVELOPE_CODES.badBase64, 'ORDER-DATA');
    expect(answer.json.message).toContain('line-breaks');
  });

  it('refuses a ciphertext under another key pair', async () => {
    const answer = await post(ENERGY_URL, form(seal(energyRequest, DEFAULT_PROFILE, otherPublicKey)));
    expectFailure(answer, ENVELOPE_CODES.cannotDecrypt, 'ENERGY-DATA');
  });

  it('refuses a ciphertext of a padding the profile does not use', async () => {
    const answer = await post(ENERGY_URL, form(seal(energyRequest, resolveProfile({ padding: 'oaep-sha1' }))));
    // An OAEP block has random bytes where PKCS#1 v1.5 wants 0x02 and a separator: about once in a
    // thousand it unpads by chance, and the bytes that come out are then not UTF-8 (40005).
    expectFailure(answer, [ENVELOPE_CODES.cannotDecrypt, ENVELOPE_CODES.badJson], 'ENERGY-DATA');
    if (answer.json.code === ENVELOPE_CODES.badJson) expect(String(answer.json.message)).toContain('[not-utf8]');
  });

  it.each([
    ['plain text that is not JSON', 'symbol=ENERGY&chainName=TRON'],
    ['JSON that is not an object', '["ENERGY","TRON"]'],
    ['JSON with trailing garbage', '{"symbol":"ENERGY","chainName":"TRON"}}'],
  ])('refuses a decrypted %s', async (_, text) => {
    expectFailure(await post(ENERGY_URL, form(seal(text))), ENVELOPE_CODES.badJson, 'ENERGY-DATA');
  });

  it('refuses decrypted bytes that are not UTF-8', async () => {
    const data = sealBytes(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 'request', publicKey);
    expectFailure(await post(ORDER_URL, form(data)), ENVELOPE_CODES.badJson, 'ORDER-DATA');
  });
});

describe('invalid plain requests fail naming the rule, never code 0', () => {
  const ORDER_CASES: Array<[string, Record<string, unknown>, keyof typeof ENVELOPE_CODES, string]> = [
    ['tenantType 2', order({ tenantType: 2 }), 'tenantType', 'ORDER-TENANT-TYPE'],
    ['tenantType "1" as a string', order({ tenantType: '1' }), 'tenantType', 'ORDER-TENANT-TYPE'],
    ['an ENERGY order without expiryHours', lease({ expiryHours: undefined }), 'expiryHours', 'ORDER-EXPIRY'],
    [
      'an ENERGY order with fractional expiryHours',
      lease({ expiryHours: new LosslessNumber('1.5') }),
      'expiryHours',
      'ORDER-EXPIRY',
    ],
    ['an ENERGY order with expiryHours 0', lease({ expiryHours: 0 }), 'expiryHours', 'ORDER-EXPIRY'],
    [
      'an ENERGY order with a fractional amount',
      lease({ amount: new LosslessNumber('12.5') }),
      'energyAmount',
      'ORDER-ENERGY-AMOUNT',
    ],
    ['an ENERGY order with amount 0', lease({ amount: 0 }), 'energyAmount', 'ORDER-ENERGY-AMOUNT'],
    ['no userId', order({ userId: undefined }), 'invalidRequest', 'ORDER-FIELDS'],
    ['userId as a string', order({ userId: '10086' }), 'invalidRequest', 'ORDER-FIELDS'],
    ['tenantUserId as a number', order({ tenantUserId: 20931 }), 'invalidRequest', 'ORDER-FIELDS'],
    ['an empty callBackId', order({ callBackId: '' }), 'invalidRequest', 'ORDER-CALLBACK-ID'],
    ['no toAddr', order({ toAddr: undefined }), 'invalidRequest', 'ORDER-FIELDS'],
    ['an amount that is not a number', order({ amount: 'ten' }), 'invalidRequest', 'ORDER-FIELDS'],
    ['a symbol that is no currency and not ENERGY', order({ symbol: 'usd t' }), 'unsupportedSymbol', 'ORDER-KIND'],
  ];

  it.each(ORDER_CASES)('withdrawWithoutVerify refuses %s', async (_, plain, failure, rule) => {
    const answer = await orderCall(plain);
    expectFailure(answer, ENVELOPE_CODES[failure], rule);
    // The refusal was made on the decrypted text exactly as sent.
    expect(calls.at(-1)?.plainText).toBe(stringifyExact(plain));
  });

  it("names a field broken twice (by its property and by the ENERGY branch) once, in the service's words (src/service/request-wording.ts)", async () => {
    const answer = await orderCall(lease({ expiryHours: '24' }));
    expectFailure(answer, ENVELOPE_CODES.expiryHours, 'ORDER-EXPIRY');
    expect(answer.json.message).toBe('expiryHours must be integer [ORDER-EXPIRY]');
  });

  it('withdrawWithoutVerify refuses a callBackId used before [ORDER-CALLBACK-ID]', async () => {
    openResult(await orderCall(), 'OrderEnvelope', 'OrderResult');
    expectFailure(
      await orderCall(order({ amount: new LosslessNumber('1') })),
      ENVELOPE_CODES.duplicateCallBackId,
      'ORDER-CALLBACK-ID',
    );
  });

  it.each([
    ['no chainName', { symbol: 'ENERGY' }],
    ['no symbol', { chainName: 'TRON' }],
    ['symbol as a number', { symbol: 1, chainName: 'TRON' }],
    ['an empty object', {}],
  ])('getEnergyMaxCount refuses %s [ENERGY-REQ]', async (_, plain) => {
    expectFailure(await energyCall(plain), ENVELOPE_CODES.invalidRequest, 'ENERGY-REQ');
  });

  it.each([
    ['a missing closeSerialNo', cardRequest({ closeSerialNo: undefined })],
    ['an empty powerCardId', cardRequest({ powerCardId: '' })],
    ['merchantId as a number', cardRequest({ merchantId: 10086 })],
  ])('closeCard refuses %s [CARD-REQ]', async (_, plain) => {
    expectCardFailure(await cardCall(plain), CARD_ERROR_CODES.badRequest, 'CARD-REQ');
  });

  it('closeCard refuses a body that is not JSON [CARD-REQ]', async () => {
    const answer = await post(CARD_URL, 'merchantId=10086', { 'content-type': 'application/json' });
    expectCardFailure(answer, CARD_ERROR_CODES.badRequest, 'CARD-REQ');
  });
});

/** What each scenario answers per operation: an HTTP status, an envelope code, a card errorCode, or success. */
type Expected = { http: number } | { code: number } | { errorCode: string } | 'success';
const ok = 'success' as const;
const SCENARIO_EXPECTATIONS: Record<
  WalletScenario,
  Record<'getEnergyMaxCount' | 'withdrawWithoutVerify' | 'closeCard', Expected>
> = {
  success: { getEnergyMaxCount: ok, withdrawWithoutVerify: ok, closeCard: ok },
  // Card close has no X-API-KEY (U-CARD-AUTH), so key scenarios leave it alone.
  unauthorized: { getEnergyMaxCount: { http: 401 }, withdrawWithoutVerify: { http: 401 }, closeCard: ok },
  forbidden: { getEnergyMaxCount: { http: 403 }, withdrawWithoutVerify: { http: 403 }, closeCard: ok },
  'not-found': { getEnergyMaxCount: { http: 404 }, withdrawWithoutVerify: { http: 404 }, closeCard: { http: 404 } },
  'unsupported-resource': {
    getEnergyMaxCount: { code: ENVELOPE_CODES.unsupportedResource },
    withdrawWithoutVerify: ok,
    closeCard: ok,
  },
  'user-id-mismatch': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: { code: ENVELOPE_CODES.userIdMismatch },
    closeCard: ok,
  },
  'duplicate-callback-id': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: { code: ENVELOPE_CODES.duplicateCallBackId },
    closeCard: ok,
  },
  'insufficient-energy': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: { code: ENVELOPE_CODES.insufficientEnergy },
    closeCard: ok,
  },
  'unsupported-symbol': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: { code: ENVELOPE_CODES.unsupportedSymbol },
    closeCard: ok,
  },
  'merchant-not-found': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: ok,
    closeCard: { errorCode: CARD_ERROR_CODES.merchantNotFound },
  },
  'card-not-found': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: ok,
    closeCard: { errorCode: CARD_ERROR_CODES.cardNotFound },
  },
  'card-already-closed': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: ok,
    closeCard: { errorCode: CARD_ERROR_CODES.alreadyClosed },
  },
  'duplicate-serial-no': {
    getEnergyMaxCount: ok,
    withdrawWithoutVerify: ok,
    closeCard: { errorCode: CARD_ERROR_CODES.duplicateSerialNo },
  },
  'internal-error': {
    getEnergyMaxCount: { code: ENVELOPE_CODES.internal },
    withdrawWithoutVerify: { code: ENVELOPE_CODES.internal },
    closeCard: { errorCode: CARD_ERROR_CODES.internal },
  },
};

describe('scenarios', () => {
  it('has an expectation for every scenario and every endpoint of the spec', () => {
    expect(Object.keys(SCENARIO_EXPECTATIONS).sort()).toEqual([...WALLET_SCENARIOS].sort());
    for (const expectations of Object.values(SCENARIO_EXPECTATIONS)) {
      expect(Object.keys(expectations).sort()).toEqual(WALLET_ENDPOINTS.map((endpoint) => endpoint.operationId).sort());
    }
  });

  // Iterates WALLET_SCENARIOS itself: a new scenario without an expectation above fails here.
  it.each(WALLET_SCENARIOS.map((scenario) => [scenario]))(
    'scenario %s answers each valid request as expected',
    async (scenario) => {
      useWallet({ scenario });
      const expectations = SCENARIO_EXPECTATIONS[scenario];
      expect(Object.keys(expectations ?? {}).sort(), `expectations of scenario ${scenario}`).toEqual(
        WALLET_ENDPOINTS.map((endpoint) => endpoint.operationId).sort(),
      );
      if (scenario !== 'success')
        expect(
          Object.values(expectations).some((expected) => expected !== ok),
          `${scenario} changes nothing`,
        ).toBe(true);
      const answers = {
        getEnergyMaxCount: await energyCall(),
        withdrawWithoutVerify: await orderCall(lease()),
        closeCard: await cardCall(),
      };
      for (const [operationId, answer] of Object.entries(answers) as Array<[keyof typeof answers, Answer]>) {
        const expected = expectations[operationId];
        if (expected === ok) {
          if (operationId === 'closeCard')
            expect(answer.json, `${scenario} ${operationId}`).toMatchObject({ success: true });
          else
            openResult(
              answer,
              operationId === 'getEnergyMaxCount' ? 'EnergyMaxCountEnvelope' : 'OrderEnvelope',
              operationId === 'getEnergyMaxCount' ? 'EnergyMaxCountResult' : 'OrderResult',
            );
        } else if ('http' in expected) {
          expect([answer.status, answer.text]).toEqual([
            expected.http,
            { 401: ERR_401, 403: ERR_403, 404: ERR_404 }[expected.http],
          ]);
        } else if ('code' in expected) {
          expectFailure(answer, expected.code);
        } else {
          expectCardFailure(answer, expected.errorCode);
        }
        expect(calls.find((call) => call.operationId === operationId)?.scenario).toBe(scenario);
      }
    },
  );

  it('refuses an unknown scenario when the handlers are created', () => {
    expect(() => createWalletHandlers({ ...wallet, scenario: 'no-such' as WalletScenario })).toThrow(
      /unknown scenario "no-such"/,
    );
  });
});

describe('crypto profiles', () => {
  it.each([
    ['OAEP-SHA256', { padding: 'oaep-sha256' }],
    ['OAEP-SHA1 with responses under the public key', { padding: 'oaep-sha1', response: 'public' }],
    [
      'PKCS#1 with requests under the private key and responses under the public key',
      { request: 'private', response: 'public' },
    ],
    ['PKCS#1 with 16-byte plaintext blocks', { plaintextBlock: 16 }],
  ] as const)('round-trips both order endpoints with %s', async (_, partial) => {
    const profile = resolveProfile(partial);
    useWallet({ profile });
    const requestKey: RsaKey = profile.request === 'public' ? publicKey : privateKey;
    const responseKey: RsaKey = profile.response === 'public' ? privateKey : publicKey;
    const sealed = (plain: unknown) => form(sealJson(plain, 'request', requestKey, { profile }));
    for (const [url, plain, text] of [
      [ENERGY_URL, energyRequest, '{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}'],
      [ORDER_URL, order(), '{"tenantUserId":20931,"id":"wd-0001"}'],
    ] as const) {
      const answer = await post(url, sealed(plain));
      expect(answer.json.code, answer.text).toBe(0);
      expect(openJson(answer.json.data as string, 'response', responseKey, { profile }).text).toBe(text);
    }
    // The default profile's ciphertext does not open under this one.
    if (profile.padding !== 'pkcs1') expectFailure(await energyCall(), ENVELOPE_CODES.cannotDecrypt, 'ENERGY-DATA');
  });

  it("lets one merchant's profile override the handlers' profile", async () => {
    const oaep = resolveProfile({ padding: 'oaep-sha256' });
    useWallet({ merchants: [{ ...wallet.merchants[0]!, profile: { padding: 'oaep-sha256' } }] });
    openResult(await energyCall(energyRequest, oaep), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult', oaep);
    expectFailure(await energyCall(), ENVELOPE_CODES.cannotDecrypt, 'ENERGY-DATA');
  });

  it('refuses a bad profile when the handlers are created', () => {
    expect(() => createWalletHandlers({ ...wallet, profile: { padding: 'oaep-md5' as 'pkcs1' } })).toThrow(
      /padding must be one of/,
    );
  });
});

describe('exact numbers', () => {
  it('keeps every digit of an amount a float would round', async () => {
    const amount = '12345678901234567890.123456789012345678';
    openResult(await orderCall(order({ amount: new LosslessNumber(amount) })), 'OrderEnvelope', 'OrderResult');
    expect(calls.at(-1)?.plainText).toContain(`"amount":${amount}`);
  });

  it('accepts an amount sent as a decimal string and keeps its text', async () => {
    openResult(await orderCall(order({ amount: '0.100000000000000000' })), 'OrderEnvelope', 'OrderResult');
    expect(calls.at(-1)?.plainText).toContain('"amount":"0.100000000000000000"');
  });

  it('echoes a tenantUserId at the Java long maximum digit for digit', async () => {
    const result = openResult(
      await orderCall(order({ tenantUserId: '9223372036854775807' })),
      'OrderEnvelope',
      'OrderResult',
    );
    expect(result.text).toBe('{"tenantUserId":9223372036854775807,"id":"wd-0001"}');
  });

  it('computes energyMaxCount beyond 2^53 exactly', async () => {
    useWallet({ merchants: [{ ...wallet.merchants[0]!, energy: { balance: 10n ** 30n, costPerTx: 7n } }] });
    const result = openResult(await energyCall(), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
    expect(result.text).toBe('{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":142857142857142857142857142857}');
  });

  it('refuses a lease that costs more energy than the merchant has, without spending any', async () => {
    expectFailure(await orderCall(lease({ amount: new LosslessNumber('313') })), ENVELOPE_CODES.insufficientEnergy);
    const result = openResult(await energyCall(), 'EnergyMaxCountEnvelope', 'EnergyMaxCountResult');
    expect(String(result.value.energyMaxCount)).toBe('312');
  });
});

describe('the generator', () => {
  const specText = readFileSync(resolve(ROOT, 'spec/wallet-api.yaml'), 'utf8');
  const spec = parseSpec(specText);
  type Node = Record<string, unknown>;
  /** The object at `path` inside a spec document. */
  const at = (node: unknown, ...path: string[]): Node =>
    path.reduce<unknown>((current, key) => (current as Node)[key], node) as Node;
  /** The spec with its document changed by `edit` (on a deep copy), loaded again from its YAML text as any spec is. */
  const edited = (edit: (document: Node) => unknown): SpecSource => {
    const document = structuredClone(spec.document) as unknown as Node;
    edit(document);
    return parseSpec(stringifyYaml(document));
  };
  const contentsOf = (source: SpecSource): string => generateMswHandlers(source)[0]!.contents;

  it('generates exactly the committed src/generated/msw-handlers.ts from the spec', () => {
    const [file] = generateMswHandlers(spec);
    expect(file!.path).toBe('src/generated/msw-handlers.ts');
    expect(file!.contents).toBe(readFileSync(resolve(ROOT, file!.path), 'utf8'));
  });

  it('follows a changed path into the generated table and the handlers', async () => {
    const moved = edited((document) => {
      const paths = at(document, 'paths');
      paths['/api/v2/api/order/getEnergyMaxCount'] = paths['/api/v1/api/order/getEnergyMaxCount'];
      delete paths['/api/v1/api/order/getEnergyMaxCount'];
    });
    const contents = contentsOf(moved);
    expect(contents).not.toBe(contentsOf(spec));
    expect(contents).toContain('"path": "/api/v2/api/order/getEnergyMaxCount"');
    expect(contents).not.toContain('/api/v1/api/order/getEnergyMaxCount');
    // The runtime serves the moved path from the new table.
    const mock = createWalletMock(mswEndpointTable(moved) as unknown as typeof WALLET_ENDPOINTS, {
      ...wallet,
      onCall: undefined,
    });
    expect(mock.url('getEnergyMaxCount')).toBe(`${BASE}/api/v2/api/order/getEnergyMaxCount`);
    const request = new Request(mock.url('getEnergyMaxCount'), {
      method: 'POST',
      headers: { 'content-type': FORM, 'x-api-key': 'ak_live' },
      body: form(seal(energyRequest)),
    });
    const response = await mock.serve('getEnergyMaxCount', request);
    expect((await response.json()) as unknown).toMatchObject({ code: 0 });
  });

  it('adds a handler for an extra endpoint of the spec', () => {
    const extra = edited((document) => {
      const paths = at(document, 'paths');
      const item = structuredClone(paths['/api/v1/api/order/getEnergyMaxCount']);
      at(item, 'post').operationId = 'getBandwidthMaxCount';
      paths['/api/v1/api/order/getBandwidthMaxCount'] = item;
    });
    const contents = contentsOf(extra);
    expect(contents).toContain(
      'http.post(mock.url("getBandwidthMaxCount"), ({ request }) => mock.serve("getBandwidthMaxCount", request)),',
    );
    expect(contents).toContain('"path": "/api/v1/api/order/getBandwidthMaxCount"');
    expect(contentsOf(spec)).not.toContain('getBandwidthMaxCount');
  });

  it('names the spec hash in the header', () => {
    const other = parseSpec(`${specText}\n# changed\n`);
    expect(contentsOf(other)).toContain(other.sha256);
    expect(contentsOf(other)).not.toContain(spec.sha256);
  });

  it.each([
    [
      'an operation without operationId',
      (d: Node) => delete at(d, 'paths', '/card/close', 'post').operationId,
      /POST \/card\/close: no operationId/,
    ],
    [
      'an encrypted field without a pattern',
      (d: Node) => delete at(d, 'components', 'schemas', 'Base64Ciphertext').pattern,
      /the encrypted field data has no pattern/,
    ],
    [
      'a server URL that is not one variable',
      (d: Node) => (at(d, 'paths', '/card/close', 'servers', '0').url = 'http://card.test'),
      /the server URL must be one variable/,
    ],
    [
      'a 200 response without JSON content',
      (d: Node) => delete at(d, 'paths', '/card/close', 'post', 'responses', '200').content,
      /200: no application\/json content/,
    ],
    [
      'a $ref that points nowhere',
      (d: Node) =>
        (at(d, 'paths', '/card/close', 'post', 'requestBody', 'content', 'application/json', 'schema').$ref =
          '#/components/schemas/Nope'),
      /points nowhere/,
    ],
  ])('fails with a clear SpecError for %s', (_, edit, message) => {
    const broken = edited(edit);
    let error: unknown;
    try {
      generateMswHandlers(broken);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).message).toMatch(message);
    expect((error as SpecError).message).toContain('spec/wallet-api.yaml');
    expect((error as SpecError).message).toContain('needed by the MSW handlers');
  });
});
