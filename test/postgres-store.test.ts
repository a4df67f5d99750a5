import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackEvent } from '../src/merchant/callback-handler.js';
import { openStore } from '../src/merchant/open-store.js';
import { openPostgresStore, type PostgresIdempotencyStore } from '../src/merchant/postgres-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import type { StoreTransaction } from '../src/merchant/store.js';
import { deliver, deposit, makeKeyPair, probe, redelivery, seal, withdrawal } from './support/merchant.js';
import { startPostgres, type PostgresServer } from './support/postgres.js';
import { until } from './support/until.js';
import { claimAfterLease, storeContract, tokenOf } from './support/store-contract.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => server?.stop());

let tables = 0;
const opened: PostgresIdempotencyStore[] = [];
const table = () => `t_${process.pid}_${tables++}`;
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
});
function open(options: { leaseMs?: number; table?: string } = {}): PostgresIdempotencyStore {
  const store = openPostgresStore(server.url, {
    table: options.table ?? table(),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  opened.push(store);
  return store;
}

describe('PostgreSQL idempotency store on a real server', () => {
  storeContract((options) => open(options));

  it('gives exactly one claim to 60 concurrent claims of one key from three instances, and one token each never repeats', async () => {
    const name = table();
    const instances = [open({ table: name }), open({ table: name }), open({ table: name })];
    await Promise.all(instances.map((store) => store.ready()));
    const claims = await Promise.all(Array.from({ length: 60 }, (_, i) => instances[i % 3]!.claim('k', `d-${i}`)));
    expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
    expect(claims.filter((claim) => claim.state === 'busy')).toHaveLength(59);
    const tokens = await Promise.all(
      Array.from({ length: 30 }, (_, i) => instances[i % 3]!.claim(`other-${i}`, 'x').then(tokenOf)),
    );
    expect(new Set(tokens).size).toBe(30);
  });

  it('reads lease ages from the server clock: an instance whose own clock runs an hour ahead cannot take a live claim over', async () => {
    const name = table();
    const honest = open({ table: name });
    const token = tokenOf(await honest.claim('k', 'first'));
    const dateNow = Date.now;
    Date.now = () => dateNow() + 3_600_000;
    try {
      expect(await open({ table: name }).claim('k', 'second')).toEqual({ state: 'busy' });
    } finally {
      Date.now = dateNow;
    }
    expect(await honest.complete('k', token)).toBe(true);
  });

  it('commits the business write with the done mark, rolls both back on a throw, and refuses a stale token', async () => {
    const name = table();
    const store = open({ table: name });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(`CREATE TABLE ${name}_ledger (key text PRIMARY KEY, amount numeric NOT NULL)`);
      const credit = (key: string) => async (tx: StoreTransaction) => {
        if (tx.kind !== 'postgres') throw new Error('expected the PostgreSQL transaction');
        await tx.client.query(`INSERT INTO ${name}_ledger (key, amount) VALUES ($1, 12345678901234567890.123)`, [key]);
      };
      const token = tokenOf(await store.claim('k', 'credit'));
      await expect(
        store.completeInTransaction('k', token, async (tx) => {
          await credit('k')(tx);
          throw new Error('after the write');
        }),
      ).rejects.toThrow('after the write');
      expect((await client.query(`SELECT count(*)::int AS n FROM ${name}_ledger`)).rows[0]).toEqual({ n: 0 });
      expect(await store.completeInTransaction('k', token + 1_000, credit('k'))).toEqual({ state: 'lost' });
      expect(await store.completeInTransaction('k', token, credit('k'))).toEqual({ state: 'done', value: undefined });
      expect((await client.query(`SELECT amount::text FROM ${name}_ledger`)).rows).toEqual([
        { amount: '12345678901234567890.123' },
      ]);
      expect(await store.processed()).toEqual(['credit']);
    } finally {
      await client.end();
    }
  });

  it('lets a takeover in while a transactional completion works, and the late holder finds its token gone and rolls back', async () => {
    const name = table();
    // The transaction may stay idle longer than the lease here, so the takeover comes first.
    const store = openPostgresStore(server.url, { table: name, leaseMs: 100, transactionIdleMs: 30_000 });
    opened.push(store);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(`CREATE TABLE ${name}_ledger (who text NOT NULL)`);
      const slow = tokenOf(await store.claim('k', 'slow'));
      let fresh = 0;
      const outcome = await store.completeInTransaction('k', slow, async (tx) => {
        if (tx.kind !== 'postgres') throw new Error('expected the PostgreSQL transaction');
        await tx.client.query(`INSERT INTO ${name}_ledger VALUES ('slow')`);
        // No lock is held while the work runs: the lease runs out and another delivery takes over.
        fresh = tokenOf(await claimAfterLease(store, 'k', 'fresh'));
      });
      expect(outcome).toEqual({ state: 'lost' });
      expect(fresh).toBeGreaterThan(slow);
      expect(
        await store.completeInTransaction('k', fresh, async (tx) => {
          if (tx.kind === 'postgres') await tx.client.query(`INSERT INTO ${name}_ledger VALUES ('fresh')`);
        }),
      ).toEqual({ state: 'done', value: undefined });
      expect((await client.query(`SELECT who FROM ${name}_ledger`)).rows).toEqual([{ who: 'fresh' }]);
      expect(await store.processed()).toEqual(['fresh']);
    } finally {
      await client.end();
    }
  });

  it('bounds the wait for a row another instance locked: a claim answers busy, then takes the event once the lock is gone', async () => {
    const name = table();
    const store = openPostgresStore(server.url, { table: name, leaseMs: 100, lockTimeoutMs: 200 });
    opened.push(store);
    tokenOf(await store.claim('k', 'stalled'));
    // A stalled holder between its done mark and its commit: the row is locked, the lease expired.
    const holder = new pg.Client({ connectionString: server.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${name} WHERE key = 'k' FOR UPDATE`);
      // Leases are aged on the server's clock: wait until it shows this one over.
      const over = `SELECT clock_timestamp() - claimed_at > interval '100 milliseconds' AS over FROM ${name} WHERE key = 'k'`;
      await until(async () => (await holder.query<{ over: boolean }>(over)).rows[0]!.over);
      const other = store.claim('other', 'unrelated');
      expect(await store.claim('k', 'takeover')).toEqual({ state: 'busy' });
      expect(await other).toMatchObject({ state: 'claimed' });
      await holder.query('ROLLBACK');
      expect(await store.claim('k', 'takeover')).toMatchObject({ state: 'claimed' });
    } finally {
      await holder.end();
    }
  });

  it('has the server end a business transaction left idle past transactionIdleMs (a stopped holder), which then commits nothing', async () => {
    const name = table();
    const store = openPostgresStore(server.url, { table: name, transactionIdleMs: 200 });
    opened.push(store);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(`CREATE TABLE ${name}_ledger (who text NOT NULL)`);
      const token = tokenOf(await store.claim('k', 'stopped'));
      await expect(
        store.completeInTransaction('k', token, async (tx) => {
          if (tx.kind === 'postgres') await tx.client.query(`INSERT INTO ${name}_ledger VALUES ('stopped')`);
          // Idle in transaction, as a process stopped with SIGSTOP is.
          await sleep(1_000);
        }),
      ).rejects.toThrow();
      expect((await client.query(`SELECT count(*)::int AS n FROM ${name}_ledger`)).rows[0]).toEqual({ n: 0 });
      // The pool is healthy afterwards, and the claim is still this token's to finish.
      expect(await store.completeInTransaction('k', token, () => 'again')).toEqual({ state: 'done', value: 'again' });
    } finally {
      await client.end();
    }
  });

  it('wakes a delivery waiting in another instance as soon as the claim is completed or released, not at its timeout', async () => {
    const name = table();
    const holder = open({ table: name });
    const waiter = open({ table: name });
    const token = tokenOf(await holder.claim('k', 'first'));
    const released = waiter.settled('k', 20_000);
    await waiter.settled('warm-up', 0);
    await holder.release('k', token);
    expect(await released).toBe('settled');
    const again = tokenOf(await waiter.claim('k', 'second'));
    const completed = holder.settled('k', 20_000);
    await holder.settled('warm-up', 0);
    await waiter.complete('k', again);
    expect(await completed).toBe('settled');
    // A key held elsewhere, and nothing settles it: the wait runs to its timeout.
    tokenOf(await holder.claim('other', 'x'));
    expect(await waiter.settled('other', 50)).toBe('timeout');
  });

  it('answers a wait for a key already settled, or never claimed, at once: nothing is missed before the LISTEN', async () => {
    const name = table();
    const holder = open({ table: name });
    const waiter = open({ table: name });
    expect(await holder.complete('k', tokenOf(await holder.claim('k', 'first')))).toBe(true);
    // Each key is settled before its wait starts, so no notification can answer it: 'settled' comes
    // from the wait's own look at the row (one missed would answer 'timeout', 20 s later).
    expect(await waiter.settled('k', 20_000)).toBe('settled');
    expect(await waiter.settled('never-claimed', 20_000)).toBe('settled');
    const released = tokenOf(await holder.claim('r', 'x'));
    await holder.release('r', released);
    expect(await waiter.settled('r', 20_000)).toBe('settled');
  });

  it("notifies on the key's own channel only: an instance waiting for nothing, or for another key, is told nothing", async () => {
    const name = table();
    const store = open({ table: name });
    await store.ready();
    const channel = (key: string) => `wc${createHash('md5').update(`${name}:${key}`).digest('hex')}`;
    const listener = new pg.Client({ connectionString: server.url });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(`${message.channel} ${message.payload}`));
      await listener.query(`LISTEN ${channel('b')}`);
      await listener.query(`LISTEN ${name}_settled`);
      expect(await store.complete('a', tokenOf(await store.claim('a', 'x')))).toBe(true);
      await store.release('a2', tokenOf(await store.claim('a2', 'x')));
      // PostgreSQL delivers notifications in commit order: one sent for a or a2 would arrive before b's.
      expect(await store.complete('b', tokenOf(await store.claim('b', 'x')))).toBe(true);
      await until(() => heard.length > 0);
      expect(heard).toEqual([`${channel('b')} b`]);
    } finally {
      await listener.end();
    }
  });

  it('names an unreachable server in one line without its password', async () => {
    await expect(openStore('postgres://merchant:s3cret-pw@127.0.0.1:1/wallet')).rejects.toThrow(
      /^cannot use the merchant store postgres:\/\/merchant:\*\*\*@127\.0\.0\.1:1\/wallet: /,
    );
    await expect(openStore('postgres://merchant:s3cret-pw@127.0.0.1:1/wallet')).rejects.not.toThrow(/s3cret/);
  });
});

describe('reference merchant receiver on PostgreSQL', () => {
  const keys = makeKeyPair();

  it('processes concurrent duplicates once across two instances and keeps the probe exact', async () => {
    const url = server.url;
    const events: CallbackEvent[] = [];
    const start = () =>
      startMerchantServer({
        apiKeys: ['k'],
        publicKey: keys.publicKey,
        store: url,
        process: (event) => void events.push(event),
      });
    const [a, b] = await Promise.all([start(), start()]);
    try {
      const event = deposit();
      const other = withdrawal();
      const bodies = [event, other].flatMap((payload) =>
        Array.from({ length: 10 }, () => seal(redelivery(payload), keys.privateKey)),
      );
      const answers = await Promise.all(
        bodies.map((body, i) => deliver((i % 2 ? a : b).callbackUrl, body, { apiKey: 'k' })),
      );
      expect(answers.map((answer) => answer.json)).toEqual(Array(20).fill({ errCode: 0, message: '' }));
      expect(events).toHaveLength(2);
      const shown = await probe(b.probeUrl);
      expect(shown.count).toBe(2);
      expect(shown.text).toContain('"amount":12345678901234567890.123');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
