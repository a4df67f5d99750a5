import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackEvent } from '../src/merchant/callback-handler.js';
import { openStore } from '../src/merchant/open-store.js';
import { openPostgresStore, type PostgresIdempotencyStore } from '../src/merchant/postgres-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import type { StoreTransaction } from '../src/merchant/store.js';
import { deliver, deposit, makeKeyPair, probe, redelivery, seal, withdrawal } from './support/merchant.js';
import { startPostgres, type PostgresServer } from './support/postgres.js';
import { storeContract, tokenOf } from './support/store-contract.js';

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
  const store = openPostgresStore(server.url, { table: options.table ?? table(), ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) });
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
    const tokens = await Promise.all(Array.from({ length: 30 }, (_, i) => instances[i % 3]!.claim(`other-${i}`, 'x').then(tokenOf)));
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
      await expect(store.completeInTransaction('k', token, async (tx) => {
        await credit('k')(tx);
        throw new Error('after the write');
      })).rejects.toThrow('after the write');
      expect((await client.query(`SELECT count(*)::int AS n FROM ${name}_ledger`)).rows[0]).toEqual({ n: 0 });
      expect(await store.completeInTransaction('k', token + 1_000, credit('k'))).toEqual({ state: 'lost' });
      expect(await store.completeInTransaction('k', token, credit('k'))).toEqual({ state: 'done', value: undefined });
      expect((await client.query(`SELECT amount::text FROM ${name}_ledger`)).rows).toEqual([{ amount: '12345678901234567890.123' }]);
      expect(await store.processed()).toEqual(['credit']);
    } finally {
      await client.end();
    }
  });

  it('holds off a takeover while a transactional completion is open, which then finds the event processed', async () => {
    const store = open({ leaseMs: 100 });
    const token = tokenOf(await store.claim('k', 'slow'));
    let takeover: Promise<unknown> | undefined;
    const outcome = await store.completeInTransaction('k', token, async () => {
      // Inside the transaction the lease runs out; a takeover must wait for the commit.
      await new Promise((resolve) => setTimeout(resolve, 250));
      takeover = store.claim('k', 'late');
      await new Promise((resolve) => setTimeout(resolve, 100));
    });
    expect(outcome.state).toBe('done');
    expect(await takeover).toEqual({ state: 'processed' });
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
    expect(await waiter.settled('other', 50)).toBe('timeout');
  });

  it('names an unreachable server in one line without its password', async () => {
    await expect(openStore('postgres://merchant:s3cret-pw@127.0.0.1:1/wallet')).rejects.toThrow(/^cannot use the merchant store postgres:\/\/merchant:\*\*\*@127\.0\.0\.1:1\/wallet: /);
    await expect(openStore('postgres://merchant:s3cret-pw@127.0.0.1:1/wallet')).rejects.not.toThrow(/s3cret/);
  });
});

describe('reference merchant receiver on PostgreSQL', () => {
  const keys = makeKeyPair();

  it('processes concurrent duplicates once across two instances and keeps the probe exact', async () => {
    const url = server.url;
    const events: CallbackEvent[] = [];
    const start = () => startMerchantServer({ apiKeys: ['k'], publicKey: keys.publicKey, store: url, process: (event) => void events.push(event) });
    const [a, b] = await Promise.all([start(), start()]);
    try {
      const event = deposit();
      const other = withdrawal();
      const bodies = [event, other].flatMap((payload) => Array.from({ length: 10 }, () => seal(redelivery(payload), keys.privateKey)));
      const answers = await Promise.all(bodies.map((body, i) => deliver((i % 2 ? a : b).callbackUrl, body, { apiKey: 'k' })));
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
