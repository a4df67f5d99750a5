import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { openJson } from '../crypto/codec.js';
import { LosslessNumber } from '../core/exact-json.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import { ManualScheduler, settle } from '../core/manual-scheduler.js';
import type { EmulatorMerchant } from './config.js';
import { cryptoRandom } from './emulator-context.js';
import { CallbackDispatcher, judgeAttempt, type DispatcherOptions } from './dispatcher.js';
import { sealCallback } from '../wire/callback-delivery.js';
import { SealPool, startSealWorker } from './seal-pool.js';
import type { AttemptRecord, NewEvent } from './outbox.js';
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

/** A receiver whose every request is handled by `answer`; it counts requests and the ones still open. */
async function receiver(
  answer: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ url: string; requests: () => number; open: () => number; closed: () => Promise<void>; bodies: string[] }> {
  let requests = 0;
  let open = 0;
  const bodies: string[] = [];
  let onIdle: (() => void) | undefined;
  const server = createServer((req, res) => {
    const n = ++requests;
    open++;
    res.on('close', () => {
      open--;
      if (open === 0) onIdle?.();
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      answer(req, res, n);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    requests: () => requests,
    open: () => open,
    closed: () => new Promise<void>((resolve) => (open === 0 ? resolve() : (onIdle = resolve))),
    bodies,
  };
}

const merchant = {
  userId: 7,
  apiKey: 'k',
  keyPair: { privateKey, publicKey: privateKey.publicKey },
  profile: DEFAULT_PROFILE,
} as unknown as EmulatorMerchant;
const ACK = '{"errCode":0,"message":""}';

function event(trackingId: string, now: number, fields: Partial<NewEvent> = {}): NewEvent {
  return {
    trackingId,
    merchant: 7,
    type: 4,
    payload: `{"type":4,"trackingId":"${trackingId}"}`,
    deliveries: 1,
    concurrent: false,
    fixedUuid: 'u',
    createdAt: now,
    dueAt: now,
    ...fields,
  };
}

/** A store (in memory, or a file when `path` is given) with merchant 7 sending to `url`. */
function storeFor(url: string, path = ':memory:'): EmulatorStore {
  const store = openEmulatorStore(path);
  cleanup.push(() => store.close());
  store.seedMerchant(7, { balance: 0n, costPerTx: 1n }, url, []);
  return store;
}

function dispatcherFor(
  store: EmulatorStore,
  callbacks: Partial<DispatcherOptions['callbacks']> = {},
  extra: Partial<DispatcherOptions> = {},
): { dispatcher: CallbackDispatcher; lines: string[] } {
  const lines: string[] = [];
  const dispatcher = new CallbackDispatcher({
    store,
    merchants: new Map([[7, merchant]]),
    callbacks: {
      timeoutMs: 400,
      withdrawalDelayMs: 0,
      retry: { initialDelayMs: 10, factor: 2, maxDelayMs: 100, maxAttempts: 3 },
      ...callbacks,
    },
    now: Date.now,
    random: cryptoRandom,
    log: (line) => lines.push(line),
    ...extra,
  });
  cleanup.push(() => dispatcher.close());
  return { dispatcher, lines };
}

/** Polls `probe` (bounded: 10 s) until it holds. */
async function until(probe: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The trackingId a sealed callback body carries (the receiver's view). */
function trackingIdOf(body: string): string {
  return (openJson(body, 'callback', privateKey.publicKey).value as Record<string, unknown>).trackingId as string;
}

describe('callback dispatcher: every attempt has a deadline that covers the whole exchange', () => {
  it('cuts a receiver that never answers at the deadline, records it as timed out, and retries', async () => {
    const side = await receiver((_req, res, n) => (n === 1 ? undefined : res.end(ACK)));
    const store = storeFor(side.url);
    store.insertEvent(event('hang-1', Date.now(), { retryDelaysMs: [10] }));
    const { dispatcher } = dispatcherFor(store);
    dispatcher.wake();
    await until(() => store.delivery(1, 0)?.state === 'acknowledged', 'the retry is acknowledged');
    const rows = store.attemptRows('hang-1');
    expect(rows.map((row) => [row.phase, row.verdict, row.status])).toEqual([
      ['done', 'failed', 0],
      ['done', 'acknowledged', 200],
    ]);
    expect(rows[0]!.error).toMatch(/^timed out: no answer within the callback timeout \(400 ms\)$/);
    expect(side.requests()).toBe(2);
    expect(side.open()).toBe(0);
  });

  it('cuts an endless body at the deadline: the headers arrived, the answer did not', async () => {
    const side = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"errCode":0,"message":"');
      const drip = setInterval(() => res.write('x'.repeat(1024)), 5);
      res.on('close', () => clearInterval(drip));
    });
    const store = storeFor(side.url);
    store.insertEvent(event('endless-1', Date.now(), { retryDelaysMs: [] }));
    const { dispatcher } = dispatcherFor(store);
    dispatcher.wake();
    await until(() => store.delivery(1, 0)?.state === 'exhausted', 'the one attempt is given up');
    const [row] = store.attemptRows('endless-1');
    expect(row).toMatchObject({ phase: 'done', verdict: 'failed', status: 0 });
    expect(row!.error).toMatch(/^timed out: HTTP 200 arrived, but its body did not end within the callback timeout/);
    await side.closed();
    expect(side.requests()).toBe(1);
  });

  it('keeps its deadline through forced garbage collection', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const side = await receiver(() => undefined);
    const store = storeFor(side.url);
    store.insertEvent(event('gc-1', Date.now(), { retryDelaysMs: [] }));
    const { dispatcher } = dispatcherFor(store, { timeoutMs: 300 });
    dispatcher.wake();
    await until(() => side.requests() === 1, 'the request arrives');
    // Collect hard and often while the attempt waits for its deadline; a lost deadline leaves the request open.
    const collector = setInterval(() => gc(), 10);
    try {
      await until(() => side.open() === 0, 'the receiver sees the request closed', 300 + 1_500);
    } finally {
      clearInterval(collector);
    }
    await until(() => store.delivery(1, 0)?.state === 'exhausted', 'the attempt is recorded');
    expect(store.attemptRows('gc-1')[0]!.error).toMatch(/^timed out/);
  });
});

describe('callback dispatcher under a backlog', () => {
  it(
    'sends each of 1,000 concurrent deliveries once to a receiver that acknowledges after 1 s',
    { timeout: 30_000 },
    async () => {
      const side = await receiver((_req, res) => {
        setTimeout(() => res.end(ACK), 1_000);
      });
      const store = storeFor(side.url);
      // 1,000 deliveries over 128 connections take 8 rounds of the receiver's second: a request left waiting for a socket (or a
      // claim whose lease ran out meanwhile) would run out of this 3 s timeout or be sent twice.
      store.insertEvent(event('storm-1', Date.now(), { deliveries: 1_000, concurrent: true }));
      const { dispatcher } = dispatcherFor(store, { timeoutMs: 3_000 });
      dispatcher.wake();
      await until(() => store.unfinishedDeliveries() === 0, 'every delivery is finished', 25_000);
      const rows = store.attemptRows('storm-1');
      const tally = (list: string[]) =>
        [...list.reduce((counts, x) => counts.set(x, (counts.get(x) ?? 0) + 1), new Map<string, number>())]
          .map(([k, n]) => `${k} x${n}`)
          .join(', ');
      expect(side.requests(), tally(rows.map((row) => `${row.phase}/${row.verdict}/${row.error ?? ''}`))).toBe(1_000);
      expect(rows).toHaveLength(1_000);
      expect(rows.every((row) => row.phase === 'done' && row.verdict === 'acknowledged' && row.attempt === 1)).toBe(
        true,
      );
      expect(
        store
          .attempts('storm-1')!
          .map((a) => a.requestUUID)
          .filter((u, i, all) => all.indexOf(u) === i),
      ).toHaveLength(1_000);
      for (let idx = 0; idx < 1_000; idx += 97)
        expect(store.delivery(1, idx)).toEqual({ state: 'acknowledged', attempts: 1, acked: true });
    },
  );
});

describe('callback dispatcher: shutdown and restart', () => {
  it('cuts an attempt under way at close, records it honestly, and sends the delivery again after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-dispatch-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'emulator.sqlite');
    let hang = true;
    const side = await receiver((_req, res) => (hang ? undefined : res.end(ACK)));
    const first = storeFor(side.url, path);
    first.insertEvent(event('cut-1', Date.now(), { retryDelaysMs: [10, 10] }));
    const { dispatcher } = dispatcherFor(first, { timeoutMs: 60_000 });
    dispatcher.wake();
    await until(() => side.requests() === 1, 'the first attempt arrives');
    await dispatcher.close();
    await side.closed();
    expect(first.delivery(1, 0)).toMatchObject({ state: 'pending', attempts: 1 });
    expect(first.attemptRows('cut-1')).toEqual([
      expect.objectContaining({ phase: 'done', verdict: 'failed', error: 'cut: the emulator shut down' }),
    ]);
    first.close();

    hang = false;
    const second = storeFor(side.url, path);
    dispatcherFor(second).dispatcher.wake();
    await until(
      () => second.delivery(1, 0)?.state === 'acknowledged',
      'the delivery is acknowledged after the restart',
    );
    expect(side.requests()).toBe(2);
    expect(second.attemptRows('cut-1').map((row) => row.verdict)).toEqual(['failed', 'acknowledged']);
  });

  it('after a restart mid-retry sends the pending delivery again and never the acknowledged one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-dispatch-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'emulator.sqlite');
    const seen: string[] = [];
    let rejectRetrying = true;
    const side = await receiver((req, res) => {
      const id = trackingIdOf(side.bodies.at(-1)!);
      seen.push(id);
      res.end(id === 'retrying' && rejectRetrying ? '{"errCode":1,"message":"later"}' : ACK);
    });
    const first = storeFor(side.url, path);
    first.insertEvent(event('acked', Date.now()));
    // The retry is due long after the stop.
    first.insertEvent(event('retrying', Date.now(), { retryDelaysMs: [60_000] }));
    const { dispatcher } = dispatcherFor(first);
    dispatcher.wake();
    await until(
      () =>
        first.unfinishedDeliveries() === 1 &&
        first.attemptRows('retrying').length === 1 &&
        first.attemptRows('retrying')[0]!.phase === 'done',
      'one acknowledged, one rejected',
    );
    await dispatcher.close();
    first.close();

    // Start again with the clock past the retry's due time.
    rejectRetrying = false;
    const second = storeFor(side.url, path);
    dispatcherFor(second, {}, { now: () => Date.now() + 60_000 }).dispatcher.wake();
    await until(() => second.unfinishedDeliveries() === 0, 'the pending delivery is finished');
    expect(seen.sort()).toEqual(['acked', 'retrying', 'retrying']);
    expect(second.attemptRows('acked').map((row) => row.verdict)).toEqual(['acknowledged']);
    expect(second.attemptRows('retrying').map((row) => row.verdict)).toEqual(['rejected', 'acknowledged']);
  });
});

describe('callback dispatcher when the store cannot take an outcome', () => {
  it('holds the delivery (never sent again meanwhile) and records the outcome once the store works again', async () => {
    const merchantSide = await acknowledgingMerchant();
    const store: EmulatorStore = openEmulatorStore(':memory:');
    cleanup.push(() => store.close());
    const scheduler = new ManualScheduler(1_000_000);
    const now = () => scheduler.now();
    store.seedMerchant(7, { balance: 0n, costPerTx: 1n }, merchantSide.url, []);
    store.insertEvent(event('t-1', now()));
    // Outcomes cannot be written, as with a database locked by another process (SQLITE_BUSY); counting a send still works.
    const writeOutbox = store.writeOutbox;
    let locked = true;
    Object.defineProperty(store, 'writeOutbox', {
      value: (...args: Parameters<typeof writeOutbox>) => {
        if (locked && args[0].settled.length > 0) throw new Error('database is locked');
        return writeOutbox(...args);
      },
    });
    const lines: string[] = [];
    const dispatcher = new CallbackDispatcher({
      store,
      merchants: new Map([[7, merchant]]),
      callbacks: {
        timeoutMs: 200,
        withdrawalDelayMs: 0,
        retry: { initialDelayMs: 10, factor: 2, maxDelayMs: 100, maxAttempts: 5 },
      },
      now,
      scheduler,
      random: cryptoRandom,
      log: (line) => lines.push(line),
    });
    cleanup.push(() => dispatcher.close());
    const posted = merchantSide.next();
    dispatcher.wake();
    await scheduler.advance(0);
    await posted;
    await until(
      () => lines.some((line) => line.includes('outcome not recorded yet (database is locked)')),
      'the failed write is logged',
    );
    // Long past the claim's lease: the delivery is still held by this process, not sent again.
    for (let i = 0; i < 5; i++) await scheduler.advance(2_000);
    expect(merchantSide.posts()).toBe(1);
    expect(dispatcher.inFlight).toBe(1);
    locked = false;
    await scheduler.advance(1_000);
    await until(() => store.delivery(1, 0)?.state === 'acknowledged', 'the outcome is written');
    await scheduler.advance(5_000);
    expect(merchantSide.posts()).toBe(1);
    expect(dispatcher.inFlight).toBe(0);
    expect(store.attempts('t-1')!.map((a) => a.verdict)).toEqual(['acknowledged']);
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
    expect(note === undefined ? false : /^counted as acknowledged, ambiguous under U-CB-RESPONSE: /.test(note)).toBe(
      noted,
    );
  });

  it('records no answer as failed, and the answer as written otherwise', () => {
    expect(judgeAttempt(at, 'u', { status: 0, body: Buffer.alloc(0), error: 'connect ECONNREFUSED' }).attempt).toEqual({
      at,
      requestUUID: 'u',
      status: 0,
      answer: null,
      verdict: 'failed',
      error: 'connect ECONNREFUSED',
    });
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('OK') }).attempt.answer).toBe('OK');
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('') }).attempt.answer).toBeNull();
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('null') }).attempt.answer).toBeNull();
    expect(judgeAttempt(at, 'u', { status: 200, body: Buffer.from('{"errCode":0.0}') }).attempt.answer).toEqual({
      errCode: new LosslessNumber('0.0'),
    });
  });
});

describe('callback dispatcher when a sealing thread dies', () => {
  it('records the attempt as not sent (uncounted), keeps the delivery pending and sends it once a new thread seals it', async () => {
    const side = await receiver((_req, res) => res.end(ACK));
    const store = storeFor(side.url);
    store.insertEvent(event('crash-1', Date.now()));
    let started = 0;
    // The first thread exits on its first job, as a crashed one would; the pool starts a fresh one.
    const sealer = new SealPool({
      size: 1,
      startWorker: () =>
        ++started === 1
          ? new Worker('require("node:worker_threads").parentPort.on("message", () => process.exit(7));', {
              eval: true,
            })
          : startSealWorker(),
    });
    cleanup.push(() => sealer.close());
    const { dispatcher, lines } = dispatcherFor(
      store,
      { retry: { initialDelayMs: 10, factor: 2, maxDelayMs: 100, maxAttempts: 1 } },
      { sealer },
    );
    dispatcher.wake();
    await until(
      () => store.delivery(1, 0)?.state === 'acknowledged',
      'the delivery is acknowledged after the thread died',
    );
    const rows = store.attemptRows('crash-1');
    expect(rows.map((row) => row.phase)).toEqual(['not-sent', 'done']);
    expect(rows[1]!.verdict).toBe('acknowledged');
    expect(rows[0]!.error).toBe('not sent: the sealing thread stopped (exit code 7)');
    // maxAttempts 1: the lost attempt did not count, so the one that went out was allowed.
    expect(store.attempts('crash-1')!.map((a) => a.verdict)).toEqual(['acknowledged']);
    expect(side.requests()).toBe(1);
    expect(trackingIdOf(side.bodies[0]!)).toBe('crash-1');
    expect(
      lines.some((line) =>
        line.includes('not sent: the sealing thread stopped (exit code 7) (not counted as an attempt)'),
      ),
    ).toBe(true);
    expect(started).toBe(2);
  });
});

describe('callback dispatcher: claims in chunks while the sealer is busy', () => {
  it('waits until half the sealer queue is free before claiming again, then claims that many at once, and sends every delivery once', async () => {
    const side = await acknowledgingMerchant();
    const store = storeFor(side.url);
    store.insertEvent(event('chunks-1', Date.now(), { deliveries: 24, concurrent: true }));
    // A sealer of 8 places whose seals end when the test says: the dispatcher sees only `free` and `onFree`.
    const capacity = 8;
    const jobs: Array<() => void> = [];
    let sealed = 0;
    const listeners: Array<() => void> = [];
    const sealer = {
      get free() {
        return capacity - jobs.length;
      },
      onFree: (listener: () => void) => listeners.push(listener),
      seal: (text: string, key: Parameters<typeof sealCallback>[1], profile: Parameters<typeof sealCallback>[2]) =>
        new Promise<string>((resolve) => {
          sealed++;
          const job = () => resolve(sealCallback(text, key, profile));
          jobs.push(job);
        }),
      close: async () => {},
    };
    const end = (n: number) => {
      for (const job of jobs.splice(0, n)) job();
      for (const listener of listeners) listener();
    };
    const { dispatcher } = dispatcherFor(store, {}, { sealer });
    dispatcher.wake();
    await until(() => sealed === capacity, 'the sealer queue is full');
    // Each settled attempt wakes the dispatcher, which claims then or not at all until the next seal
    // ends: once the outcome is written, what it did about the free room is done.
    const written = () => store.attemptRows('chunks-1').filter((row) => row.phase === 'done').length;
    // One seal ends: one place is free, less than half the queue, so nothing is claimed.
    end(1);
    await until(() => written() === 1, 'the sealed delivery is sent and its outcome written');
    expect(sealed).toBe(capacity);
    // Three more: half the queue is free, and four deliveries are claimed at once.
    end(3);
    await until(() => written() === 4 && sealed === capacity + 4, 'three more written, four more claimed');
    expect(sealed).toBe(capacity + 4);
    // Ending the rest as they come sends all 24, each once.
    await until(() => {
      end(jobs.length);
      return store.attemptRows('chunks-1').filter((row) => row.phase === 'done').length === 24;
    }, 'all 24 settled');
    expect(side.posts()).toBe(24);
    expect(sealed).toBe(24);
    expect(store.attempts('chunks-1')!.every((attempt) => attempt.verdict === 'acknowledged')).toBe(true);
  });
});

describe('callback dispatcher: outbox writes under load share a window', () => {
  /** A store whose outbox writes are recorded (what each carried, and when on the test's clock). */
  function recordedStore(
    url: string,
    now: () => number,
  ): { store: EmulatorStore; writes: Array<{ at: number; sends: number; settled: number }> } {
    const store = storeFor(url);
    const writes: Array<{ at: number; sends: number; settled: number }> = [];
    const writeOutbox = store.writeOutbox;
    Object.defineProperty(store, 'writeOutbox', {
      value: (...args: Parameters<typeof writeOutbox>) => {
        writes.push({ at: now(), sends: args[0].sends.length, settled: args[0].settled.length });
        return writeOutbox(...args);
      },
    });
    return { store, writes };
  }
  /** A sealer with room for everything that seals at once (the test is about the writes, not the sealing threads). */
  const instantSealer = {
    free: 1_000,
    onFree: () => undefined,
    seal: async (text: string, key: Parameters<typeof sealCallback>[1], profile: Parameters<typeof sealCallback>[2]) =>
      sealCallback(text, key, profile),
    close: async () => {},
  };

  /** One event of `deliveries` to an acknowledging merchant, sent by a dispatcher on a hand-moved clock that stands still until the test moves it. */
  async function heldClock(trackingId: string, deliveries: number, concurrent: boolean) {
    const side = await acknowledgingMerchant();
    const scheduler = new ManualScheduler(1_000_000);
    const now = () => scheduler.now();
    const { store, writes } = recordedStore(side.url, now);
    store.insertEvent(event(trackingId, now(), { deliveries, concurrent }));
    // Counts the answers the dispatcher has judged: each outcome is queued for a write as it is judged.
    let judged = 0;
    const variant = {
      acknowledgement: (verdict: AttemptRecord['verdict']) => {
        judged++;
        return verdict;
      },
    };
    const { dispatcher } = dispatcherFor(store, {}, { now, scheduler, sealer: instantSealer, variant });
    dispatcher.wake();
    return { side, scheduler, store, writes, dispatcher, judged: () => judged };
  }

  it('with 8 or more attempts under way, writes at most once per 4 ms: what arrives meanwhile waits and shares the next transaction', async () => {
    const { side, scheduler, store, writes, dispatcher, judged } = await heldClock('window-1', 12, true);
    await scheduler.advance(0);
    await until(() => writes.length === 1, 'the first write (it follows at once)');
    // The clock stands still: sends counted in the first write go out and are answered, but their
    // outcomes (and any later sends) wait for the window.
    await until(() => judged() === writes[0]!.sends, 'the counted sends are answered and judged');
    await settle();
    expect(writes).toHaveLength(1);
    expect(dispatcher.inFlight).toBe(12);
    // Each move of the clock lets the next write out; the loop waits for the loopback exchanges it starts.
    for (const end = Date.now() + 10_000; store.unfinishedDeliveries() > 0 && Date.now() < end;) {
      await scheduler.advance(4);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Every send and outcome of the 12 written, each write 4 ms after the one before it.
    expect(writes.reduce((n, w) => n + w.sends, 0)).toBe(12);
    expect(writes.reduce((n, w) => n + w.settled, 0)).toBe(12);
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(4);
    expect(side.posts()).toBe(12);
    expect(store.attempts('window-1')!.every((attempt) => attempt.verdict === 'acknowledged')).toBe(true);
  });

  it('with few attempts under way, writes in the next turn: a delivery is sent, answered and recorded while the clock stands still', async () => {
    const { side, scheduler, store, writes } = await heldClock('alone-1', 3, false);
    // Each delivery of the sequence waits for the one before it; only the ticks that claim them need the clock.
    for (let i = 0; i < 3; i++) {
      await scheduler.advance(0);
      await until(() => store.attempts('alone-1')!.length === i + 1, `delivery ${i + 1} recorded`);
    }
    expect(side.posts()).toBe(3);
    expect(writes.every((w) => w.at === 1_000_000)).toBe(true);
  });
});

describe("callback dispatcher: its own pool's spare sealing thread", () => {
  it.runIf(process.platform === 'linux')(
    'starts the spare when a storm fills the sealing queue, and sends every delivery once',
    { timeout: 30_000 },
    async () => {
      // 2048-bit seals take long enough that the claims fill the queue before it drains.
      const slowKey = parseKey(generateMerchantKeyPair(2048).privatePem) as RsaPrivateKey;
      const side = await acknowledgingMerchant();
      const store = storeFor(side.url);
      store.insertEvent(event('spare-1', Date.now(), { deliveries: 300, concurrent: true }));
      // A deadline far beyond any load: a slow machine must not turn an answer into a timeout and a retry.
      const { dispatcher } = dispatcherFor(
        store,
        { timeoutMs: 20_000 },
        {
          merchants: new Map([
            [7, { ...merchant, keyPair: { privateKey: slowKey, publicKey: slowKey.publicKey } } as EmulatorMerchant],
          ]),
        },
      );
      await dispatcher.ready();
      dispatcher.wake();
      await until(() => store.unfinishedDeliveries() === 0, 'every delivery is finished', 25_000);
      // Started by the storm; loading a thread from the TypeScript sources may outlast the storm itself.
      await until(
        () => (dispatcher.sealer as SealPool).spareThreadId !== undefined,
        'the spare thread started and lowered its priority',
      );
      expect(side.posts()).toBe(300);
      expect(store.attempts('spare-1')!.every((attempt) => attempt.verdict === 'acknowledged')).toBe(true);
    },
  );
});
