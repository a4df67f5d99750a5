/**
 * The energy model of property 4 (stateful.ts), pure: what a sequence's answers let the model know
 * of a service's energy (ENERGY-FLOOR), under every legal reading of when a lease is debited
 * (U-STATES). No I/O: the property feeds it what it set, what was accepted and what it read.
 */

/**
 * What the model knows of the energy: the balance and cost as last set, the debits (amount ×
 * cost) of every accepted lease in order, and the hidden states the service may be in. A state
 * [a, c] says the debits a..c-1 have lowered the balance set last. Whether and when a lease is
 * debited is open (U-STATES): c may lag behind the last lease (a debit that lands later, or never)
 * but never goes back, and debits land in order. A new balance makes the debits before it
 * irrelevant, except those that had not landed yet and may still land on it. The knowledge lives
 * across sequences, so a debit of an earlier sequence that lands later is a legal reading too.
 */
export interface EnergyKnowledge {
  balance: bigint;
  cost: bigint;
  /** prefix[i] = sum of the debits offset..offset+i-1 (debits before `offset` no state can reach). */
  prefix: bigint[];
  offset: number;
  /** Possible hidden states as absolute index pairs [a, c]. */
  states: Array<[number, number]>;
  /** The model's own reading (every debit at once): the debits since this index lowered the balance set last. */
  setAt: number;
}

/** A fresh knowledge: nothing known until the first balance is set. */
export function unknownEnergy(): EnergyKnowledge {
  return { balance: 0n, cost: 1n, prefix: [0n], offset: 0, states: [], setAt: 0 };
}

const lastIndex = (k: EnergyKnowledge) => k.offset + k.prefix.length - 1;
const sumOf = (k: EnergyKnowledge, from: number, to: number) => k.prefix[to - k.offset]! - k.prefix[from - k.offset]!;
const floorOf = (k: EnergyKnowledge, debit: bigint) => (k.balance > debit ? k.balance - debit : 0n) / k.cost;

/** A new balance: a debit not yet landed (from the earliest a state leaves open) may still land on it. */
export function energySet(k: EnergyKnowledge, balance: bigint, cost: bigint): void {
  const n = lastIndex(k);
  let from = n;
  for (const [, c] of k.states) if (c < from) from = c;
  k.states = [];
  for (let a = from; a <= n; a++) k.states.push([a, a]);
  k.balance = balance;
  k.cost = cost;
  k.setAt = n;
  compact(k);
}

/** An accepted lease: its debit joins the queue (the states stay: it may not have landed yet). */
export function energyLeased(k: EnergyKnowledge, debit: bigint): void {
  k.prefix.push(k.prefix[k.prefix.length - 1]! + debit);
}

/** The model's own reading of energyMaxCount (every accepted lease debited at once), and the range of the legal ones. */
export function energyReadings(k: EnergyKnowledge): { own: string; low: string; high: string } {
  const n = lastIndex(k);
  let low: bigint | undefined;
  let high: bigint | undefined;
  for (const [a, c] of k.states) {
    const most = floorOf(k, sumOf(k, a, c));
    const least = floorOf(k, sumOf(k, a, n));
    if (high === undefined || most > high) high = most;
    if (low === undefined || least < low) low = least;
  }
  const own = floorOf(k, sumOf(k, k.setAt, n));
  return { own: own.toString(), low: (low ?? own).toString(), high: (high ?? own).toString() };
}

/**
 * An observed energyMaxCount: keeps the states that explain it (debits may have landed since, in
 * order); returns false when none does (no legal reading gives this count).
 */
export function energyObserved(k: EnergyKnowledge, count: bigint): boolean {
  const n = lastIndex(k);
  const kept = new Map<string, [number, number]>();
  for (const [a, c] of k.states) {
    // floor(balance - debits) only falls as more debits land: find the first c' where it is <= count.
    let lo = c;
    let hi = n + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (floorOf(k, sumOf(k, a, mid)) <= count) hi = mid;
      else lo = mid + 1;
    }
    for (let at = lo; at <= n && floorOf(k, sumOf(k, a, at)) === count; at++) kept.set(`${a},${at}`, [a, at]);
  }
  if (kept.size === 0) return false;
  k.states = [...kept.values()];
  compact(k);
  return true;
}

/** Drops debits no state can reach any more (they landed before the balance was set). */
function compact(k: EnergyKnowledge): void {
  if (k.states.length === 0) return;
  let low = k.setAt;
  for (const [a] of k.states) if (a < low) low = a;
  if (low > k.offset) {
    k.prefix.splice(0, low - k.offset);
    k.offset = low;
  }
}
