import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateMerchantKeyPair } from 'wallet-conformance';
import { createWalletHandlers, type WalletCall, type WalletHandlersOptions } from 'wallet-conformance/msw';
import { createWalletClient, WalletError, type Order } from './client.js';

const baseUrl = 'http://wallet.test';
const keys = generateMerchantKeyPair(1024);
const calls: WalletCall[] = [];
const wallet: WalletHandlersOptions = {
  baseUrl,
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
  // Fresh handlers (and so a fresh service state) for every test.
  server.resetHandlers(...createWalletHandlers(wallet));
  calls.length = 0;
});
afterAll(() => server.close());

const client = (apiKey = 'ak_live', url = baseUrl) =>
  createWalletClient({ baseUrl: url, apiKey, publicKey: keys.publicPem });
const order = (fields: Partial<Order> = {}): Order => ({
  userId: 10086,
  tenantUserId: '20931',
  callBackId: 'wd-0001',
  symbol: 'USDT',
  chainName: 'TRON',
  toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  amount: '10.5',
  ...fields,
});
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error as WalletError,
  );

describe('the merchant client against the generated MSW handlers', () => {
  it('submits a withdrawal and reads the decrypted confirmation', async () => {
    expect(await client().withdraw(order())).toEqual({ tenantUserId: 20931n, id: 'wd-0001' });
  });

  it('reads energyMaxCount = floor(balance / costPerTx) from the merchant energy', async () => {
    expect(await client().getEnergyMaxCount()).toBe(312n);
    server.use(
      ...createWalletHandlers({
        ...wallet,
        merchants: [{ ...wallet.merchants[0]!, energy: { balance: 10n ** 30n, costPerTx: 7n } }],
      }),
    );
    expect(await client().getEnergyMaxCount()).toBe(142857142857142857142857142857n);
  });

  it('spends energy on a lease, so the next query counts fewer transactions', async () => {
    await client().withdraw(order({ symbol: 'ENERGY', amount: '12', expiryHours: 24, callBackId: 'el-1' }));
    expect(await client().getEnergyMaxCount()).toBe(300n);
  });

  it('throws a typed 401 for an unknown key', async () => {
    const error = await failure(client('ak_wrong').getEnergyMaxCount());
    expect(error).toBeInstanceOf(WalletError);
    expect([error.status, error.code]).toEqual([401, 'UNAUTHORIZED']);
  });

  it('throws a typed 403 when the key lacks the permission', async () => {
    const error = await failure(client('ak_energy_only').withdraw(order({ userId: 10087 })));
    expect([error.status, error.code, error.message]).toEqual([403, 'FORBIDDEN', 'wallet: FORBIDDEN forbidden']);
  });

  it('throws a typed 404 for a wrong base path', async () => {
    const error = await failure(client('ak_live', `${baseUrl}/api/v2`).getEnergyMaxCount());
    expect([error.status, error.code]).toEqual([404, 'NOT FOUND']);
  });

  it('surfaces a business failure: the same callBackId twice', async () => {
    await client().withdraw(order());
    const error = await failure(client().withdraw(order()));
    expect([error.status, error.code]).toEqual([200, 40012]);
    expect(error.rules).toEqual(['ORDER-CALLBACK-ID']);
  });

  it('surfaces a forced scenario: insufficient energy', async () => {
    server.use(...createWalletHandlers({ ...wallet, scenario: 'insufficient-energy' }));
    const error = await failure(client().withdraw(order({ symbol: 'ENERGY', amount: '1', expiryHours: 1 })));
    expect(error.code).toBe(40016);
  });

  it('gets a failure naming the broken rule for an invalid request, never a silent 200 success', async () => {
    const error = await failure(client().withdraw(order({ symbol: 'ENERGY', amount: '20' })));
    expect(error.code).toBe(40013);
    expect(error.message).toBe('wallet: 40013 expiryHours is required [ORDER-EXPIRY]');
    expect(calls.at(-1)?.status).toBe(200);
  });

  it('sends an amount that a float would round with every digit', async () => {
    await client().withdraw(order({ amount: '12345678901234567890.123' }));
    expect(calls.at(-1)?.plainText).toContain('"amount":12345678901234567890.123');
  });
});
