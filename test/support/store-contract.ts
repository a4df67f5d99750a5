import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import type { ClaimResult, IdempotencyStore, StoreOptions } from '../../src/merchant/store.js';

/** Opens a fresh, empty store of the kind under test. */
export type OpenStore = (options: StoreOptions) => IdempotencyStore | Promise<IdempotencyStore>;

/** The token of a claim that must have succeeded. */
export function tokenOf(claim: ClaimResult): number {
  if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
  return claim.token;
}

/**
 * How the contract lets time pass: on a store with its own clock (PostgreSQL) real waits measured
 * by the wall clock; on a store given a test clock (`now`), moves of that clock, at once.
 */
export interface ContractTime {
  wait(ms: number): Promise<void>;
  /** Ms on the clock `wait` moves (only differences count). */
  elapsed(): number;
}

/** Real time: sleeps and `performance.now`. */
export const REAL_TIME: ContractTime = {
  wait: async (ms) => {
    await sleep(ms);
  },
  elapsed: () => performance.now(),
};

/** Waits (bounded, in `time`'s ms) until the store's clock lets `key` be claimed again; returns that claim. */
export async function claimAfterLease(
  store: IdempotencyStore,
  key: string,
  text: string,
  limitMs = 5_000,
  time: ContractTime = REAL_TIME,
): Promise<ClaimResult> {
  const until = time.elapsed() + limitMs;
  for (;;) {
    const claim = await store.claim(key, text);
    if (claim.state !== 'busy' || time.elapsed() > until) return claim;
    await time.wait(20);
  }
}

/**
 * The behaviour every IdempotencyStore owes the receiver (claim, fencing, lease, order), run
 * against each store: in memory, SQLite, PostgreSQL. Lease tests let `time` pass: real time for a
 * store on its own clock, a test clock's moves for one given `now`.
 */
export function storeContract(open: OpenStore, time: ContractTime = REAL_TIME): void {
  it('claims a new key once: a second claim is busy, and after complete it is processed', async () => {
    const store = await open({});
    const token = tokenOf(await store.claim('k', '{"a":1}'));
    expect(await store.claim('k', '{"a":2}')).toEqual({ state: 'busy' });
    expect(await store.complete('k', token)).toBe(true);
    expect(await store.complete('k', token)).toBe(true);
    expect(await store.claim('k', '{"a":3}')).toEqual({ state: 'processed' });
    expect(await store.processed()).toEqual(['{"a":1}']);
    await store.close();
  });

  it('lets a released key be claimed again with the new delivery text and a larger token, and the old token completes nothing', async () => {
    const store = await open({});
    const first = tokenOf(await store.claim('k', 'first'));
    await store.release('k', first);
    const second = tokenOf(await store.claim('k', 'second'));
    expect(second).toBeGreaterThan(first);
    expect(await store.complete('k', first)).toBe(false);
    expect(await store.complete('k', second)).toBe(true);
    expect(await store.processed()).toEqual(['second']);
    await store.close();
  });

  it('fences a holder whose lease expired: after the takeover its complete, release and renew do nothing', async () => {
    const store = await open({ leaseMs: 150 });
    const slow = tokenOf(await store.claim('k', 'slow'));
    const fresh = tokenOf(await claimAfterLease(store, 'k', 'fresh', 5_000, time));
    expect(fresh).toBeGreaterThan(slow);
    expect(await store.release('k', slow)).toBeUndefined();
    expect(await store.renew('k', slow)).toBe(false);
    expect(await store.complete('k', slow)).toBe(false);
    expect(await store.claim('k', 'third')).toEqual({ state: 'busy' });
    expect(await store.complete('k', fresh)).toBe(true);
    expect(await store.processed()).toEqual(['fresh']);
    await store.close();
  });

  it('keeps a renewed claim past its first lease', async () => {
    // 600 ms between renewals against a 2.5 s lease: a busy machine has room to be late.
    const store = await open({ leaseMs: 2_500 });
    const token = tokenOf(await store.claim('k', 'long'));
    for (let i = 0; i < 5; i++) {
      await time.wait(600);
      expect(await store.renew('k', token)).toBe(true);
    }
    expect(await store.claim('k', 'other')).toEqual({ state: 'busy' });
    expect(await store.complete('k', token)).toBe(true);
    await store.close();
  });

  it('lists processed events in completion order, and ignores complete or release of unknown keys', async () => {
    const store = await open({});
    const tokens = new Map<string, number>();
    for (const key of ['a', 'b', 'c']) tokens.set(key, tokenOf(await store.claim(key, key)));
    await store.complete('c', tokens.get('c')!);
    await store.complete('a', tokens.get('a')!);
    expect(await store.complete('nope', 1)).toBe(false);
    await store.release('nope', 1);
    await store.release('a', tokens.get('a')!);
    expect(await store.processed()).toEqual(['c', 'a']);
    await store.close();
  });

  it('commits a transactional completion only for the current token, and rolls back a throwing one', async () => {
    const store = await open({});
    const token = tokenOf(await store.claim('k', 'tx'));
    expect(await store.completeInTransaction!('k', token + 1000, () => 'never')).toEqual({ state: 'lost' });
    await expect(
      store.completeInTransaction!('k', token, () => {
        throw new Error('ledger down');
      }),
    ).rejects.toThrow('ledger down');
    expect(await store.processed()).toEqual([]);
    expect(await store.completeInTransaction!('k', token, () => 'ok')).toEqual({ state: 'done', value: 'ok' });
    expect(await store.processed()).toEqual(['tx']);
    await store.close();
  });
}
