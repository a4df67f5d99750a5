// better-sqlite3 is an optional dependency: on Node 22.13 and later the SQLite stores run on the
// built-in node:sqlite (src/platform/sqlite.ts), and an install that could not compile the addon still
// works. Where it is needed (Node 20) and missing, a command that opens a SQLite store says so in one
// line (exit 2). The addon is hidden from the real CLI by a preload that answers
// require('better-sqlite3') as Node does when the package is not installed; WALLET_CONFORMANCE_SQLITE
// makes the CLI take that path on any Node.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hideBuiltinModule, hideRequiredPackage } from './support/hide-package.js';
import { ROOT } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-optional-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hide = hideRequiredPackage(dir, 'better-sqlite3');
const hideNodeSqlite = hideBuiltinModule(dir, 'node:sqlite');

function cli(args: string[], env: Record<string, string>, preload: string | false = hide) {
  const run = spawnSync(
    process.execPath,
    [...(preload ? ['--require', preload] : []), resolve(ROOT, 'bin/wallet-conformance.js'), ...args],
    {
      cwd: dir,
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '1', ...env },
    },
  );
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const hasNodeSqlite =
  (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite') !== undefined;

describe('better-sqlite3, an optional dependency', () => {
  it('is declared optional', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    expect(manifest.dependencies).not.toHaveProperty('better-sqlite3');
    expect(manifest.optionalDependencies).toHaveProperty('better-sqlite3');
  });

  it('missing where it is needed, the embedded run (its emulator keeps a SQLite store) is one line naming it and exit 2', () => {
    const run = cli(['run', '--reports', join(dir, 'r1')], { WALLET_CONFORMANCE_SQLITE: 'better-sqlite3' });
    expect(run.status, run.stdout).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: a SQLite store on Node ${process.version} needs the package better-sqlite3, which is not installed (Node 22.13 or later needs none): npm install better-sqlite3@12\n`,
    );
  });

  it('a WALLET_CONFORMANCE_SQLITE that names no driver is one line and exit 2', () => {
    const run = cli(['run', '--reports', join(dir, 'r2')], { WALLET_CONFORMANCE_SQLITE: 'sqlite3' }, false);
    expect(run.status, run.stdout).toBe(2);
    expect(run.stderr).toBe(
      'wallet-conformance: WALLET_CONFORMANCE_SQLITE is "sqlite3": it takes node:sqlite or better-sqlite3\n',
    );
  });

  it.runIf(hasNodeSqlite)(
    'is not needed where Node has node:sqlite: the embedded run passes with it hidden, and no experimental warning is printed',
    () => {
      const run = cli(['run', '--reports', join(dir, 'reports')], {});
      expect(run.stderr).toBe('');
      expect(run.status, run.stdout).toBe(0);
    },
    120_000,
  );

  // On every Node: where Node has node:sqlite, a preload hides it as a Node without it would.
  it('asked for node:sqlite on a Node without it, one line and exit 2', () => {
    const run = cli(
      ['run', '--reports', join(dir, 'r3')],
      { WALLET_CONFORMANCE_SQLITE: 'node:sqlite' },
      hideNodeSqlite,
    );
    expect(run.status, run.stdout).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: WALLET_CONFORMANCE_SQLITE is node:sqlite, but Node ${process.version} has no node:sqlite (Node 22.13 or later has it)\n`,
    );
  });
});
