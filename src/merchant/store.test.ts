import { openSqlite } from '../platform/sqlite.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storeContract, tokenOf } from '../../test/support/store-contract.js';
import { MemoryIdempotencyStore } from './memory-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { IdempotencyStore, StoreOptions, StoreTransaction } from './store.js';

/**
 * The stores' clock in this file: the shared contract (test/support/store-contract.ts) lets time
 * pass by moving it, at once, and the stores read it (`now`). PostgreSQL runs the same contract in
 * real time on its own clock (test/postgres-store.test.ts).
 */
const clock = { now: 1_000_000 };
const testTime = {
  wait: async (ms: number) => {
    clock.now += ms;
  },
  elapsed: () => clock.now,
};

const dir = mkdtempSync(join(tmpdir(), 'wc-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

describe.each<[string, (options: StoreOptions) => IdempotencyStore]>([
  ['in-memory', (options) => new MemoryIdempotencyStore(options)],
  ['SQLite', (options) => openSqliteStore(join(dir, `unit-${counter++}.sqlite`), options)],
])('%s idempotency store', (_name, open) => {
  storeContract((options) => open({ now: () => clock.now, ...options }), testTime);

  it('hands a stale claim (a crashed process) to the next delivery after the lease, not before', async () => {
    let now = 1_000_000;
    const store = open({ leaseMs: 30_000, now: () => now });
    tokenOf(await store.claim('k', 'crashed'));
    now += 29_999;
    expect(await store.claim('k', 'early')).toEqual({ state: 'busy' });
    now += 2;
    const token = tokenOf(await store.claim('k', 'retry'));
    await store.complete('k', token);
    expect(await store.processed()).toEqual(['retry']);
    await store.close();
  });

  it('serves the processed events page by page after a sequence number (the paged probe), in processing order', async () => {
    const store = open({});
    for (const key of ['a', 'b', 'c']) await store.complete(key, tokenOf(await store.claim(key, key)));
    const first = await store.processedPage!(0, 2);
    expect(first.map((entry) => entry.text)).toEqual(['a', 'b']);
    const rest = await store.processedPage!(first.at(-1)!.seq, 2);
    expect(rest.map((entry) => entry.text)).toEqual(['c']);
    expect(await store.processedPage!(rest.at(-1)!.seq, 2)).toEqual([]);
    await store.close();
  });

  it('measures the lease from the last renewal', async () => {
    let now = 1_000_000;
    const store = open({ leaseMs: 30_000, now: () => now });
    const token = tokenOf(await store.claim('k', 'long'));
    now += 25_000;
    expect(await store.renew('k', token)).toBe(true);
    now += 25_000;
    expect(await store.claim('k', 'early')).toEqual({ state: 'busy' });
    now += 5_001;
    expect(await store.claim('k', 'late')).toMatchObject({ state: 'claimed' });
    await store.close();
  });
});

describe('SQLite idempotency store on disk', () => {
  it('keeps processed keys and a pending claim across a close and reopen of the same file', async () => {
    const path = join(dir, 'reopen.sqlite');
    const first = openSqliteStore(path);
    await first.complete('done', tokenOf(await first.claim('done', 'x')));
    const pending = tokenOf(await first.claim('pending', 'y'));
    await first.close();
    const second = openSqliteStore(path);
    expect(await second.claim('done', 'x2')).toEqual({ state: 'processed' });
    expect(await second.claim('pending', 'y2')).toEqual({ state: 'busy' });
    expect(await second.complete('pending', pending)).toBe(true);
    expect(await second.processed()).toEqual(['x', 'y']);
    await second.close();
  });

  it('is atomic between two connections to one file, and their tokens never repeat', async () => {
    const path = join(dir, 'shared.sqlite');
    const a = openSqliteStore(path);
    const b = openSqliteStore(path);
    const token = tokenOf(await a.claim('k', 'a'));
    expect(await b.claim('k', 'b')).toEqual({ state: 'busy' });
    expect(tokenOf(await b.claim('k2', 'b'))).toBeGreaterThan(token);
    await a.complete('k', token);
    expect(await b.claim('k', 'b')).toEqual({ state: 'processed' });
    await a.close();
    await b.close();
  });

  it('reads lease ages from SQLite: a clock-skewed process cannot take a live claim over', async () => {
    const path = join(dir, 'skew.sqlite');
    const honest = openSqliteStore(path);
    const token = tokenOf(await honest.claim('k', 'first'));
    // The production store has no clock option: a second process's own clock plays no part.
    const dateNow = Date.now;
    Date.now = () => dateNow() + 3_600_000;
    try {
      const skewed = openSqliteStore(path);
      expect(await skewed.claim('k', 'second')).toEqual({ state: 'busy' });
      await skewed.close();
    } finally {
      Date.now = dateNow;
    }
    expect(await honest.complete('k', token)).toBe(true);
    await honest.close();
  });

  it("keeps lease times in SQLite's own clock as ms since the epoch (what a test clock stands in for)", async () => {
    const path = join(dir, 'sql-clock.sqlite');
    const production = openSqliteStore(path, { leaseMs: 30_000 });
    tokenOf(await production.claim('k', 'first'));
    // Read against the wall clock, the claim made by SQLite's clock is live until its lease ends, give or take a few seconds.
    const reader = (offset: number) => openSqliteStore(path, { leaseMs: 30_000, now: () => Date.now() + offset });
    const before = reader(25_000);
    expect(await before.claim('k', 'early')).toEqual({ state: 'busy' });
    const after = reader(35_000);
    expect(await after.claim('k', 'late')).toMatchObject({ state: 'claimed' });
    for (const store of [production, before, after]) await store.close();
  });

  it('opens a file written before fencing tokens and fences its old claims', async () => {
    const path = join(dir, 'old.sqlite');
    const db = openSqlite(path);
    db.exec(
      "CREATE TABLE processed_events (key TEXT PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('processing', 'done')), payload TEXT NOT NULL, claimed_at INTEGER NOT NULL, seq INTEGER UNIQUE, completed_at INTEGER) STRICT",
    );
    db.prepare("INSERT INTO processed_events VALUES ('old', 'done', 'o', 1, 1, 1)").run();
    db.close();
    const store = openSqliteStore(path);
    expect(await store.claim('old', 'again')).toEqual({ state: 'processed' });
    expect(tokenOf(await store.claim('new', 'n'))).toBeGreaterThan(0);
    await store.close();
  });

  it('commits the business write and the done mark in one transaction, or neither', async () => {
    const store = openSqliteStore(join(dir, 'tx.sqlite'));
    const ledger = openSqlite(join(dir, 'tx.sqlite'));
    ledger.exec('CREATE TABLE IF NOT EXISTS ledger (key TEXT PRIMARY KEY)');
    ledger.close();
    const write = (key: string) => (tx: StoreTransaction) => {
      if (tx.kind !== 'sqlite') throw new Error('not sqlite');
      tx.db.prepare('INSERT INTO ledger (key) VALUES (?)').run(key);
    };
    const token = tokenOf(await store.claim('k', 'tx'));
    await expect(
      store.completeInTransaction('k', token, (tx) => {
        write('k')(tx);
        throw new Error('after the write');
      }),
    ).rejects.toThrow('after the write');
    await expect(store.completeInTransaction('k', token, async (tx) => write('k')(tx))).rejects.toThrow(
      /synchronously/,
    );
    expect(await store.completeInTransaction('k', token, write('k'))).toEqual({ state: 'done', value: undefined });
    const check = openSqlite(join(dir, 'tx.sqlite'));
    expect(check.prepare('SELECT key FROM ledger').all()).toEqual([{ key: 'k' }]);
    check.close();
    expect(await store.processed()).toEqual(['tx']);
    await store.close();
  });

  it("waits for another connection's write lock on a timer: the event loop runs meanwhile, a claim answers busy after the bound, then succeeds", async () => {
    const path = join(dir, 'locked.sqlite');
    const store = openSqliteStore(path, { lockTimeoutMs: 300 });
    const other = openSqlite(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      let answered = false;
      const claim = store.claim('k', 'waiting').finally(() => (answered = true));
      // A timer set after the claim fires while it waits: better-sqlite3's busy_timeout would hold the
      // thread instead, and the claim would answer before any timer ran.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(answered).toBe(false);
      expect(await claim).toEqual({ state: 'busy' });
      await expect(store.completeInTransaction('k', 1, () => 'never')).rejects.toThrow(
        /locked by another process for over 300 ms/,
      );
      const pending = store.claim('k', 'after');
      setTimeout(() => other.exec('COMMIT'), 50);
      expect(await pending).toMatchObject({ state: 'claimed' });
    } finally {
      if (other.inTransaction) other.exec('COMMIT');
      other.close();
      await store.close();
    }
  });

  it('refuses an unusable path with one clear line', () => {
    expect(() => openSqliteStore(join(dir, 'no', 'such', 'dir', 'x.sqlite'))).toThrow(
      /^cannot open the merchant store .*x\.sqlite: /,
    );
  });
});

describe('SQLite idempotency store group commit', () => {
  it('marks many concurrent completions in one commit, each answered for its own token, and keeps them across a reopen', async () => {
    const path = join(dir, 'group.sqlite');
    const store = openSqliteStore(path);
    const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => store.claim(`k${i}`, `t${i}`).then(tokenOf)));
    const answers = await Promise.all(
      tokens.map((token, i) => store.complete(`k${i}`, i === 7 ? token + 10_000 : token)),
    );
    expect(answers.filter((done) => !done)).toHaveLength(1);
    expect(answers[7]).toBe(false);
    const pending = store.complete('k7', tokens[7]!);
    await store.close();
    expect(await pending).toBe(true);
    const again = openSqliteStore(path);
    expect(await again.processed()).toHaveLength(50);
    await again.close();
  });
});
