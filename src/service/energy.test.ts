import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import type { Plain, ServiceContext } from './service-context.js';
import { getEnergyMaxCount, settleLeaseDebits } from './energy.js';
import { MemoryServiceState } from './memory-state.js';
import { DEFAULT_POLICIES } from './policies.js';

const MERCHANT = 10086n;

function setup(energy = { balance: 20_000_000n, costPerTx: 64_000n }) {
  const state = new MemoryServiceState({ merchants: [{ userId: MERCHANT, energy }] });
  let clock = 1_000;
  const ctx: ServiceContext = {
    state,
    callbacks: { queued: () => undefined },
    policies: DEFAULT_POLICIES,
    now: () => clock,
    random: { uuid: () => 'u', hex: () => 'h' },
    withdrawalDelayMs: 0,
    bizId: () => 'biz',
  };
  return { ctx, state, advance: (ms: number) => (clock += ms) };
}

const query: Plain = { symbol: 'ENERGY', chainName: 'TRON' };

describe('getEnergyMaxCount', () => {
  it.each<[string, { balance: bigint; costPerTx: bigint }, string]>([
    ['floors 20000000 / 64000 = 312.5', { balance: 20_000_000n, costPerTx: 64_000n }, '312'],
    ['answers 0 below one transaction', { balance: 63_999n, costPerTx: 64_000n }, '0'],
    ['answers exactly at a whole number', { balance: 128_000n, costPerTx: 64_000n }, '2'],
    [
      'keeps balances beyond 2^53 exact',
      { balance: 123_456_789_012_345_678_901n, costPerTx: 1n },
      '123456789012345678901',
    ],
    ['does not round up at .9999', { balance: 99_999n, costPerTx: 10_000n }, '9'],
  ])('%s', (_name, energy, count) => {
    const outcome = getEnergyMaxCount(setup(energy).ctx, MERCHANT, query);
    expect(outcome.ok && stringifyExact(outcome.result)).toBe(
      `{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":${count}}`,
    );
  });

  it.each<[string, Plain, string, RegExp]>([
    ['no chainName', { symbol: 'ENERGY' }, 'invalidRequest', /^chainName is required \[ENERGY-REQ\]$/],
    [
      'symbol as a number',
      { symbol: new LosslessNumber('1'), chainName: 'TRON' },
      'invalidRequest',
      /^symbol must be string \[ENERGY-REQ\]$/,
    ],
    [
      'a number a float cannot hold where a string belongs',
      { symbol: 'ENERGY', chainName: new LosslessNumber('1e999') },
      'invalidRequest',
      /^chainName must be string \[ENERGY-REQ\]$/,
    ],
    [
      'another resource',
      { symbol: 'BANDWIDTH', chainName: 'TRON' },
      'unsupportedResource',
      /^only symbol ENERGY on chainName TRON is supported, not BANDWIDTH on TRON$/,
    ],
    ['another chain', { symbol: 'ENERGY', chainName: 'ETH' }, 'unsupportedResource', /not ENERGY on ETH$/],
  ])('refuses %s', (_name, plain, failure, message) => {
    const outcome = getEnergyMaxCount(setup().ctx, MERCHANT, plain);
    expect(outcome).toMatchObject({ ok: false, failure });
    expect(!outcome.ok && outcome.message).toMatch(message);
  });

  it('answers an internal failure for a merchant the state does not know', () => {
    expect(getEnergyMaxCount(setup().ctx, 1n, query)).toMatchObject({ ok: false, failure: 'internal' });
  });

  it('reads the balance after the lease debits that are due (policy leaseDebit: later), not before', () => {
    const { ctx, state, advance } = setup({ balance: 640_000n, costPerTx: 64_000n });
    state.pendingDebits.push(
      { merchant: MERCHANT, cost: 128_000n, dueAt: 1_500 },
      { merchant: MERCHANT, cost: 64_000n, dueAt: 3_000 },
    );
    const count = () => {
      const outcome = getEnergyMaxCount(ctx, MERCHANT, query);
      return outcome.ok ? String(outcome.result.energyMaxCount) : outcome.message;
    };
    expect(count()).toBe('10');
    advance(500);
    expect(count()).toBe('8');
    expect(state.pendingDebits).toHaveLength(1);
    advance(1_500);
    expect(count()).toBe('7');
    expect(state.pendingDebits).toEqual([]);
  });

  it('settles a debit larger than the balance down to 0', () => {
    const { ctx, state } = setup({ balance: 100n, costPerTx: 1n });
    state.pendingDebits.push({ merchant: MERCHANT, cost: 500n, dueAt: 0 });
    settleLeaseDebits(ctx);
    expect(state.energy(MERCHANT)).toEqual({ balance: 0n, costPerTx: 1n });
  });
});
