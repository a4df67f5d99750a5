import fc, { type Arbitrary } from 'fast-check';
import type { Capabilities } from '../runner/api.js';
import { ordersAllowed, type ServiceEnv } from './service-exchange.js';

/**
 * The commands of property 4 (stateful.ts): what a generated sequence is made of, the sequences
 * every run starts with, and how a command reads in the report. Pure: running them is stateful.ts.
 */

/** One command of a generated sequence (plain data: stored, shown and replayed as it is). */
export type StateCommand =
  | { op: 'set-energy'; balance: number | string; costPerTx: number | string }
  | { op: 'query' }
  | { op: 'lease'; amount: number; expiryHours: number }
  | { op: 'withdraw'; amount: string }
  | { op: 'repeat-callback-id'; pick: number }
  | { op: 'register-card'; card: number }
  | { op: 'close-card'; card: number };

/** The energy every sequence starts from (its setup), so the model knows the balance. */
export const SETUP_ENERGY = { balance: 1_000_000_000, costPerTx: 65_000 } as const;

/**
 * Balances and costs past 2^53 (decimal strings, exact): 2^53 + 1, a Java long's maximum, 2^64 + 1
 * and 10^30 + 7. A service computes floor(balance / cost) from them in exact arithmetic or refuses
 * them through the control API (U-LIMITS); a float rounds them.
 */
export const HUGE_BALANCES = [
  '9007199254740993',
  '9223372036854775807',
  '18446744073709551617',
  '1000000000000000000000000000007',
] as const;
const HUGE_COSTS = ['1', '3', '9007199254740993'] as const;

/** A sequence's energy settings past 2^53, run first on every seed (queries and leases on them; leases only where orders are allowed). */
export function hugeEnergyExamples(orders: boolean): StateCommand[][] {
  const out: StateCommand[][] = [];
  for (const [i, balance] of HUGE_BALANCES.entries()) {
    const costPerTx = HUGE_COSTS[i % HUGE_COSTS.length]!;
    out.push([
      { op: 'set-energy', balance, costPerTx },
      { op: 'query' },
      ...(orders ? [{ op: 'lease' as const, amount: 1 + i, expiryHours: 1 }, { op: 'query' as const }] : []),
    ]);
  }
  // A cost past 2^53 on a balance past 2^64: one transaction's worth, and one unit short of it.
  out.push([
    { op: 'set-energy', balance: (9007199254740993n * 2048n).toString(), costPerTx: '9007199254740993' },
    { op: 'query' },
  ]);
  out.push([
    { op: 'set-energy', balance: (9007199254740993n * 2048n - 1n).toString(), costPerTx: '9007199254740993' },
    { op: 'query' },
  ]);
  return out;
}

/** Cards per sequence: few, so that "close it again" comes often. */
export const CARDS = 3;

/** The commands the target allows, as an arbitrary of sequences. */
export function commandsFor(env: ServiceEnv, capabilities: Capabilities | undefined): Arbitrary<StateCommand[]> {
  const orders = ordersAllowed(env.target);
  const cards = env.target.userId !== undefined;
  const registrable = cards && Boolean(capabilities?.routes['POST cards']?.present);
  const options: Array<{ arbitrary: Arbitrary<StateCommand>; weight: number }> = [
    {
      arbitrary: fc.record({
        op: fc.constant('set-energy' as const),
        balance: fc.integer({ min: 0, max: 20_000_000 }),
        costPerTx: fc.integer({ min: 1, max: 100_000 }),
      }),
      weight: 2,
    },
    {
      arbitrary: fc.record({
        op: fc.constant('set-energy' as const),
        balance: fc.constantFrom<string>(...HUGE_BALANCES),
        costPerTx: fc.constantFrom<string>(...HUGE_COSTS),
      }),
      weight: 1,
    },
    { arbitrary: fc.constant({ op: 'query' as const }), weight: 4 },
  ];
  if (orders) {
    options.push(
      {
        arbitrary: fc.record({
          op: fc.constant('lease' as const),
          amount: fc.integer({ min: 1, max: 5 }),
          expiryHours: fc.integer({ min: 1, max: 72 }),
        }),
        weight: 4,
      },
      {
        arbitrary: fc.record({
          op: fc.constant('withdraw' as const),
          amount: fc
            .tuple(fc.integer({ min: 1, max: 999_999 }), fc.integer({ min: 0, max: 999_999 }))
            .map(([whole, fraction]) => `${whole}.${String(fraction).padStart(6, '0')}`),
        }),
        weight: 2,
      },
      { arbitrary: fc.record({ op: fc.constant('repeat-callback-id' as const), pick: fc.nat(7) }), weight: 2 },
    );
  }
  if (cards)
    options.push({
      arbitrary: fc.record({ op: fc.constant('close-card' as const), card: fc.nat(CARDS - 1) }),
      weight: 2,
    });
  if (registrable)
    options.push({
      arbitrary: fc.record({ op: fc.constant('register-card' as const), card: fc.nat(CARDS - 1) }),
      weight: 1,
    });
  return fc.array(fc.oneof(...options), { minLength: 0, maxLength: 12 });
}

/** A command as one line of the report. */
export function describeCommand(command: StateCommand): string {
  switch (command.op) {
    case 'set-energy':
      return `set energy balance ${command.balance} costPerTx ${command.costPerTx}`;
    case 'query':
      return 'query energyMaxCount';
    case 'lease':
      return `lease ${command.amount} transactions for ${command.expiryHours} h`;
    case 'withdraw':
      return `withdraw ${command.amount} USDT`;
    case 'repeat-callback-id':
      return `repeat the callBackId of accepted order #${command.pick} (mod count)`;
    case 'register-card':
      return `register card #${command.card}`;
    case 'close-card':
      return `close card #${command.card}`;
  }
}
