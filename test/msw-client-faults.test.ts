// Faulty merchant clients (test/fixtures/msw-client-faults.ts) against the generated MSW handlers:
// each one's second order of a user is refused under the rule its catch names, and the conforming
// client's orders are all confirmed (so the refusal is the fault's, not the scenario's).
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LosslessNumber } from '../src/core/exact-json.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey } from '../src/crypto/keys.js';
import { ENVELOPE_CODES } from '../src/service/codes.js';
import { createWalletHandlers, WALLET_ENDPOINTS, type WalletHandlersOptions } from '../src/generated/msw-handlers.js';
import {
  CONFORMING_CLIENT,
  MSW_CLIENT_FAULT_NAMES,
  MSW_CLIENT_FAULTS,
  type ClientOrder,
} from './fixtures/msw-client-faults.js';

const BASE = 'http://wallet.test';
const keys = generateMerchantKeyPair(1024);
const publicKey = parseKey(keys.publicPem, { expect: 'public' });
const wallet: WalletHandlersOptions = {
  baseUrl: BASE,
  merchants: [{ userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem }],
};
const server = setupServer(...createWalletHandlers(wallet));
const orderPath = WALLET_ENDPOINTS.find((endpoint) => endpoint.operationId === 'withdrawWithoutVerify')!.path;

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
// Fresh handlers, so a fresh service state (the callBackIds it has seen) per client.
afterEach(() => server.resetHandlers(...createWalletHandlers(wallet)));
afterAll(() => server.close());

/** Two withdrawals of one user, as the client places them. */
const ORDERS: ClientOrder[] = [
  { tenantUserId: '20931', amount: '10.5', seq: 0 },
  { tenantUserId: '20931', amount: '1', seq: 1 },
];

/** Places `order` with the callBackId the client makes; the envelope as answered. */
async function place(
  callBackId: (order: ClientOrder) => string,
  order: ClientOrder,
): Promise<{ code: unknown; message: unknown; data?: unknown }> {
  const plain = {
    userId: 10086,
    tenantUserId: order.tenantUserId,
    tenantType: 1,
    callBackId: callBackId(order),
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: new LosslessNumber(order.amount),
  };
  const response = await fetch(`${BASE}${orderPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': 'ak_live' },
    body: `data=${encodeURIComponent(sealJson(plain, 'request', publicKey))}`,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { code: unknown; message: unknown; data?: unknown };
}

const rulesIn = (message: unknown): string[] =>
  [...String(message).matchAll(/\[([A-Z0-9, -]+)\]/g)].flatMap((match) => match[1]!.split(', '));

describe('faulty merchant clients are refused by the MSW handlers', () => {
  it('confirm every order of the conforming client (a callBackId of its own per order)', async () => {
    for (const order of ORDERS) {
      const envelope = await place(CONFORMING_CLIENT.callBackId, order);
      expect(envelope.code, String(envelope.message)).toBe(0);
      expect(openJson(String(envelope.data), 'response', publicKey).value).toMatchObject({
        id: CONFORMING_CLIENT.callBackId(order),
      });
    }
  });

  for (const name of MSW_CLIENT_FAULT_NAMES) {
    const fault = MSW_CLIENT_FAULTS[name]!;
    for (const expected of fault.catches) {
      it(`catch "${name}" (${fault.effect}) at ${expected.case} as ${expected.failure} under ${expected.rule}`, async () => {
        const operation = expected.case.replace(/^msw:/, '');
        expect(operation).toBe('withdrawWithoutVerify');
        const [first, second] = [await place(fault.callBackId, ORDERS[0]!), await place(fault.callBackId, ORDERS[1]!)];
        expect(first.code, String(first.message)).toBe(0);
        expect(second.code, String(second.message)).toBe(ENVELOPE_CODES[expected.failure]);
        expect(second).not.toHaveProperty('data');
        expect(rulesIn(second.message)).toContain(expected.rule);
      });
    }
  }
});
