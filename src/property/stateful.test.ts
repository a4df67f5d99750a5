import { describe, expect, it } from 'vitest';
import { describeCommand, HUGE_BALANCES, hugeEnergyExamples } from './stateful-commands.js';

describe('the commands of property 4', () => {
  it('starts every run with energy settings past 2^53, leases on them only where orders are allowed', () => {
    const withOrders = hugeEnergyExamples(true);
    for (const balance of HUGE_BALANCES)
      expect(withOrders.some((sequence) => sequence[0]!.op === 'set-energy' && sequence[0]!.balance === balance)).toBe(
        true,
      );
    expect(withOrders.flat().some((command) => command.op === 'lease')).toBe(true);
    expect(
      hugeEnergyExamples(false)
        .flat()
        .every((command) => command.op === 'set-energy' || command.op === 'query'),
    ).toBe(true);
    for (const sequence of withOrders) {
      const set = sequence[0] as { balance: string; costPerTx: string };
      expect(
        BigInt(set.balance) > BigInt(Number.MAX_SAFE_INTEGER) ||
          BigInt(set.costPerTx) > BigInt(Number.MAX_SAFE_INTEGER),
      ).toBe(true);
    }
  });

  it('reads each command as one line of the report', () => {
    expect([
      describeCommand({ op: 'set-energy', balance: '9007199254740993', costPerTx: 3 }),
      describeCommand({ op: 'lease', amount: 2, expiryHours: 24 }),
      describeCommand({ op: 'repeat-callback-id', pick: 4 }),
      describeCommand({ op: 'close-card', card: 1 }),
    ]).toEqual([
      'set energy balance 9007199254740993 costPerTx 3',
      'lease 2 transactions for 24 h',
      'repeat the callBackId of accepted order #4 (mod count)',
      'close card #1',
    ]);
  });
});
