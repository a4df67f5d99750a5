// Unit tests of the MSW runtime without msw itself: createWalletMock's options, its 404s and its
// scenarios, over the generated endpoint table and the service pipeline (src/service/pipeline.ts).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import { openJson, sealJson } from '../crypto/codec.js';
import { parseKey } from '../crypto/keys.js';
import { WALLET_ENDPOINTS, type WalletOperationId } from '../generated/msw-handlers.js';
import { CARD_ERROR_CODES, ENVELOPE_CODES } from '../service/codes.js';
import { WALLET_SCENARIOS, type WalletScenario } from './scenarios.js';
import type { WalletCall, WalletMockOptions } from './types.js';
import { createWalletMock } from './wallet-mock.js';

const KEYS = fileURLToPath(new URL('../../test/vectors/keys/', import.meta.url));
const privatePem = readFileSync(`${KEYS}rsa1024-private.pem`, 'utf8');
const publicKey = parseKey(readFileSync(`${KEYS}rsa1024-public.pem`, 'utf8'), { expect: 'public' });
const BASE = 'http://wallet.test';

const options = (more: Partial<WalletMockOptions<WalletOperationId>> = {}): WalletMockOptions<WalletOperationId> => ({
  baseUrl: BASE,
  merchants: [{ userId: 10086, apiKey: 'ak_live', privateKey: privatePem }],
  ...more,
});

const form = (plain: unknown) => `data=${encodeURIComponent(sealJson(plain, 'request', publicKey))}`;
const post = (url: string, body: string, headers: Record<string, string>) =>
  new Request(url, { method: 'POST', body, headers });
const energyRequest = (key = 'ak_live') =>
  post(`${BASE}/api/v1/api/order/getEnergyMaxCount`, form({ symbol: 'ENERGY', chainName: 'TRON' }), {
    'x-api-key': key,
    'content-type': 'application/x-www-form-urlencoded',
  });
const orderRequest = (callBackId: string, lease = false) =>
  post(
    `${BASE}/api/v1/api/order/withdrawWithoutVerify`,
    form({
      userId: 10086,
      tenantUserId: '20931',
      tenantType: 1,
      callBackId,
      symbol: lease ? 'ENERGY' : 'USDT',
      chainName: 'TRON',
      toAddr: 'TXYZ',
      amount: lease ? 4 : '1.5',
      ...(lease ? { expiryHours: 1 } : {}),
    }),
    { 'x-api-key': 'ak_live', 'content-type': 'application/x-www-form-urlencoded' },
  );
const cardRequest = (headers: Record<string, string> = {}) =>
  post(
    `${BASE}/card/close`,
    JSON.stringify({
      merchantId: '10086',
      merchantUserId: 'u-1',
      powerCardId: 'pc-1',
      channel: 'APP',
      closeSerialNo: 'cs-1',
    }),
    {
      'content-type': 'application/json',
      ...headers,
    },
  );

async function read(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: response.status, body: JSON.parse(await response.text()) as Record<string, unknown> };
}

describe('createWalletMock: options are checked at creation, each with a one-line ConfigError', () => {
  it.each([
    ['no options', undefined, /options \{ baseUrl, merchants \} are required/],
    ['no baseUrl', { baseUrl: undefined }, /baseUrl must be a URL/],
    ['a baseUrl that is no URL', { baseUrl: 'wallet test' }, /baseUrl "wallet test" is not an absolute URL/],
    ['no merchants', { merchants: [] }, /merchants must list at least one merchant/],
    [
      'a merchant without apiKey',
      { merchants: [{ userId: 1, apiKey: '', privateKey: privatePem }] },
      /merchants\[0\]\.apiKey must be a non-empty string/,
    ],
    [
      'two merchants with one key',
      {
        merchants: [
          { userId: 1, apiKey: 'k', privateKey: privatePem },
          { userId: 2, apiKey: 'k', privateKey: privatePem },
        ],
      },
      /merchants\[1\]\.apiKey is used by another merchant/,
    ],
    [
      'an unknown permission',
      { merchants: [{ userId: 1, apiKey: 'k', privateKey: privatePem, permissions: ['nope' as WalletOperationId] }] },
      /permissions: unknown operation "nope"/,
    ],
    [
      'a userId that is no integer',
      { merchants: [{ userId: '1.5', apiKey: 'k', privateKey: privatePem }] },
      /merchants\[0\]\.userId must be an integer/,
    ],
    ['an unknown scenario', { scenario: 'no-such' as WalletScenario }, /unknown scenario "no-such"/],
  ])('refuses %s', (_label, given, message) => {
    const make = () =>
      createWalletMock(
        WALLET_ENDPOINTS,
        (given === undefined
          ? undefined
          : options(given as Partial<WalletMockOptions<WalletOperationId>>)) as WalletMockOptions<WalletOperationId>,
      );
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(message);
  });

  it('refuses a private key the codec cannot read on the first answer that needs it, not before', async () => {
    const mock = createWalletMock(
      WALLET_ENDPOINTS,
      options({ merchants: [{ userId: 10086, apiKey: 'ak_live', privateKey: 'not a key' }] }),
    );
    // The key check needs no key material: a refused key still gets its 401.
    expect((await mock.serve('getEnergyMaxCount', energyRequest('wrong'))).status).toBe(401);
    await expect(mock.serve('getEnergyMaxCount', energyRequest())).rejects.toThrow(/merchants\[0\]\.privateKey/);
  });
});

describe('createWalletMock: URLs and 404s (ERR-404)', () => {
  it('places each operation under its server variable; card close under cardBaseUrl', () => {
    const mock = createWalletMock(WALLET_ENDPOINTS, options({ cardBaseUrl: 'http://card.test/svc/' }));
    expect([mock.url('getEnergyMaxCount'), mock.url('closeCard')]).toEqual([
      `${BASE}/api/v1/api/order/getEnergyMaxCount`,
      'http://card.test/svc/card/close',
    ]);
    expect(mock.fallbackUrls).toEqual([BASE, `${BASE}/*`, 'http://card.test/svc', 'http://card.test/svc/*']);
  });

  it("answers the spec's 404 body for any other path", async () => {
    const mock = createWalletMock(WALLET_ENDPOINTS, options());
    expect(await read(mock.notFound(new Request(`${BASE}/api/v2/anything`)))).toEqual({
      status: 404,
      body: { code: 'NOT FOUND', message: 'not found' },
    });
  });

  it('throws for an operation the table does not have', async () => {
    const mock = createWalletMock(WALLET_ENDPOINTS, options());
    await expect(mock.serve('nope' as WalletOperationId, energyRequest())).rejects.toThrow(
      /no operation nope in the endpoint table/,
    );
  });
});

describe('createWalletMock: scenarios are decorators of the key check and the operations', () => {
  const serveAll = async (scenario: WalletScenario) => {
    const calls: WalletCall[] = [];
    const mock = createWalletMock(WALLET_ENDPOINTS, options({ scenario, onCall: (call) => calls.push(call) }));
    return {
      energy: await read(await mock.serve('getEnergyMaxCount', energyRequest())),
      order: await read(await mock.serve('withdrawWithoutVerify', orderRequest('cb-1'))),
      card: await read(await mock.serve('closeCard', cardRequest())),
      calls,
    };
  };

  it('success: every valid request succeeds, the energy sealed for the merchant', async () => {
    const { energy, order, card, calls } = await serveAll('success');
    expect(openJson(String(energy.body.data), 'response', publicKey).value).toEqual(
      parseExactJson('{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}'),
    );
    expect(order.body.code).toBe(0);
    expect(card.body).toMatchObject({
      success: true,
      requestId: expect.stringMatching(/^req-msw-\d{6}$/),
      data: { status: 'CLOSED' },
    });
    expect(calls.map((call) => [call.operationId, call.status, call.userId])).toEqual([
      ['getEnergyMaxCount', 200, '10086'],
      ['withdrawWithoutVerify', 200, '10086'],
      ['closeCard', 200, '10086'],
    ]);
  });

  it.each([
    ['unauthorized', 401, { code: 'UNAUTHORIZED', message: 'unauthorized' }],
    ['forbidden', 403, { code: 'FORBIDDEN', message: 'forbidden' }],
    ['not-found', 404, { code: 'NOT FOUND', message: 'not found' }],
  ] as const)("%s answers the spec's HTTP error on the order endpoints", async (scenario, status, body) => {
    const { energy, order } = await serveAll(scenario);
    expect([energy, order]).toEqual([
      { status, body },
      { status, body },
    ]);
  });

  it('unauthorized and forbidden leave card close without a key alone, and judge a key sent to it', async () => {
    for (const scenario of ['unauthorized', 'forbidden'] as const) {
      const mock = createWalletMock(WALLET_ENDPOINTS, options({ scenario }));
      expect((await read(await mock.serve('closeCard', cardRequest()))).body.success, scenario).toBe(true);
      expect((await mock.serve('closeCard', cardRequest({ 'x-api-key': 'ak_live' }))).status, scenario).toBe(
        scenario === 'unauthorized' ? 401 : 403,
      );
    }
  });

  it('a business scenario answers its failure after validation: an invalid request still fails as in success', async () => {
    const mock = createWalletMock(WALLET_ENDPOINTS, options({ scenario: 'insufficient-energy' }));
    expect((await read(await mock.serve('withdrawWithoutVerify', orderRequest('cb-1')))).body.code).toBe(
      ENVELOPE_CODES.insufficientEnergy,
    );
    expect((await read(await mock.serve('withdrawWithoutVerify', orderRequest('')))).body.code).toBe(
      ENVELOPE_CODES.invalidRequest,
    );
  });

  it('a business scenario changes no state: the lease it refused debited nothing', async () => {
    const count = async (mock: ReturnType<typeof createWalletMock<WalletOperationId>>) =>
      openJson(
        String((await read(await mock.serve('getEnergyMaxCount', energyRequest()))).body.data),
        'response',
        publicKey,
      ).value;
    const forced = createWalletMock(WALLET_ENDPOINTS, options({ scenario: 'insufficient-energy' }));
    expect((await read(await forced.serve('withdrawWithoutVerify', orderRequest('cb-1', true)))).body.code).toBe(
      ENVELOPE_CODES.insufficientEnergy,
    );
    expect(await count(forced)).toMatchObject({ energyMaxCount: parseExactJson('312') });
    // The same lease under success debits 4 transactions: the count above would have shown it.
    const plain = createWalletMock(WALLET_ENDPOINTS, options());
    expect((await read(await plain.serve('withdrawWithoutVerify', orderRequest('cb-1', true)))).body.code).toBe(0);
    expect(await count(plain)).toMatchObject({ energyMaxCount: parseExactJson('308') });
  });

  it('a card scenario names the merchant it refused for', async () => {
    const calls: WalletCall[] = [];
    const mock = createWalletMock(
      WALLET_ENDPOINTS,
      options({ scenario: 'card-already-closed', onCall: (call) => calls.push(call) }),
    );
    expect((await read(await mock.serve('closeCard', cardRequest()))).body).toMatchObject({
      success: false,
      errorCode: CARD_ERROR_CODES.alreadyClosed,
      detailMessage: 'the card is closed already',
    });
    expect(calls[0]?.userId).toBe('10086');
  });

  it('every scenario is listed once and answers', async () => {
    expect(new Set(WALLET_SCENARIOS).size).toBe(WALLET_SCENARIOS.length);
    for (const scenario of WALLET_SCENARIOS) {
      const { calls } = await serveAll(scenario);
      expect(
        calls.map((call) => call.scenario),
        scenario,
      ).toEqual([scenario, scenario, scenario]);
    }
  });
});

describe('createWalletMock: the answers keep exact numbers', () => {
  it('writes the result text exactly as sealed', async () => {
    const calls: WalletCall[] = [];
    const mock = createWalletMock(WALLET_ENDPOINTS, options({ onCall: (call) => calls.push(call) }));
    await mock.serve('getEnergyMaxCount', energyRequest());
    expect(calls[0]?.resultText).toBe(
      stringifyExact(parseExactJson('{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}')),
    );
  });
});
