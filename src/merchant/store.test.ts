import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from './memory-store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { IdempotencyStore, StoreOptions } from './store.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

describe.each<[string, (options: StoreOptions) => IdempotencyStore]>([
  ['in-memory', (options) => new MemoryIdempotencyStore(options)],
  ['SQLite', (options) => openSqliteStore(join(dir, `unit-${counter++}.sqlite`), options)],
])('%s idempotency store', (_name, open) => {
  it('claims a new key once: a second claim is busy, and after complete it is processed', async () => {
    const store = open({});
    expect(await store.claim('k', '{"a":1}')).toBe('claimed');
    expect(await store.claim('k', '{"a":2}')).toBe('busy');
    await store.complete('k');
    expect(await store.claim('k', '{"a":3}')).toBe('processed');
    expect(await store.processed()).toEqual(['{"a":1}']);
    await store.close();
  });

  it('lets a released key be claimed again, with the new delivery text', async () => {
    const store = open({});
    await store.claim('k', 'first');
    await store.release('k');
    expect(await store.claim('k', 'second')).toBe('claimed');
    await store.complete('k');
    expect(await store.processed()).toEqual(['second']);
    await store.close();
  });

  it('hands a stale claim (a crashed process) to the next delivery after the lease, not before', async () => {
    let now = 1_000_000;
    const store = open({ leaseMs: 30_000, now: () => now });
    await store.claim('k', 'crashed');
    now += 29_999;
    expect(await store.claim('k', 'early')).toBe('busy');
    now += 2;
    expect(await store.claim('k', 'retry')).toBe('claimed');
    await store.complete('k');
    expect(await store.processed()).toEqual(['retry']);
    await store.close();
  });

  it('lists processed events in completion order, and ignores complete or release of unknown keys', async () => {
    const store = open({});
    for (const key of ['a', 'b', 'c']) await store.claim(key, key);
    await store.complete('c');
    await store.complete('a');
    await store.complete('a');
    await store.complete('nope');
    await store.release('nope');
    await store.release('a');
    expect(await store.processed()).toEqual(['c', 'a']);
    await store.close();
  });
});

describe('SQLite idempotency store on disk', () => {
  it('keeps processed keys and a pending claim across a close and reopen of the same file', async () => {
    const path = join(dir, 'reopen.sqlite');
    const first = openSqliteStore(path);
    await first.claim('done', 'x');
    await first.complete('done');
    await first.claim('pending', 'y');
    await first.close();
    const second = openSqliteStore(path);
    expect(await second.claim('done', 'x2')).toBe('processed');
    expect(await second.claim('pending', 'y2')).toBe('busy');
    expect(await second.processed()).toEqual(['x']);
    await second.close();
  });

  it('is atomic between two connections to one file', async () => {
    const path = join(dir, 'shared.sqlite');
    const a = openSqliteStore(path);
    const b = openSqliteStore(path);
    expect(await a.claim('k', 'a')).toBe('claimed');
    expect(await b.claim('k', 'b')).toBe('busy');
    await a.complete('k');
    expect(await b.claim('k', 'b')).toBe('processed');
    await a.close();
    await b.close();
  });

  it('refuses an unusable path with one clear line', () => {
    expect(() => openSqliteStore(join(dir, 'no', 'such', 'dir', 'x.sqlite'))).toThrow(/^cannot open the merchant store .*x\.sqlite: /);
  });
});
