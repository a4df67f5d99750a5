import { createRequire } from 'node:module';
import { ConfigError } from '../core/errors.js';

/**
 * The one SQLite seam of the emulator's store and the reference merchant's SQLite store: the small,
 * synchronous subset of better-sqlite3's API they use (prepare/run/get/all, exec, pragma, nested
 * transactions with BEGIN IMMEDIATE), served by one of two drivers:
 *
 * - `node:sqlite`, built into Node ≥ 22.13: no native addon to compile, nothing that aborts on
 *   Node 24.19+ (docs/runtime.md);
 * - `better-sqlite3` (an optional dependency), where Node has no `node:sqlite` (Node 20).
 *
 * Chosen once per process: `node:sqlite` when Node has it, unless `WALLET_CONFORMANCE_SQLITE`
 * names `better-sqlite3` (or `node:sqlite`). Both run the same SQL; errors carry SQLite's own code
 * name (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_PRIMARYKEY`, ...) whichever driver threw them.
 *
 * @example const db = openSqlite(':memory:'); db.exec('CREATE TABLE t (x)'); db.prepare<[number]>('INSERT INTO t VALUES (?)').run(1)
 */
type SqliteDriver = 'node:sqlite' | 'better-sqlite3';

type Params<P> = P extends unknown[] ? P : [P];

/** What `run` reports. */
interface SqliteRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A prepared statement: positional parameters (`?`) as arguments, or one object for `@name` ones. */
export interface SqliteStatement<P extends unknown[] | object = unknown[], R = unknown> {
  run(...params: Params<P>): SqliteRunResult;
  get(...params: Params<P>): R | undefined;
  all(...params: Params<P>): R[];
}

/** A function run inside a transaction (a savepoint when nested); `.immediate` begins with BEGIN IMMEDIATE. */
interface SqliteTransaction<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  deferred(...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
  exclusive(...args: Parameters<F>): ReturnType<F>;
}

/** An open database (better-sqlite3's shape, the subset the stores use). */
export interface SqliteDatabase {
  /** The path it was opened with (`:memory:` for an in-memory database). */
  readonly name: string;
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): SqliteStatement<P, R>;
  exec(sql: string): unknown;
  /** `PRAGMA <source>`: its rows, or with `simple` the first column of the first row. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<F extends (...args: never[]) => unknown>(fn: F): SqliteTransaction<F>;
  close(): unknown;
}

const ENV = 'WALLET_CONFORMANCE_SQLITE';

let chosen: { driver: SqliteDriver; open: (path: string) => SqliteDatabase } | undefined;

/** Which driver this process uses (chosen on first use). */
export function sqliteDriver(): SqliteDriver {
  return choose().driver;
}

/** Opens (creating when needed) the database at `path`, or an in-memory one for `':memory:'`. */
export function openSqlite(path: string): SqliteDatabase {
  return choose().open(path);
}

function choose(): NonNullable<typeof chosen> {
  if (chosen) return chosen;
  const wanted = process.env[ENV];
  if (wanted !== undefined && wanted !== '' && wanted !== 'node:sqlite' && wanted !== 'better-sqlite3') {
    throw new ConfigError('bad-env', `${ENV} is "${wanted}": it takes node:sqlite or better-sqlite3`);
  }
  const builtin = wanted === 'better-sqlite3' ? undefined : loadNodeSqlite();
  if (builtin) {
    chosen = { driver: 'node:sqlite', open: (path) => new NodeSqliteDatabase(builtin, path) };
  } else if (wanted === 'node:sqlite') {
    throw new ConfigError(
      'missing-package',
      `${ENV} is node:sqlite, but Node ${process.version} has no node:sqlite (Node 22.13 or later has it)`,
    );
  } else {
    const Database = loadBetterSqlite();
    chosen = { driver: 'better-sqlite3', open: (path) => new Database(path) as unknown as SqliteDatabase };
  }
  return chosen;
}

/** The `node:sqlite` module of the types this file uses (Node 20's @types have none). */
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeDatabaseSync;
}
interface NodeDatabaseSync {
  readonly isOpen: boolean;
  readonly isTransaction: boolean;
  prepare(sql: string): NodeStatementSync;
  exec(sql: string): void;
  close(): void;
}
interface NodeStatementSync {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  setAllowUnknownNamedParameters?(enabled: boolean): void;
}

/**
 * `node:sqlite`, or undefined where Node has none (20) or only behind a flag (22.5 to 22.12). Node 22
 * announces it as experimental on load: that one warning is not the user's business and is dropped.
 */
function loadNodeSqlite(): NodeSqliteModule | undefined {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltin !== 'function') return undefined;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const module = getBuiltin.call(process, 'node:sqlite') as NodeSqliteModule | undefined;
    return typeof module?.DatabaseSync === 'function' ? module : undefined;
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

type BetterSqliteConstructor = new (path: string) => unknown;

function loadBetterSqlite(): BetterSqliteConstructor {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as BetterSqliteConstructor;
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: string; message?: string };
    if (code !== 'MODULE_NOT_FOUND' || !String(message).includes("'better-sqlite3'")) throw error;
    throw new ConfigError(
      'missing-package',
      `a SQLite store on Node ${process.version} needs the package better-sqlite3, which is not installed (Node 22.13 or later needs none): npm install better-sqlite3@12`,
    );
  }
}

/** SQLite's primary result codes, by number, for errors from `node:sqlite` (which names them by number). */
const PRIMARY_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};
/** The extended codes the stores (or their tests) tell apart. */
const EXTENDED_CODES: Record<number, string> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  262: 'SQLITE_LOCKED_SHAREDCACHE',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  275: 'SQLITE_CONSTRAINT_CHECK',
  3091: 'SQLITE_CONSTRAINT_DATATYPE',
};

/** Gives a `node:sqlite` error better-sqlite3's `code` (SQLite's name for it); other errors pass as they are. */
function named(error: unknown): unknown {
  const e = error as { code?: unknown; errcode?: unknown } | null;
  if (e && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const code = EXTENDED_CODES[e.errcode] ?? PRIMARY_CODES[e.errcode & 0xff] ?? 'SQLITE_ERROR';
    try {
      Object.defineProperty(e, 'code', { value: code, configurable: true, writable: true, enumerable: true });
    } catch {
      // A frozen error keeps Node's code.
    }
  }
  return error;
}

/** Rows as plain objects (node:sqlite gives null-prototype ones), as better-sqlite3 does. */
const plain = (row: unknown): unknown => (row === undefined || row === null ? undefined : { ...(row as object) });

class NodeSqliteStatement implements SqliteStatement<unknown[], unknown> {
  readonly #statement: NodeStatementSync;

  constructor(statement: NodeStatementSync) {
    this.#statement = statement;
    // better-sqlite3 ignores object keys the statement does not name; so does this driver.
    statement.setAllowUnknownNamedParameters?.(true);
  }

  run(...params: unknown[]): SqliteRunResult {
    try {
      return this.#statement.run(...params);
    } catch (error) {
      throw named(error);
    }
  }

  get(...params: unknown[]): unknown {
    try {
      return plain(this.#statement.get(...params));
    } catch (error) {
      throw named(error);
    }
  }

  all(...params: unknown[]): unknown[] {
    try {
      return this.#statement.all(...params).map(plain);
    } catch (error) {
      throw named(error);
    }
  }
}

class NodeSqliteDatabase implements SqliteDatabase {
  readonly name: string;
  readonly #db: NodeDatabaseSync;
  #depth = 0;

  constructor(module: NodeSqliteModule, path: string) {
    this.name = path;
    try {
      this.#db = new module.DatabaseSync(path);
    } catch (error) {
      throw named(error);
    }
    // better-sqlite3 waits up to 5 s for another connection's lock unless told otherwise; so does this.
    this.pragma('busy_timeout = 5000');
  }

  get open(): boolean {
    return this.#db.isOpen;
  }

  get inTransaction(): boolean {
    return this.#db.isOpen && this.#db.isTransaction;
  }

  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): SqliteStatement<P, R> {
    try {
      return new NodeSqliteStatement(this.#db.prepare(sql)) as unknown as SqliteStatement<P, R>;
    } catch (error) {
      throw named(error);
    }
  }

  exec(sql: string): this {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw named(error);
    }
    return this;
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const rows = this.prepare<[], Record<string, unknown>>(`PRAGMA ${source}`).all();
    if (!options.simple) return rows;
    const first = rows[0];
    return first === undefined ? undefined : Object.values(first)[0];
  }

  transaction<F extends (...args: never[]) => unknown>(fn: F): SqliteTransaction<F> {
    const begin =
      (mode: string) =>
      (...args: Parameters<F>): ReturnType<F> =>
        this.#inTransaction(mode, () => fn(...args) as ReturnType<F>);
    const run = begin('') as SqliteTransaction<F>;
    run.deferred = begin('DEFERRED');
    run.immediate = begin('IMMEDIATE');
    run.exclusive = begin('EXCLUSIVE');
    return run;
  }

  close(): this {
    if (this.#db.isOpen) this.#db.close();
    return this;
  }

  /** better-sqlite3's transaction semantics: BEGIN ... COMMIT, or a savepoint inside another; a throw rolls back. */
  #inTransaction<T>(mode: string, body: () => T): T {
    const nested = this.#depth > 0;
    const savepoint = `wallet_conformance_${this.#depth}`;
    this.exec(nested ? `SAVEPOINT ${savepoint}` : `BEGIN ${mode}`);
    this.#depth++;
    let result: T;
    try {
      result = body();
      if (result !== null && typeof (result as { then?: unknown } | undefined)?.then === 'function') {
        throw new TypeError('Transaction function cannot return a promise');
      }
    } catch (error) {
      this.#depth--;
      if (this.#db.isOpen && this.#db.isTransaction) {
        if (nested) this.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
        else this.exec('ROLLBACK');
      }
      throw error;
    }
    this.#depth--;
    try {
      this.exec(nested ? `RELEASE ${savepoint}` : 'COMMIT');
    } catch (error) {
      // A refused COMMIT (SQLITE_BUSY) leaves the transaction open: it is rolled back, as better-sqlite3 does.
      if (!nested && this.#db.isOpen && this.#db.isTransaction) this.exec('ROLLBACK');
      throw error;
    }
    return result;
  }
}
