/**
 * One order request as the unit tests of leniency and refusals send it: its URL and a plaintext
 * that every order rule accepts, so a test changes one field and sees that field's rule.
 */
export const ORDER_URL = 'http://127.0.0.1:9/api/v1/api/order/withdrawWithoutVerify';

export const GOOD_ORDER = {
  userId: 10086,
  tenantUserId: '20931',
  tenantType: 1,
  callBackId: 'cb-1',
  symbol: 'USDT',
  chainName: 'TRON',
  toAddr: 'T',
  amount: 1.5,
} as const;
