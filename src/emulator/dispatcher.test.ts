import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import { ManualScheduler, settle } from '../core/manual-scheduler.js';
import type { EmulatorMerchant } from './config.js';
import { cryptoRandom } from './context.js';
import { CallbackDispatcher, judgeAttempt } from './dispatcher.js';
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
    // The dispatcher's clock and timer: time moves only when the test moves it.
    const scheduler = new ManualScheduler(1_000_000);
    const now = () => scheduler.now();
    const merchant = { userId: 7, apiKey: 'k', keyPair: { privateKey, publicKey: privateKey.publicKey }, profile: DEFAULT_PROFILE } as unknown as EmulatorMerchant;
    store.seedMerchant(7, { balance: 0n, costPerTx: 1n }, merchantSide.url, []);
    store.insertEvent({ trackingId: 't-1', merchant: 7, type: 4, payload: '{"type":4,"trackingId":"t-1"}', deliveries: 1, concurrent: false, fixedUuid: 'u', createdAt: now(), dueAt: now() });
    // Every write of an attempt fails, as with a database locked by another process (SQLITE_BUSY).
    Object.defineProperty(store, 'recordAttempt', { value: () => { throw new Error('database is locked'); } });
    // Each claim, and how many sends were in flight right after it (the dispatcher starts them in the same tick).
    const claims: number[] = [];
    const sending: number[] = [];
    const claimDue = store.claimDue;
    Object.defineProperty(store, 'claimDue', { value: (...args: Parameters<typeof claimDue>) => {
      const due = claimDue(...args);
      claims.push(due.length);
      queueMicrotask(() => sending.push(dispatcher.inFlight));
      return due;
    } });
    const lines: string[] = [];
    let logged = (): void => undefined;
    const dispatcher = new CallbackDispatcher({
      store,
      merchants: new Map([[7, merchant]]),
      callbacks: { timeoutMs: 200, withdrawalDelayMs: 0, retry: { initialDelayMs: 10, factor: 2, maxDelayMs: 100, maxAttempts: 5 } },
      now,
      scheduler,
      random: cryptoRandom,
      log: (line) => {
        lines.push(line);
        logged();
      },
    });
    cleanup.push(() => dispatcher.close());

    // Each claim leases the delivery for the send's timeout and a second (1.2 s): an attempt that
    // could not be recorded is due again when that lease ends, and not before.
    const lease = 200 + 1_000;
    for (let round = 1; round <= 5; round++) {
      // Rounds 1 to 3 send: the attempt goes out, its answer comes back, recording it fails and that is logged.
      const posted = round <= 3 ? merchantSide.next() : undefined;
      const recorded = round <= 3 ? new Promise<void>((resolve) => (logged = resolve)) : undefined;
      if (round === 1) {
        dispatcher.wake();
        await scheduler.advance(0);
      } else {
        await scheduler.advance(lease - 1);
        expect(claims).toHaveLength(round - 1);
        await scheduler.advance(1);
      }
      expect(claims).toEqual(Array.from({ length: round }, () => 1));
      await posted;
      await recorded;
      await settle();
      expect(dispatcher.inFlight).toBe(0);
    }
    expect(sending).toEqual([1, 1, 1, 0, 0]);
    expect(merchantSide.posts()).toBe(3);
    expect(lines.filter((line) => line.includes('attempt not recorded (database is locked)'))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/given up after 3 unrecorded attempts/);
  });
});

describe('judging an attempt (CB-ERRCODE; the emulator counts an ambiguous answer, U-CB-RESPONSE)', () => {
  const at = '2026-11-26T00:00:00.000Z';
  it.each<[string, number, string, 'acknowledged' | 'rejected', boolean]>([
    ['the plain form', 200, '{"errCode":0,"message":""}', 'acknowledged', false],
    ['0 written 0.0', 200, '{"errCode":0.0}', 'acknowledged', true],
    ['0 written -0', 200, '{"errCode":-0}', 'acknowledged', true],
    ['errCode 0 with HTTP 500', 500, '{"errCode":0}', 'acknowledged', true],
    ['errCode the string "0"', 200, '{"errCode":"0"}', 'rejected', false],
    ['code instead of errCode', 200, '{"code":0}', 'rejected', false],
    ['a text body', 200, 'OK', 'rejected', false],
    ['an empty body', 200, '', 'rejected', false],
    ['a JSON array', 200, '[{"errCode":0}]', 'rejected', false],
    ['errCode 1', 200, '{"errCode":1}', 'rejected', false],
  ])('%s: HTTP %i %s is %s', (_name, status, body, verdict, noted) => {
    const { attempt, note } = judgeAttempt(at, 'u-1', { status, body: Buffer.from(body) });
    expect(attempt.verdict).toBe(verdict);
    expect(attempt.status).toBe(status);
    expect(note === undefined ? false : /^counted as acknowledged, ambiguous under U-CB-RESPONSE: /.test(note)).toBe(noted);
  });

  it('records no answer as failed, and the answer as written otherwise', () => {
    expect(judgeAttempt(at, 'u', { status: 0, body: Buffer.alloc(0), error: 'connect ECONNREFUSED' }).attempt).toEqual({ at, requestUUID: 'u', status: 0, answer: null, verdict: 'failed', error: 'connect ECONNREFUSED' });
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('OK') }).attempt.answer).toBe('OK');
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('') }).attempt.answer).toBeNull();
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('null') }).attempt.answer).toBeNull();
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('{"errCode":0.0}') }).attempt.answer).toEqual({ errCode: new LosslessNumber('0.0') });
  });
});
