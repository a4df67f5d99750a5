import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite, sqliteDriver, type SqliteDatabase } from './sqlite.js';

// The stores' SQL runs on whichever driver this Node gives (Node 20: better-sqlite3; Node 22.13+:
// node:sqlite; CI runs this file on all three): the same semantics are asserted on each.
const dir = mkdtempSync(join(tmpdir(), 'wc-sqlite-'));
const open: SqliteDatabase[] = [];
const db = (path = ':memory:') => {
  const opened = openSqlite(path);
  open.push(opened);
  return opened;
};
afterEach(() => {
  for (const one of open.splice(0)) one.close();
});

describe(`the SQLite seam (driver on Node ${process.version}: ${sqliteDriver()})`, () => {
  it('chooses node:sqlite where Node has it, better-sqlite3 otherwise', () => {
    const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite');
    expect(sqliteDriver()).toBe(
      builtin && !process.env.WALLET_CONFORMANCE_SQLITE
        ? 'node:sqlite'
        : process.env.WALLET_CONFORMANCE_SQLITE || 'better-sqlite3',
    );
  });

  it('binds positional and @named parameters, ignores keys a statement does not name, and gives plain rows', () => {
    const d = db();
    d.exec('CREATE TABLE t (key TEXT PRIMARY KEY, n INTEGER, s TEXT) STRICT');
    expect(
      d
        .prepare<{ key: string; n: number; s: string | null }>('INSERT INTO t (key, n, s) VALUES (@key, @n, @s)')
        .run({ key: 'a', n: 1, s: null }),
    ).toMatchObject({ changes: 1 });
    d.prepare<[string, number, string]>('INSERT INTO t VALUES (?, ?, ?)').run('b', 2, 'x');
    const row = d
      .prepare<{ key: string }, { key: string; n: number; s: string | null }>('SELECT * FROM t WHERE key = @key')
      .get({ key: 'a', unused: 7 } as { key: string });
    expect(row).toEqual({ key: 'a', n: 1, s: null });
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(d.prepare<[], { key: string }>('SELECT key FROM t ORDER BY key').all()).toEqual([
      { key: 'a' },
      { key: 'b' },
    ]);
    expect(d.prepare('SELECT 1 FROM t WHERE key = ?').get('none')).toBeUndefined();
  });

  it('reads and sets pragmas, simple or as rows', () => {
    const d = db(join(dir, 'pragma.sqlite'));
    expect(d.pragma('user_version', { simple: true })).toBe(0);
    d.pragma('user_version = 3');
    expect(d.pragma('user_version', { simple: true })).toBe(3);
    expect(String(d.pragma('journal_mode = WAL', { simple: true })).toLowerCase()).toBe('wal');
    d.exec('CREATE TABLE x (a INTEGER, b TEXT)');
    expect((d.pragma('table_info(x)') as Array<{ name: string }>).map((column) => column.name)).toEqual(['a', 'b']);
    expect(d.name).toBe(join(dir, 'pragma.sqlite'));
    expect(d.open).toBe(true);
    d.close();
    expect(d.open).toBe(false);
  });

  it('commits a transaction, rolls it back on a throw, and nests as a savepoint that rolls back alone', () => {
    const d = db();
    d.exec('CREATE TABLE t (v INTEGER)');
    const insert = d.prepare<[number]>('INSERT INTO t VALUES (?)');
    const count = () => d.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM t').get()!.n;
    const inner = d.transaction((v: number) => {
      insert.run(v);
      if (v < 0) throw new Error('inner refused');
    });
    const outer = d.transaction((v: number) => {
      insert.run(v);
      try {
        inner(-v);
      } catch {
        // The savepoint rolled back; the outer transaction goes on.
      }
      inner(v + 1);
      expect(d.inTransaction).toBe(true);
      return 'done';
    });
    expect(outer.immediate(1)).toBe('done');
    expect(count()).toBe(2);
    expect(d.inTransaction).toBe(false);
    const failing = d.transaction(() => {
      insert.run(9);
      throw new Error('refused');
    });
    expect(() => failing()).toThrow('refused');
    expect(count()).toBe(2);
    expect(() => d.transaction(() => Promise.resolve(1))()).toThrow(TypeError);
    expect(d.inTransaction).toBe(false);
  });

  it("names errors with SQLite's codes: a constraint, and another connection's write lock (busy_timeout 0)", () => {
    const path = join(dir, 'locks.sqlite');
    const a = db(path);
    a.exec('CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)');
    a.prepare('INSERT INTO t VALUES (?)').run('k');
    expect(() => a.prepare('INSERT INTO t VALUES (?)').run('k')).toThrow(
      expect.objectContaining({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }),
    );
    const b = db(path);
    b.pragma('busy_timeout = 0');
    a.exec('BEGIN IMMEDIATE');
    try {
      expect(() => b.transaction(() => b.prepare('INSERT INTO t VALUES (?)').run('x')).immediate()).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^SQLITE_BUSY/) }),
      );
      expect(b.inTransaction).toBe(false);
    } finally {
      a.exec('COMMIT');
    }
    b.transaction(() => b.prepare('INSERT INTO t VALUES (?)').run('x')).immediate();
    expect(a.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2 });
  });

  it('waits for a lock by default (5 s, as better-sqlite3 does) rather than failing at once', () => {
    const path = join(dir, 'default-wait.sqlite');
    const a = db(path);
    expect(a.pragma('busy_timeout', { simple: true })).toBe(5000);
  });
});
