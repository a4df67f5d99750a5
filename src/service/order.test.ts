import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import type { Plain, ServiceContext } from './service-context.js';
import { MemoryServiceState } from './memory-state.js';
import { withdrawWithoutVerify } from './order.js';
import { DEFAULT_POLICIES, type ServicePolicies } from './policies.js';
import type { QueuedCallback } from './state.js';

const MERCHANT = 10086n;

function setup(policies: Partial<ServicePolicies> = {}, energy = { balance: 20_000_000n, costPerTx: 64_000n }) {
  const state = new MemoryServiceState({ merchants: [{ userId: MERCHANT, energy }] });
  const queued: QueuedCallback[] = [];
  let clock = 1_000;
  let n = 0;
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: (callback) => queued.push(callback) },
    policies: { ...DEFAULT_POLICIES, ...policies },
    now: () => clock,
    random: { uuid: () => `uuid-${++n}`, hex: (bytes) => String(++n).padStart(bytes * 2, '0') },
    withdrawalDelayMs: 500,
    bizId: () => 'biz',
  };
  const submit = (fields: Record<string, unknown> = {}) => withdrawWithoutVerify(ctx, MERCHANT, order(fields));
  return { ctx, state, queued, submit, advance: (ms: number) => (clock += ms) };
}

/** A withdrawal order; `undefined` drops a field. Numbers are exact (`new LosslessNumber`). */
function order(fields: Record<string, unknown> = {}): Plain {
  const all: Record<string, unknown> = {
    userId: new LosslessNumber('10086'),
    tenantUserId: '20931',
    tenantType: new LosslessNumber('1'),
    callBackId: 'cb-1',
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9',
    amount: new LosslessNumber('10.5'),
    ...fields,
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Plain;
}
const n = (text: string) => new LosslessNumber(text);
const lease = (fields: Record<string, unknown> = {}) => ({
  symbol: 'ENERGY',
  amount: n('2'),
  expiryHours: n('24'),
  callBackId: 'el-1',
  ...fields,
});

describe('withdrawWithoutVerify', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'echoes a decimal tenantUserId as that integer, digit for digit',
      {},
      '{"tenantUserId":20931,"id":"cb-1"}',
      '10.5',
    ],
    [
      'echoes a tenantUserId up to a Java long',
      { tenantUserId: '9223372036854775807' },
      '{"tenantUserId":9223372036854775807,"id":"cb-1"}',
      '10.5',
    ],
    [
      'gives a tenantUserId beyond a Java long a surrogate id',
      { tenantUserId: '9223372036854775808' },
      '{"tenantUserId":9000000000000001,"id":"cb-1"}',
      '10.5',
    ],
    [
      'gives a text tenantUserId a surrogate id',
      { tenantUserId: 'alice' },
      '{"tenantUserId":9000000000000001,"id":"cb-1"}',
      '10.5',
    ],
    [
      'gives a tenantUserId with a leading zero a surrogate id',
      { tenantUserId: '007' },
      '{"tenantUserId":9000000000000001,"id":"cb-1"}',
      '10.5',
    ],
    [
      'keeps an amount a float would round',
      { amount: n('123456789012.123456') },
      '{"tenantUserId":20931,"id":"cb-1"}',
      '123456789012.123456',
    ],
    ['keeps trailing fraction zeros', { amount: n('10.50') }, '{"tenantUserId":20931,"id":"cb-1"}', '10.50'],
    ['writes an exponent as plain digits', { amount: n('1.5e2') }, '{"tenantUserId":20931,"id":"cb-1"}', '150'],
    [
      'takes an amount given as a decimal string',
      { amount: '0.000001' },
      '{"tenantUserId":20931,"id":"cb-1"}',
      '0.000001',
    ],
  ])('%s', (_name, fields, result, amount) => {
    const { submit, queued } = setup();
    const outcome = submit(fields);
    expect(outcome.ok && stringifyExact(outcome.result)).toBe(result);
    // The withdrawal's callback (type 3) is queued with the order, its amount exact.
    expect(queued).toHaveLength(1);
    expect(queued[0]!.payload).toContain(`"amount":${amount}}`);
  });

  it.each<[string, Record<string, unknown>, string, string | RegExp, string[]]>([
    ['tenantType 2', { tenantType: n('2') }, 'tenantType', 'tenantType must be 1 [ORDER-TENANT-TYPE]', []],
    ['no toAddr', { toAddr: undefined }, 'invalidRequest', 'toAddr is required [ORDER-FIELDS]', []],
    [
      'tenantUserId as a number',
      { tenantUserId: n('20931') },
      'invalidRequest',
      'tenantUserId must be string [ORDER-FIELDS]',
      [],
    ],
    [
      'a userId of another merchant',
      { userId: n('10087') },
      'userIdMismatch',
      'userId 10087 is not the userId of the merchant that owns this X-API-KEY',
      [],
    ],
    [
      'a userId beyond every merchant',
      { userId: n('100860000000000000000') },
      'userIdMismatch',
      /^userId 100860000000000000000 is not/,
      [],
    ],
    [
      'a symbol that is no currency',
      { symbol: 'usdt' },
      'unsupportedSymbol',
      'symbol "usdt" is neither ENERGY nor a digital-currency symbol this service pays out (1-20 upper-case letters or digits)',
      ['ORDER-KIND'],
    ],
    [
      'amount 0',
      { amount: n('0') },
      'amount',
      'amount must be a decimal above 0 with at most 38 integer and 18 fraction digits, not 0',
      [],
    ],
    ['a negative amount', { amount: n('-1') }, 'amount', /not -1$/, []],
    ['39 integer digits', { amount: n('1'.repeat(39)) }, 'amount', /at most 38 integer/, []],
    ['19 fraction digits', { amount: n(`0.${'1'.repeat(19)}`) }, 'amount', /18 fraction digits/, []],
    [
      'an ENERGY order without expiryHours',
      lease({ expiryHours: undefined }),
      'expiryHours',
      'expiryHours is required [ORDER-EXPIRY]',
      [],
    ],
    // expiryHours fails by its property and by the ENERGY branch: named once.
    [
      'an ENERGY order with expiryHours "24"',
      lease({ expiryHours: '24' }),
      'expiryHours',
      'expiryHours must be integer [ORDER-EXPIRY]',
      [],
    ],
    [
      'an ENERGY order with expiryHours 8761',
      lease({ expiryHours: n('8761') }),
      'expiryHours',
      'expiryHours must be a whole number from 1 to 8760, not 8761',
      ['ORDER-EXPIRY'],
    ],
    [
      'an ENERGY order with a fractional amount',
      lease({ amount: n('2.5') }),
      'energyAmount',
      'amount must be integer [ORDER-ENERGY-AMOUNT]; amount must be string [ORDER-ENERGY-AMOUNT]; amount must match a schema in anyOf [ORDER-ENERGY-AMOUNT]',
      [],
    ],
    [
      'several fields, each by its name',
      { tenantType: n('2'), chainName: undefined, toAddr: n('3') },
      'tenantType',
      'chainName is required [ORDER-FIELDS]; tenantType must be 1 [ORDER-TENANT-TYPE]; toAddr must be string [ORDER-FIELDS]',
      [],
    ],
    [
      'an ENERGY order for more than 10^12 transactions',
      lease({ amount: n('1000000000001') }),
      'energyAmount',
      "an ENERGY order's amount is the number of transactions: a whole number from 1 to 1000000000000, not 1000000000001",
      ['ORDER-ENERGY-AMOUNT'],
    ],
  ])('refuses %s', (_name, fields, failure, message, rules) => {
    const { submit, queued, state } = setup();
    const outcome = submit(fields);
    expect(outcome).toMatchObject({ ok: false, failure });
    if (!outcome.ok) {
      if (typeof message === 'string') expect(outcome.message).toBe(message);
      else expect(outcome.message).toMatch(message);
      if (rules.length > 0) expect(outcome.rules).toEqual(rules);
    }
    // A refusal changes nothing: no callback, no energy spent, the callBackId still free.
    expect(queued).toEqual([]);
    expect(state.energy(MERCHANT)?.balance).toBe(20_000_000n);
    expect(state.order(MERCHANT, String(order(fields).callBackId))).toBeUndefined();
  });

  it.each<[string, Partial<ServicePolicies>, Record<string, unknown>, boolean]>([
    ['pattern: USDT', {}, { symbol: 'USDT' }, true],
    ['pattern: 21 characters', {}, { symbol: 'A'.repeat(21) }, false],
    ['any: lower-case text', { withdrawalSymbols: 'any' }, { symbol: 'usd t' }, true],
    ['any: blank text', { withdrawalSymbols: 'any' }, { symbol: ' ' }, false],
    ['a list: a listed symbol', { withdrawalSymbols: ['USDC'] }, { symbol: 'USDC' }, true],
    ['a list: another symbol', { withdrawalSymbols: ['USDC'] }, { symbol: 'USDT' }, false],
    ['12 integer digits allowed: 12', { amountIntegerDigits: 12 }, { amount: n('123456789012') }, true],
    ['12 integer digits allowed: 13', { amountIntegerDigits: 12 }, { amount: n('1234567890123') }, false],
    ['6 fraction digits allowed: 6', { amountFractionDigits: 6 }, { amount: n('0.123456') }, true],
    ['6 fraction digits allowed: 7', { amountFractionDigits: 6 }, { amount: n('0.1234567') }, false],
    ['typeCoercion off: userId "10086"', {}, { userId: '10086' }, false],
    ['typeCoercion off: tenantType "1"', {}, { tenantType: '1' }, false],
    ['typeCoercion off: tenantUserId 20931', {}, { tenantUserId: n('20931') }, false],
    ['typeCoercion off: a lease\'s expiryHours "24"', {}, lease({ expiryHours: '24' }), false],
    ['typeCoercion on: userId "10086"', { typeCoercion: 'on' }, { userId: '10086' }, true],
    ['typeCoercion on: tenantType "1"', { typeCoercion: 'on' }, { tenantType: '1' }, true],
    ['typeCoercion on: tenantUserId 20931', { typeCoercion: 'on' }, { tenantUserId: n('20931') }, true],
    ['typeCoercion on: a lease\'s expiryHours "24"', { typeCoercion: 'on' }, lease({ expiryHours: '24' }), true],
    ['typeCoercion on: tenantType "2" is still not 1', { typeCoercion: 'on' }, { tenantType: '2' }, false],
    ['typeCoercion on: userId "10086.0" is no integer', { typeCoercion: 'on' }, { userId: '10086.0' }, false],
    ['typeCoercion on: userId "ten" is no integer', { typeCoercion: 'on' }, { userId: 'ten' }, false],
    ['typeCoercion on: an object is no string', { typeCoercion: 'on' }, { toAddr: {} }, false],
  ])('follows the policies: %s', (_name, policies, fields, accepted) => {
    expect(setup(policies).submit(fields).ok).toBe(accepted);
  });

  it("queues the withdrawal callback (type 3) due after withdrawalDelayMs, with the order's fields", () => {
    const { submit, queued } = setup();
    submit();
    expect(queued).toEqual([
      {
        trackingId: 'wd-0000000000000002',
        merchant: MERCHANT,
        type: 3,
        payload:
          '{"type":3,"trackingId":"wd-0000000000000002","tenantUserId":"20931","business":0,"txid":"0000000000000000000000000000000000000000000000000000000000000001","callBackId":"cb-1","chain":"TRON","symbol":"USDT","toAddress":"TQn9","amount":10.5}',
        deliveries: 1,
        concurrent: false,
        fixedUuid: 'uuid-3',
        orderId: 'cb-1',
        createdAt: 1_000,
        dueAt: 1_500,
      },
    ]);
  });

  it.each<[string, Partial<ServicePolicies>, string]>([
    ['callbackAmount string', { callbackAmount: 'string' }, '"amount":"10.5"'],
    ['callbackFieldNames provider', { callbackFieldNames: 'provider' }, '"txId":"'],
  ])('shapes the callback by the policy %s', (_name, policies, text) => {
    const { submit, queued } = setup(policies);
    submit();
    expect(queued[0]!.payload).toContain(text);
  });

  it.each<[string, Partial<ServicePolicies>, { ok: boolean; failure?: string; result?: string }]>([
    ['refuse (the default)', {}, { ok: false, failure: 'duplicateCallBackId' }],
    [
      'replay',
      { duplicateCallBackId: 'replay' },
      { ok: true, result: '{"tenantUserId":9000000000000001,"id":"cb-1"}' },
    ],
  ])('answers a used callBackId under duplicateCallBackId %s, and records nothing new', (_name, policies, expected) => {
    const { submit, queued } = setup(policies);
    expect(submit({ tenantUserId: 'alice' }).ok).toBe(true);
    const second = submit({ tenantUserId: 'bob', amount: n('1') });
    expect(second.ok).toBe(expected.ok);
    if (!second.ok) {
      expect(second.failure).toBe(expected.failure);
      expect(second.message).toBe('duplicate callBackId "cb-1": the merchant used it for an earlier order');
      expect(second.rules).toEqual(['ORDER-CALLBACK-ID']);
    } else {
      // The first order's tenant: its surrogate id again.
      expect(stringifyExact(second.result)).toBe(expected.result);
    }
    expect(queued).toHaveLength(1);
  });

  it('keeps one surrogate id per tenant and merchant', () => {
    const { submit } = setup();
    const ids = ['alice', 'bob', 'alice'].map((tenantUserId, i) => {
      const outcome = submit({ tenantUserId, callBackId: `cb-${i}` });
      return outcome.ok ? String(outcome.result.tenantUserId) : outcome.message;
    });
    expect(ids).toEqual(['9000000000000001', '9000000000000002', '9000000000000001']);
  });

  it.each<[string, Partial<ServicePolicies>, bigint[]]>([
    ['now lowers the balance at once', { leaseDebit: 'now' }, [640_000n - 128_000n, 640_000n - 128_000n]],
    [
      'later lowers it after leaseDebitDelayMs',
      { leaseDebit: 'later', leaseDebitDelayMs: 1_000 },
      [640_000n, 640_000n - 128_000n],
    ],
    ['never leaves it', { leaseDebit: 'never' }, [640_000n, 640_000n]],
  ])('leases energy: leaseDebit %s', (_name, policies, balances) => {
    const { submit, state, ctx, advance, queued } = setup(policies, { balance: 640_000n, costPerTx: 64_000n });
    expect(submit(lease()).ok).toBe(true);
    expect(state.energy(MERCHANT)?.balance).toBe(balances[0]);
    advance(1_000);
    // Due debits are applied when the service next reads the balance.
    withdrawWithoutVerify(ctx, MERCHANT, order(lease({ callBackId: 'el-2', amount: n('1000000') })));
    expect(state.energy(MERCHANT)?.balance).toBe(balances[1]);
    // A lease queues no callback.
    expect(queued).toEqual([]);
  });

  it('refuses a lease above the balance less the pending debits', () => {
    const { submit } = setup({ leaseDebit: 'later' }, { balance: 640_000n, costPerTx: 64_000n });
    expect(submit(lease({ amount: n('6') })).ok).toBe(true);
    expect(submit(lease({ callBackId: 'el-2', amount: n('5') }))).toMatchObject({
      ok: false,
      failure: 'insufficientEnergy',
      message: 'insufficient energy: the lease needs 320000 and the merchant has less',
    });
    expect(submit(lease({ callBackId: 'el-3', amount: n('4') })).ok).toBe(true);
  });

  it('refuses text a float cannot hold where a string belongs', () => {
    expect(withdrawWithoutVerify(setup().ctx, MERCHANT, order({ toAddr: n('1e999') }))).toMatchObject({
      ok: false,
      failure: 'invalidRequest',
      message: 'toAddr must be string [ORDER-FIELDS]',
    });
  });
});
