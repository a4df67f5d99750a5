import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** A PostgreSQL server for a test file: `url` points at a database of its own. */
export interface PostgresServer {
  url: string;
  /** Drops the database (an outside server) or stops the server and deletes its folder (our own). */
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder (Debian's layout), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/**
 * A real PostgreSQL for tests: `PG_URL` when set (a fresh database is created on it and dropped
 * afterwards), else a throwaway server of our own: initdb and pg_ctl in a temporary folder as an
 * unprivileged user (PostgreSQL refuses root), on a free port, listening on 127.0.0.1 only.
 */
export async function startPostgres(
  options: { durable?: boolean; statementCounts?: boolean } = {},
): Promise<PostgresServer> {
  if (process.env.PG_URL) return freshDatabase(process.env.PG_URL, async () => undefined);
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql) and PG_URL is not set');
  const dir = mkdtempSync(join(tmpdir(), 'wc-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot)
    chownSync(
      dir,
      Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
      Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
    );
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);
  const data = join(dir, 'data');
  const port = await freePort();
  try {
    await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    // Loopback only, socket in our folder; fsync off unless asked (benches): the tests kill
    // merchants, never the database.
    // statementCounts (benches): pg_stat_statements counts every statement as it ends, utility
    // statements included; room for each LISTEN channel's own entry between two resets.
    const counts = options.statementCounts
      ? ' -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=20000'
      : '';
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${options.durable ? '' : ' -c fsync=off'}${counts}`;
    await as('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const stopServer = async () => {
    await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  return freshDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, stopServer);
}

async function freshDatabase(url: string, after: () => Promise<void>): Promise<PostgresServer> {
  const name = `wc_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    async stop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
      await after();
    },
  };
}
