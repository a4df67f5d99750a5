import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import { WALLET_ENDPOINTS } from '../generated/msw-handlers.js';
import { describeRequestIssues, REQUEST_CONSTANTS } from './request-wording.js';

const n = (text: string) => new LosslessNumber(text);

describe('the wording of a plain request off its schema', () => {
  it("holds each operation's constants to the spec's table", () => {
    expect(REQUEST_CONSTANTS).toEqual(
      Object.fromEntries(WALLET_ENDPOINTS.map((endpoint) => [endpoint.operationId, endpoint.request.constants])),
    );
  });

  it.each<
    [
      string,
      Parameters<typeof describeRequestIssues>[0],
      Parameters<typeof validateSchema>[0],
      Record<string, unknown>,
      string,
    ]
  >([
    [
      'a missing field by its name',
      'getEnergyMaxCount',
      'EnergyMaxCountRequest',
      { symbol: 'ENERGY' },
      'chainName is required [ENERGY-REQ]',
    ],
    [
      'a const by the value it wants',
      'withdrawWithoutVerify',
      'OrderRequest',
      {
        userId: n('10086'),
        tenantUserId: 't',
        tenantType: n('2'),
        callBackId: 'c',
        symbol: 'USDT',
        chainName: 'TRON',
        toAddr: 'a',
        amount: n('1'),
      },
      'tenantType must be 1 [ORDER-TENANT-TYPE]',
    ],
    // expiryHours breaks its property and the ENERGY branch: the same words twice, shown once.
    [
      'a field failing twice once',
      'withdrawWithoutVerify',
      'OrderRequest',
      {
        userId: n('10086'),
        tenantUserId: 't',
        tenantType: n('1'),
        callBackId: 'c',
        symbol: 'ENERGY',
        chainName: 'TRON',
        toAddr: 'a',
        amount: n('1'),
        expiryHours: '24',
      },
      'expiryHours must be integer [ORDER-EXPIRY]',
    ],
    [
      'each field by its name',
      'closeCard',
      'CardCloseRequest',
      { merchantId: n('1'), merchantUserId: n('2'), powerCardId: n('3'), channel: n('4'), closeSerialNo: n('5') },
      'merchantId must be string [CARD-REQ]; merchantUserId must be string [CARD-REQ]; powerCardId must be string [CARD-REQ]; channel must be string [CARD-REQ]; closeSerialNo must be string [CARD-REQ]',
    ],
    [
      'five issues, then a count',
      'withdrawWithoutVerify',
      'OrderRequest',
      {},
      'userId is required [ORDER-FIELDS]; tenantUserId is required [ORDER-FIELDS]; tenantType is required [ORDER-TENANT-TYPE]; callBackId is required [ORDER-FIELDS, ORDER-CALLBACK-ID]; symbol is required [ORDER-FIELDS, ORDER-KIND]; and 3 more',
    ],
  ])('describes %s', (_name, operation, schema, plain, message) => {
    const issues = validateSchema(schema, plain);
    expect(issues.length).toBeGreaterThan(0);
    expect(describeRequestIssues(operation, issues)).toBe(message);
  });
});
