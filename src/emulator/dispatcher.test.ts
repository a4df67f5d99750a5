import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import type { EmulatorMerchant } from './config.js';
import { cryptoRandom } from './context.js';
import { CallbackDispatcher } from './dispatcher.js';
import { openEmulatorStore, type EmulatorStore } from './store.js';

const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A merchant that acknowledges every callback, counting them. */
async function acknowledgingMerchant(): Promise<{ url: string; posts: () => number; next: () => Promise<void> }> {
  let posts = 0;
  let waiting: (() => void) | undefined;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts++;
      res.setHeader('content-type', 'application/json');
      res.end('{"errCode":0,"message":""}');
      waiting?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    posts: () => posts,
    next: () => new Promise<void>((resolve) => (waiting = resolve)),
  };
}

describe('callback dispatcher when recording an attempt fails', () => {
  it('sends a delivery whose answer cannot be recorded at most three times, not forever', async () => {
    const merchantSide = await acknowledgingMerchant();
    const store: EmulatorStore = openEmulatorStore(':memory:');
    cleanup.push(() => store.close());
    let now = 1_000_000;
    const merchant = { userId: 7, apiKey: 'k', keyPair: { privateKey, publicKey: privateKey.publicKey }, profile: DEFAULT_PROFILE } as unknown as EmulatorMerchant;
    store.seedMerchant(7, { balance: 0n, costPerTx: 1n }, merchantSide.url, []);
    store.insertEvent({ trackingId: 't-1', merchant: 7, type: 4, payload: '{"type":4,"trackingId":"t-1"}', deliveries: 1, concurrent: false, fixedUuid: 'u', createdAt: now, dueAt: now });
    // Every write of an attempt fails, as with a database locked by another process (SQLITE_BUSY).
    Object.defineProperty(store, 'recordAttempt', { value: () => { throw new Error('database is locked'); } });
    const claims: number[] = [];
    const claimDue = store.claimDue;
    Object.defineProperty(store, 'claimDue', { value: (...args: Parameters<typeof claimDue>) => {
      const due = claimDue(...args);
      claims.push(due.length);
      return due;
    } });
    const lines: string[] = [];
    const dispatcher = new CallbackDispatcher({
      store,
      merchants: new Map([[7, merchant]]),
      callbacks: { timeoutMs: 200, withdrawalDelayMs: 0, retry: { initialDelayMs: 10, factor: 2, maxDelayMs: 100, maxAttempts: 5 } },
      now: () => now,
      random: cryptoRandom,
      log: (line) => lines.push(line),
    });
    cleanup.push(() => dispatcher.close());

    for (let round = 1; round <= 5; round++) {
      const posted = round <= 3 ? merchantSide.next() : undefined;
      dispatcher.wake();
      // Every round's claim happens on the dispatcher's timer (set for the lease's end, 1.2 s): let it fire.
      for (let i = 0; i < 600 && claims.length < round; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(claims).toHaveLength(round);
      if (posted) await posted;
      else expect(dispatcher.inFlight).toBe(0);
      for (let i = 0; i < 100 && dispatcher.inFlight > 0; i++) await tick();
      // The lease of the unrecorded attempt runs out: the delivery is due again.
      now += 10_000;
    }
    expect(merchantSide.posts()).toBe(3);
    expect(lines.filter((line) => line.includes('attempt not recorded (database is locked)'))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/given up after 3 unrecorded attempts/);
  });
});
