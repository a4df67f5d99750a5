import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import type { Plain, ServiceContext } from '../service/context.js';
import { MemoryServiceState } from '../service/memory-state.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { DEFAULT_POLICIES, type ServicePolicies } from '../service/policies.js';
import type { QueuedCallback, ServiceState } from '../service/state.js';
import { openEmulatorStore, storeServiceState } from './store.js';

const n = (text: string) => new LosslessNumber(text);
const order = (fields: Record<string, unknown> = {}): Plain =>
  ({ userId: n('10086'), tenantUserId: 'alice', tenantType: n('1'), callBackId: 'cb-1', symbol: 'USDT', chainName: 'TRON', toAddr: 'TQn9', amount: n('123456789012.123456'), ...fields }) as Plain;
const lease = (fields: Record<string, unknown> = {}) => order({ symbol: 'ENERGY', amount: n('3'), expiryHours: n('24'), callBackId: 'el-1', ...fields });
const card = (fields: Record<string, unknown> = {}): Plain => ({ merchantId: '10086', merchantUserId: 'u-1', powerCardId: 'pc-1', channel: 'APP', closeSerialNo: 'cs-1', ...fields }) as Plain;
const energy = { symbol: 'ENERGY', chainName: 'TRON' };

/** A scenario: every step's outcome as text, on one state. */
function play(state: ServiceState, queued: QueuedCallback[], policies: Partial<ServicePolicies>): string[] {
  let clock = 1_000;
  let count = 0;
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: (callback) => queued.push(callback) },
    policies: { ...DEFAULT_POLICIES, ...policies },
    now: () => clock,
    random: { uuid: () => `uuid-${++count}`, hex: (bytes) => String(++count).padStart(bytes * 2, '0') },
    withdrawalDelayMs: 100,
    bizId: () => `biz-${++count}`,
  };
  const ops = SERVICE_OPERATIONS;
  const m = 10086n;
  const steps = [
    () => ops.getEnergyMaxCount(ctx, m, energy),
    () => ops.withdrawWithoutVerify(ctx, m, order()),
    () => ops.withdrawWithoutVerify(ctx, m, order({ callBackId: 'cb-2', tenantUserId: 'bob' })),
    // Surrogate numbers are stable and distinct, not dense: SQLite spends one on a lookup of a known tenant.
    () => ops.withdrawWithoutVerify(ctx, m, order({ amount: n('1') })),
    () => ops.withdrawWithoutVerify(ctx, m, lease()),
    () => ops.withdrawWithoutVerify(ctx, m, lease({ callBackId: 'el-2', amount: n('400') })),
    () => ops.getEnergyMaxCount(ctx, m, energy),
    () => ((clock += 5_000), ops.getEnergyMaxCount(ctx, m, energy)),
    () => ops.closeCard(ctx, card()),
    () => ops.closeCard(ctx, card({ closeSerialNo: 'cs-2' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-2' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-9', closeSerialNo: 'cs-9' })),
    () => ops.closeCard(ctx, card({ powerCardId: 'pc-9', closeSerialNo: 'cs-10' })),
    () => ops.closeCard(ctx, card({ merchantId: '1' })),
  ];
  return steps.map((step) => {
    const outcome = step();
    return outcome.ok ? `ok ${stringifyExact(outcome.result)}` : `${outcome.failure}: ${outcome.message}`;
  });
}

function memory(): MemoryServiceState {
  const state = new MemoryServiceState({ merchants: [{ userId: 10086n, energy: { balance: 20_000_000n, costPerTx: 64_000n } }], unknownCards: 'unknown' });
  state.openCard(10086n, 'pc-1', 'u-1');
  state.openCard(10086n, 'pc-2', 'u-1');
  return state;
}

function sqlite(): ServiceState {
  const store = openEmulatorStore(':memory:');
  store.seedMerchant(10086, { balance: 20_000_000n, costPerTx: 64_000n }, undefined, [
    { powerCardId: 'pc-1', merchantUserId: 'u-1', status: 'open' },
    { powerCardId: 'pc-2', merchantUserId: 'u-1', status: 'open' },
  ]);
  return storeServiceState(store, [10086]);
}

describe('the SQLite store as the service state', () => {
  it.each<[string, Partial<ServicePolicies>]>([
    ['the default policies', {}],
    ['leaseDebit later, duplicates replayed, serials ignored, no card registry', { leaseDebit: 'later', leaseDebitDelayMs: 1_000, duplicateCallBackId: 'replay', closeSerialNo: 'ignored', cardRegistry: 'off' }],
    ['leaseDebit never', { leaseDebit: 'never' }],
  ])('answers every step as the in-memory state does under %s', (_name, policies) => {
    const fromMemory: QueuedCallback[] = [];
    const fromSqlite: QueuedCallback[] = [];
    const expected = play(memory(), fromMemory, policies);
    expect(play(sqlite(), fromSqlite, policies)).toEqual(expected);
    expect(fromSqlite).toEqual(fromMemory);
    // The scenario is not vacuous: orders, surrogate ids, leases and closes all happened.
    expect(expected.filter((line) => line.startsWith('ok'))).not.toHaveLength(0);
    expect(expected.join('\n')).toContain('"tenantUserId":9000000000000001');
    expect(fromMemory).toHaveLength(2);
  });

  it('knows only the merchants of the config, by their exact userId', () => {
    const state = sqlite();
    expect([10086n, 10087n, 10086n + 2n ** 64n].map((id) => state.hasMerchant(id))).toEqual([true, false, false]);
  });
});
