import { openSqlite } from '../platform/sqlite.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sealJson } from '../crypto/codec.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../crypto/keys.js';
import { createCallbackReceiver, type CallbackEvent, type CallbackHandlerOptions } from './callback-handler.js';
import { gate, ManualScheduler, settle } from '../core/manual-scheduler.js';
import { MemoryIdempotencyStore } from './memory-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { IdempotencyStore } from './store.js';

const privateKey = parseKey(generateMerchantKeyPair(1024).privatePem) as RsaPrivateKey;
const headers = { 'x-api-key': 'k-1' };
const dir = mkdtempSync(join(tmpdir(), 'wc-receiver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withdrawalText = (requestUUID: string) =>
  `{"type":3,"requestUUID":"${requestUUID}","trackingId":"wd-1","txid":"4e8a","callBackId":"cb-1","chain":"TRON","symbol":"USDT","toAddress":"TQn9","amount":0.10000000000000000001}`;
const body = (requestUUID: string) => Buffer.from(sealJson(withdrawalText(requestUUID), 'callback', privateKey));

function receiver(options: Partial<CallbackHandlerOptions> = {}) {
  const lines: string[] = [];
  const events: CallbackEvent[] = [];
  const core = createCallbackReceiver({
    apiKeys: ['k-1'],
    publicKey: privateKey.publicKey,
    store: new MemoryIdempotencyStore(),
    process: (event) => void events.push(event),
    log: (line) => lines.push(line),
    ...options,
  });
  return { core, lines, events };
}

/** The answer of a delivery as it arrives: undefined while the delivery is still waiting or processing. */
function watch<T>(answer: Promise<T>): () => T | undefined {
  let value: T | undefined;
  void answer.then((settled) => (value = settled));
  return () => value;
}

describe('callback receiver core', () => {
  it('hands process the exact payload, its text, the key and the requestUUID', async () => {
    const { core, events } = receiver();
    expect(await core.handle({ headers, body: body('r-1') })).toEqual({
      status: 200,
      body: { errCode: 0, message: '' },
      outcome: 'processed',
    });
    const [event] = events;
    expect(event).toMatchObject({ type: 3, key: 'withdrawal:4e8a', requestUUID: 'r-1', text: withdrawalText('r-1') });
    expect(String(event!.payload.amount)).toBe('0.10000000000000000001');
  });

  it('logs one line per delivery: processed, duplicate, rejected with its reason, unauthorized without the key', async () => {
    const { core, lines } = receiver();
    await core.handle({ headers, body: body('r-1') });
    await core.handle({ headers, body: body('r-2') });
    await core.handle({ headers, body: Buffer.from(`data=${body('r-3').toString()}`) });
    await core.handle({ headers: { 'X-Api-Key': 'secret-guess' }, body: body('r-4') });
    expect(lines).toEqual([
      'processed withdrawal:4e8a (type 3, requestUUID r-1)',
      'duplicate withdrawal:4e8a (type 3, requestUUID r-2)',
      expect.stringMatching(/^rejected: data-prefix: /),
      'unauthorized (unknown X-API-KEY)',
    ]);
  });

  it('answers a non-zero errCode 409 when a concurrent delivery is still processing after the wait', async () => {
    const scheduler = new ManualScheduler();
    const started = gate();
    const finish = gate();
    const { core } = receiver({
      scheduler,
      busyWaitMs: 50,
      process: () => {
        started.open();
        return finish.promise;
      },
    });
    const first = core.handle({ headers, body: body('r-1') });
    await started.promise;
    const second = watch(core.handle({ headers, body: body('r-2') }));
    await scheduler.advance(49);
    expect(second()).toBeUndefined();
    await scheduler.advance(1);
    expect(second()).toMatchObject({ status: 200, body: { errCode: 409 }, outcome: 'busy' });
    finish.open();
    expect((await first).body.errCode).toBe(0);
  });

  it('lets a waiting delivery process the event itself when the one in flight fails', async () => {
    const scheduler = new ManualScheduler();
    const fail = gate();
    let calls = 0;
    const { core } = receiver({
      scheduler,
      process: async () => {
        if (++calls === 1) {
          await fail.promise;
          throw new Error('first attempt fails');
        }
      },
    });
    const answers = watch(
      Promise.all([core.handle({ headers, body: body('r-1') }), core.handle({ headers, body: body('r-2') })]),
    );
    await settle();
    // The second delivery found the event busy and waits on the first.
    expect(calls).toBe(1);
    fail.open();
    // It takes over as soon as the first one releases its claim, with no time passing.
    await settle();
    expect(answers()?.map((a) => a.outcome)).toEqual(['failed', 'processed']);
    expect(calls).toBe(2);
  });

  it('waits on another process through the shared SQLite file, then acknowledges the duplicate', async () => {
    const path = join(dir, 'shared.sqlite');
    const scheduler = new ManualScheduler();
    const started = gate();
    const finish = gate();
    const stores = [openSqliteStore(path), openSqliteStore(path)] as const;
    const a = receiver({
      scheduler,
      store: stores[0],
      process: () => {
        started.open();
        return finish.promise;
      },
    });
    const b = receiver({ scheduler, store: stores[1] });
    const first = a.core.handle({ headers, body: body('r-1') });
    await started.promise;
    const second = watch(b.core.handle({ headers, body: body('r-2') }));
    // b re-reads the file every 20 ms while a processes: a second later it is still waiting.
    await scheduler.advance(1_000);
    expect(second()).toBeUndefined();
    finish.open();
    expect((await first).outcome).toBe('processed');
    await scheduler.advance(20);
    expect(second()?.outcome).toBe('duplicate');
    expect(b.events).toHaveLength(0);
    for (const store of stores) await store.close();
  });

  it('turns a store failure into HTTP 500 with a non-zero errCode, never a throw', async () => {
    const store = new MemoryIdempotencyStore();
    await store.close();
    const { core, lines } = receiver({ store });
    expect(await core.handle({ headers, body: body('r-1') })).toMatchObject({
      status: 500,
      body: { errCode: 500 },
      outcome: 'error',
    });
    expect(lines[0]).toMatch(/^error \(the idempotency store is closed\)$/);
  });

  it('refuses at start-up a key that cannot open callbacks, and an empty key list', () => {
    expect(() => receiver({ publicKey: privateKey })).toThrow(/decrypting it needs the public key/);
    expect(() => receiver({ apiKeys: [] })).toThrow(/at least one API key/);
    expect(() => receiver({ apiKeys: [{ key: 'k', notAfter: 'soon' }] })).toThrow(/notAfter is not a date-time/);
  });
});

/**
 * A store whose lease renewals never reach it: its holder stalls, as in a long GC pause or a network
 * partition. With `stall`, the first holder also stops between its claim and its transaction: it
 * opens `stall.entered` and goes on when `stall.until` resolves.
 */
function withoutRenewal(
  store: IdempotencyStore,
  stall?: { entered: () => void; until: Promise<void> },
): IdempotencyStore {
  let stalled = false;
  return {
    leaseMs: store.leaseMs,
    claim: (key, text) => store.claim(key, text),
    renew: async () => true,
    complete: (key, token) => store.complete(key, token),
    release: (key, token) => store.release(key, token),
    completeInTransaction: async (key, token, work) => {
      // The first holder stalls between its claim and its transaction.
      if (!stalled && stall) {
        stalled = true;
        stall.entered();
        await stall.until;
      }
      return store.completeInTransaction!(key, token, work);
    },
    processed: () => store.processed(),
    close: () => store.close(),
  };
}

describe('callback receiver claims under faults', () => {
  it('renews the claim while a slow process runs, so a redelivery after the lease waits and is acknowledged as a duplicate', async () => {
    const scheduler = new ManualScheduler();
    const started = gate();
    const finish = gate();
    let calls = 0;
    const store = new MemoryIdempotencyStore({ leaseMs: 30_000, now: () => scheduler.now() });
    const { core } = receiver({
      scheduler,
      store,
      process: async () => {
        if (++calls > 1) return;
        started.open();
        await finish.promise;
      },
    });
    const first = core.handle({ headers, body: body('r-1') });
    await started.promise;
    // Three leases pass while process runs; the receiver renews the claim every 10 s.
    await scheduler.advance(90_000);
    const second = watch(core.handle({ headers, body: body('r-2') }));
    await settle();
    expect(second()).toBeUndefined();
    finish.open();
    expect((await first).outcome).toBe('processed');
    await settle();
    expect(second()?.outcome).toBe('duplicate');
    expect(calls).toBe(1);
  });

  it('answers errCode 409 to a holder whose claim was taken over, so only the current holder acknowledges (fencing)', async () => {
    const scheduler = new ManualScheduler();
    const started = gate();
    const release = gate();
    const store = new MemoryIdempotencyStore({ leaseMs: 30_000, now: () => scheduler.now() });
    const texts: string[] = [];
    const { core } = receiver({
      scheduler,
      store: withoutRenewal(store),
      process: async (event) => {
        texts.push(event.requestUUID!);
        if (texts.length > 1) return;
        started.open();
        await release.promise;
      },
    });
    const slow = core.handle({ headers, body: body('r-1') });
    await started.promise;
    await scheduler.advance(30_000);
    expect(await core.handle({ headers, body: body('r-2') })).toMatchObject({
      body: { errCode: 0 },
      outcome: 'processed',
    });
    release.open();
    expect(await slow).toMatchObject({ status: 200, body: { errCode: 409 }, outcome: 'lost' });
    // Outside a transaction the stalled holder's effect already happened: at-least-once, never a false acknowledgement.
    expect(texts).toEqual(['r-1', 'r-2']);
    expect(await store.processed()).toEqual([withdrawalText('r-2')]);
  });

  it('in transactional mode runs the business write exactly once when the first holder stalls past its lease', async () => {
    const scheduler = new ManualScheduler();
    const entered = gate();
    const release = gate();
    const path = join(dir, 'fenced-tx.sqlite');
    const store = openSqliteStore(path, { leaseMs: 30_000, now: () => scheduler.now() });
    const ledger = openSqlite(path);
    ledger.exec('CREATE TABLE ledger (requestUUID TEXT NOT NULL)');
    ledger.close();
    const { core } = receiver({
      scheduler,
      store: withoutRenewal(store, { entered: entered.open, until: release.promise }),
      transactional: true,
      process: (event, tx) => {
        if (tx?.kind !== 'sqlite') throw new Error('expected the SQLite transaction');
        tx.db.prepare('INSERT INTO ledger (requestUUID) VALUES (?)').run(event.requestUUID);
      },
    });
    const stalled = core.handle({ headers, body: body('r-1') });
    await entered.promise;
    await scheduler.advance(30_000);
    expect((await core.handle({ headers, body: body('r-2') })).outcome).toBe('processed');
    release.open();
    expect(await stalled).toMatchObject({ body: { errCode: 409 }, outcome: 'lost' });
    const check = openSqlite(path);
    expect(check.prepare('SELECT requestUUID FROM ledger').all()).toEqual([{ requestUUID: 'r-2' }]);
    check.close();
    await store.close();
  });

  it('in transactional mode rolls the business write back when process throws, and the retry commits it once', async () => {
    const path = join(dir, 'rollback-tx.sqlite');
    const store = openSqliteStore(path);
    const db = openSqlite(path);
    db.exec('CREATE TABLE ledger (requestUUID TEXT NOT NULL)');
    let calls = 0;
    const { core } = receiver({
      store,
      transactional: true,
      process: (event, tx) => {
        if (tx?.kind !== 'sqlite') throw new Error('expected the SQLite transaction');
        tx.db.prepare('INSERT INTO ledger (requestUUID) VALUES (?)').run(event.requestUUID);
        if (++calls === 1) throw new Error('after the write');
      },
    });
    expect(await core.handle({ headers, body: body('r-1') })).toMatchObject({
      body: { errCode: 500 },
      outcome: 'failed',
    });
    expect((await core.handle({ headers, body: body('r-2') })).outcome).toBe('processed');
    expect((await core.handle({ headers, body: body('r-3') })).outcome).toBe('duplicate');
    expect(db.prepare('SELECT requestUUID FROM ledger').all()).toEqual([{ requestUUID: 'r-2' }]);
    db.close();
    await store.close();
  });

  it('refuses transactional mode with a store that cannot run a transaction', () => {
    const { completeInTransaction: _, ...plain } = withoutRenewal(new MemoryIdempotencyStore());
    expect(() => receiver({ store: plain as IdempotencyStore, transactional: true })).toThrow(
      /transactional mode needs a store with completeInTransaction/,
    );
  });
});

describe('callback receiver and hostile payloads', () => {
  it('answers 400, not 500, to JSON nested thousands of levels deep within the body limit', async () => {
    const { core, events } = receiver();
    const deep = `{"type":3,"requestUUID":"r-1","trackingId":"wd-1","txid":"4e8a","x":${'['.repeat(3000)}${']'.repeat(3000)}}`;
    const sealed = Buffer.from(sealJson(deep, 'callback', privateKey));
    expect(sealed.length).toBeLessThan(64 * 1024);
    const answer = await core.handle({ headers, body: sealed });
    expect(answer).toMatchObject({
      status: 400,
      body: { errCode: 400, message: expect.stringMatching(/^not-json: .*nested deeper than 512/) },
    });
    expect(events).toHaveLength(0);
  });

  it('refuses a trackingId sent as a long fraction (a number is not a string, however many digits)', async () => {
    const { core, events } = receiver();
    for (const number of ['1.00000000000000000000001', '0.10000000000000000000001']) {
      const text = withdrawalText('r-1').replace('"trackingId":"wd-1"', `"trackingId":${number}`);
      const answer = await core.handle({ headers, body: Buffer.from(sealJson(text, 'callback', privateKey)) });
      expect(answer).toMatchObject({
        status: 400,
        body: { message: expect.stringMatching(/invalid-payload: \/trackingId must be string/) },
      });
    }
    expect(events).toHaveLength(0);
  });

  it('refuses a business field sent as a fraction that a float would round to an integer', async () => {
    const { core } = receiver();
    const text = withdrawalText('r-1').replace('"trackingId"', '"business":1.0000000000000000000001,"trackingId"');
    const answer = await core.handle({ headers, body: Buffer.from(sealJson(text, 'callback', privateKey)) });
    expect(answer).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/\/business must be integer/) },
    });
  });
});
