// The scenarios as decorators of the service's operations and key check (src/msw/scenarios.ts):
// the real operation validates first; at its first effect the scenario's failure is answered and
// the state is left as it was.
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import type { Plain, ServiceContext } from '../service/service-context.js';
import { MemoryServiceState } from '../service/memory-state.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { DEFAULT_POLICIES } from '../service/policies.js';
import type { PipelineKeys } from '../service/pipeline.js';
import { businessFailure, scenarioKeys, scenarioOperations, WALLET_SCENARIOS } from './scenarios.js';

const MERCHANT = 10086n;
const n = (text: string) => new LosslessNumber(text);

function context() {
  const state = new MemoryServiceState({
    merchants: [{ userId: MERCHANT, energy: { balance: 640n, costPerTx: 64n } }],
    unknownCards: 'open',
  });
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: () => undefined },
    policies: DEFAULT_POLICIES,
    now: () => 0,
    random: { uuid: () => 'u', hex: () => 'h' },
    withdrawalDelayMs: 0,
    bizId: () => 'biz-1',
  };
  return { state, ctx };
}

const lease = (fields: Record<string, unknown> = {}): Plain =>
  ({
    userId: n('10086'),
    tenantUserId: '1',
    tenantType: n('1'),
    callBackId: 'cb-1',
    symbol: 'ENERGY',
    chainName: 'TRON',
    toAddr: 'T',
    amount: n('2'),
    expiryHours: n('1'),
    ...fields,
  }) as Plain;
const card = (fields: Record<string, unknown> = {}): Plain =>
  ({
    merchantId: '10086',
    merchantUserId: 'u-1',
    powerCardId: 'pc-1',
    channel: 'APP',
    closeSerialNo: 'cs-1',
    ...fields,
  }) as Plain;

describe('scenarioOperations', () => {
  it('leaves the operations as they are under success and the HTTP scenarios', () => {
    for (const scenario of ['success', 'unauthorized', 'forbidden', 'not-found'] as const) {
      expect(scenarioOperations(SERVICE_OPERATIONS, scenario), scenario).toEqual(SERVICE_OPERATIONS);
    }
  });

  it('answers the forced failure for a valid request and changes nothing', () => {
    const { state, ctx } = context();
    const ops = scenarioOperations(SERVICE_OPERATIONS, 'insufficient-energy');
    expect(ops.withdrawWithoutVerify(ctx, MERCHANT, lease())).toEqual({
      ok: false,
      failure: 'insufficientEnergy',
      message: businessFailure('insufficient-energy', 'withdrawWithoutVerify')!.message,
      rules: [],
    });
    expect(state.energy(MERCHANT)?.balance).toBe(640n);
    expect(state.order(MERCHANT, 'cb-1')).toBeUndefined();
    // The operation itself, undecorated, records the same lease.
    expect(SERVICE_OPERATIONS.withdrawWithoutVerify(ctx, MERCHANT, lease())).toMatchObject({ ok: true });
    expect(state.order(MERCHANT, 'cb-1')).toBeDefined();
  });

  it('lets the operation refuse an invalid request in its own words first', () => {
    const { ctx } = context();
    const ops = scenarioOperations(SERVICE_OPERATIONS, 'user-id-mismatch');
    expect(ops.withdrawWithoutVerify(ctx, MERCHANT, lease({ tenantType: n('2') }))).toMatchObject({
      ok: false,
      failure: 'tenantType',
    });
    expect(
      scenarioOperations(SERVICE_OPERATIONS, 'unsupported-resource').getEnergyMaxCount(ctx, MERCHANT, {
        symbol: 'ENERGY',
      }),
    ).toMatchObject({
      failure: 'invalidRequest',
    });
  });

  it('card close: an unknown merchant is refused as such; a known one gets the scenario, naming the merchant', () => {
    const { state, ctx } = context();
    const ops = scenarioOperations(SERVICE_OPERATIONS, 'card-already-closed');
    expect(ops.closeCard(ctx, card({ merchantId: '1' }))).toMatchObject({
      ok: false,
      failure: 'merchantNotFound',
      message: 'no merchant 1',
    });
    expect(ops.closeCard(ctx, card())).toEqual({
      ok: false,
      failure: 'alreadyClosed',
      message: 'the card is closed already',
      rules: [],
      merchant: MERCHANT,
    });
    // Nothing was closed: the undecorated operation closes the card now.
    expect(SERVICE_OPERATIONS.closeCard(ctx, card())).toMatchObject({ ok: true });
    expect(state.card(MERCHANT, 'pc-1', 'u-1')).toMatchObject({ status: 'closed' });
  });

  it('has a failure for every business scenario on at least one operation', () => {
    const business = WALLET_SCENARIOS.filter(
      (scenario) => !['success', 'unauthorized', 'forbidden', 'not-found'].includes(scenario),
    );
    for (const scenario of business) {
      expect(
        ['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard'].some((operation) =>
          businessFailure(scenario, operation),
        ),
        scenario,
      ).toBe(true);
    }
  });
});

describe('scenarioKeys', () => {
  const keys: PipelineKeys<string> = {
    check: (header) => (header === 'ak' ? { ok: true, merchant: 'm' } : { ok: false, status: 401, why: 'unknown' }),
  };

  it('refuses every key under unauthorized, every known one under forbidden, and judges as given otherwise', () => {
    expect(scenarioKeys(keys, 'unauthorized').check('ak', 'getEnergyMaxCount', 0)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(scenarioKeys(keys, 'forbidden').check('ak', 'getEnergyMaxCount', 0)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(scenarioKeys(keys, 'forbidden').check('nope', 'getEnergyMaxCount', 0)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(scenarioKeys(keys, 'success')).toBe(keys);
  });
});
