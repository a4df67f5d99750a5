// pg is an optional peer dependency (package.json peerDependenciesMeta), like msw and pact: the CLI,
// the library and a SQLite store work without it, and a merchant configured with a postgres:// store
// says in one line which package to install (exit 2). pg is hidden from the real CLI by a preload
// that answers require('pg') as Node does when the package is not installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { hideRequiredPackage } from './support/hide-package.js';
import { ROOT, runCli } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-optional-pg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hide = hideRequiredPackage(dir, 'pg');

function withoutPg(args: string[], cwd = dir) {
  const run = spawnSync(process.execPath, ['--require', hide, resolve(ROOT, 'bin/wallet-conformance.js'), ...args], {
    cwd,
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe('pg, an optional peer dependency', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;

  it('is declared an optional peer, not a dependency', () => {
    expect(manifest.dependencies).not.toHaveProperty('pg');
    expect(manifest.peerDependencies).toHaveProperty('pg');
    expect(manifest.peerDependenciesMeta?.pg).toEqual({ optional: true });
  });

  it('is not needed to load the library or to serve a merchant on SQLite', () => {
    const lib = spawnSync(
      process.execPath,
      [
        '--require',
        hide,
        '--input-type=module',
        '-e',
        `const lib = await import(${JSON.stringify(pathToFileURL(resolve(ROOT, 'dist/index.js')).href)}); const store = lib.openSqliteStore(':memory:'); console.log(typeof lib.openPostgresStore, typeof store.claim); await store.close();`,
      ],
      { timeout: 60_000 },
    );
    expect(lib.stderr.toString()).toBe('');
    expect(lib.stdout.toString()).toBe('function function\n');
  });

  it('missing, a merchant configured with a postgres:// store is one line naming it and exit 2, without the password', () => {
    const init = runCli(['merchant', '--init', join(dir, 'm')]);
    expect(init.status, init.stderr).toBe(0);
    const config = join(dir, 'm', 'merchant.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace(/^store: .*$/m, 'store: postgres://merchant:s3cret-pw@127.0.0.1:1/wallet'),
    );
    const run = withoutPg(['merchant', '--config', config]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: a PostgreSQL store (store: postgres://...) needs the optional package pg, which is not installed: npm install 'pg@${String(manifest.peerDependencies!.pg)}'\n`,
    );
    expect(run.stdout + run.stderr).not.toContain('s3cret-pw');
  });
});
