import { describe, expect, it } from 'vitest';
import {
  energyLeased,
  energyObserved,
  energyReadings,
  energySet,
  unknownEnergy,
  type EnergyKnowledge,
} from './energy-model.js';

/** A knowledge after `balance`/`cost` is set and the given leases (in transactions) are accepted. */
function after(balance: number, cost: number, leases: number[]): EnergyKnowledge {
  const k = unknownEnergy();
  energySet(k, BigInt(balance), BigInt(cost));
  for (const n of leases) energyLeased(k, BigInt(n * cost));
  return k;
}

describe('the energy model of property 4', () => {
  it('reads floor(balance / cost) right after the balance is set', () => {
    const k = after(1_000_003, 65_000, []);
    expect(energyReadings(k)).toEqual({ own: '15', low: '15', high: '15' });
    expect(energyObserved(k, 15n)).toBe(true);
    expect(energyObserved(after(1_000_003, 65_000, []), 16n)).toBe(false);
  });

  it('takes every lease debited at once as its own reading, and a debit that lags (later, never) as legal', () => {
    const k = after(1_000_000, 65_000, [2, 3]);
    expect(energyReadings(k)).toEqual({ own: '10', low: '10', high: '15' });
    // Debits land in order: the first alone (13) is legal, the second alone (12) is not.
    expect(energyObserved(after(1_000_000, 65_000, [2, 3]), 13n)).toBe(true);
    expect(energyObserved(after(1_000_000, 65_000, [2, 3]), 12n)).toBe(false);
    expect(energyObserved(after(1_000_000, 65_000, [2, 3]), 9n)).toBe(false);
  });

  it('never un-debits: once a debit was seen landed, an answer without it is no legal reading', () => {
    const k = after(1_000_000, 65_000, [2]);
    expect(energyObserved(k, 13n)).toBe(true);
    expect(energyObserved(k, 15n)).toBe(false);
    // And a lagging debit may still land afterwards.
    const lag = after(1_000_000, 65_000, [2]);
    expect(energyObserved(lag, 15n)).toBe(true);
    expect(energyObserved(lag, 13n)).toBe(true);
  });

  it('a new balance: a debit already seen landed is gone, one not yet landed may still land on it', () => {
    const seen = after(1_000_000, 65_000, [2]);
    expect(energyObserved(seen, 13n)).toBe(true);
    energySet(seen, 650_000n, 65_000n);
    expect(energyReadings(seen)).toEqual({ own: '10', low: '10', high: '10' });

    const pending = after(1_000_000, 65_000, [2]);
    expect(energyObserved(pending, 15n)).toBe(true);
    energySet(pending, 650_000n, 65_000n);
    // The model's own reading: the lease was debited before the new balance; the lagging one may land on it.
    expect(energyReadings(pending)).toEqual({ own: '10', low: '8', high: '10' });
  });

  it('clamps at zero and keeps the debit of the cost in force when the lease was made', () => {
    const k = after(100_000, 65_000, [1]);
    expect(energyReadings(k)).toEqual({ own: '0', low: '0', high: '1' });
    energySet(k, 1_000_000n, 100_000n);
    energyLeased(k, 2n * 100_000n);
    // The first lease (65,000) may still land, before the second (200,000): 10, 9 (first only), 7 (both), 8 (second only: not in order).
    expect(energyReadings(k).own).toBe('8');
    expect(energyObserved(k, 7n)).toBe(true);
  });

  it('forgets debits no state can reach, so a long run stays small', () => {
    const k = after(10 ** 12, 1, []);
    for (let i = 0; i < 500; i++) {
      energyLeased(k, 1n);
      expect(energyObserved(k, BigInt(10 ** 12 - i - 1))).toBe(true);
      energySet(k, BigInt(10 ** 12 - i - 1), 1n);
    }
    expect(k.prefix.length).toBeLessThanOrEqual(2);
    expect(k.states).toHaveLength(1);
  });

  it('is exact past 2^53: a count one off from a float-rounded one is told apart', () => {
    const k = unknownEnergy();
    energySet(k, 9_007_199_254_740_993n, 1n);
    expect(energyReadings(k).own).toBe('9007199254740993');
    // A service that computes through a double answers 9007199254740992: no legal reading.
    expect(energyObserved(k, 9_007_199_254_740_992n)).toBe(false);
    const big = unknownEnergy();
    energySet(big, 18_446_744_073_709_551_617n, 3n);
    energyLeased(big, 2n * 3n);
    expect(energyReadings(big)).toEqual({
      own: '6148914691236517203',
      low: '6148914691236517203',
      high: '6148914691236517205',
    });
    expect(energyObserved(big, 6_148_914_691_236_517_203n)).toBe(true);
  });
});
