import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import { validateSchema, type SchemaName } from '../core/schemas.js';
import { valueRules } from './refinements.js';
import { componentSchema, deriveArbitrary } from './schema-arbitrary.js';

const refine = valueRules({ userId: 10086, strings: 'unicode' });

describe('arbitraries derived from the spec schemas', () => {
  for (const name of [
    'EnergyMaxCountRequest',
    'OrderRequest',
    'DepositCallback',
    'WithdrawalRequestCallback',
    'WithdrawalCallback',
    'AddressCallback',
    'NotEnoughMoneyCallback',
  ] as SchemaName[]) {
    it(`draws only values valid against ${name}`, () => {
      const values = fc.sample(deriveArbitrary(componentSchema(name), { refine, strings: 'unicode' }), {
        numRuns: 200,
        seed: 11,
      });
      for (const value of values) expect(validateSchema(name, value)).toEqual([]);
    });
  }

  it('applies the x-rules refinements: ENERGY on TRON, tenantType 1, expiryHours and a whole amount when ENERGY, the own userId', () => {
    const orders = fc.sample(deriveArbitrary(componentSchema('OrderRequest'), { refine }), {
      numRuns: 300,
      seed: 5,
    }) as Record<string, unknown>[];
    const leases = orders.filter((order) => order.symbol === 'ENERGY');
    expect(leases.length).toBeGreaterThan(0);
    expect(orders.length - leases.length).toBeGreaterThan(0);
    for (const order of orders) {
      expect(String(order.tenantType)).toBe('1');
      expect(String(order.userId)).toBe('10086');
    }
    for (const lease of leases) {
      expect(lease.expiryHours).toBeInstanceOf(LosslessNumber);
      expect(String(lease.amount)).toMatch(/^\d+$/);
    }
    const energy = fc.sample(deriveArbitrary(componentSchema('EnergyMaxCountRequest'), { refine }), {
      numRuns: 20,
      seed: 1,
    });
    for (const query of energy) expect(query).toEqual({ symbol: 'ENERGY', chainName: 'TRON' });
  });

  it('keeps amounts exact: a withdrawal amount is a decimal literal, never a float', () => {
    const orders = fc.sample(deriveArbitrary(componentSchema('OrderRequest'), { refine }), {
      numRuns: 300,
      seed: 9,
    }) as Record<string, unknown>[];
    const amounts = orders.filter((order) => order.symbol !== 'ENERGY').map((order) => order.amount);
    expect(amounts.some((amount) => amount instanceof LosslessNumber)).toBe(true);
    expect(amounts.some((amount) => typeof amount === 'string')).toBe(true);
    for (const amount of amounts) expect(String(amount)).toMatch(/^[1-9]\d*(\.\d+)?$/);
  });

  it('draws both field spellings of a deposit (txid/chain and txId/chainName)', () => {
    const deposits = fc.sample(deriveArbitrary(componentSchema('DepositCallback'), { refine }), {
      numRuns: 100,
      seed: 3,
    }) as Record<string, unknown>[];
    expect(deposits.some((deposit) => 'txid' in deposit)).toBe(true);
    expect(deposits.some((deposit) => 'txId' in deposit)).toBe(true);
    expect(deposits.some((deposit) => 'chainName' in deposit)).toBe(true);
  });
});
