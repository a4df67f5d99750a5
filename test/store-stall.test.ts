/**
 * A stalled claim holder delays only its own event (docs/stores.md), shown with real merchant
 * processes (test/fixtures/stall-merchant.ts) on a real PostgreSQL and a shared SQLite file, in both
 * modes of each store: plain (claim, process, complete) and transactional (the business write and
 * the done mark in one transaction).
 *
 * - stall: instance A holds a claim and is stopped (SIGSTOP); instance B answers an unrelated
 *   event while A is still stopped, and takes the stalled event over once A's lease has run out;
 * - resume: A continues (SIGCONT); its late completion loses to the fencing token;
 * - crash: A is killed (SIGKILL) while it holds a claim; B takes the event over.
 *
 * SQLite has one write lock for the whole file: in transactional mode A is stopped inside its write
 * transaction, so no instance can write until it resumes. B's event loop still answers at once
 * (the probe), its deliveries answer 409 (retry later) after the lock bound, and A, which kept the
 * lock and therefore its claim, commits once it resumes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSqlite } from '../src/platform/sqlite.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { deliver, deposit, makeKeyPair, probe, seal, type Delivered } from './support/merchant.js';
import { startPostgres, type PostgresServer } from './support/postgres.js';

const API_KEY = 'stall-key';
/** Small bounds so the test's wall time stays modest; production defaults are 30 s, 1 s (PostgreSQL) and 5 s (SQLite). */
const LEASE_MS = 1_500;
const LOCK_TIMEOUT_MS = 300;
const BUSY_WAIT_MS = 1_000;
const HOLD_MS = 1_000;
/** How long the service's retries of the stalled event may take: the lease, a lock bound, slack for a loaded machine. */
const TAKEOVER_LIMIT_MS = 20 * LEASE_MS;

const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-stall-'));
const publicKeyFile = join(dir, 'public.pem');
let postgres: PostgresServer;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  writeFileSync(publicKeyFile, keys.pem.publicPem);
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const child of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Instance {
  child: ChildProcess;
  callbackUrl: string;
  probeUrl: string;
  /** Resolves when the process printed `holding <trackingId>`. */
  holding(trackingId: string): Promise<void>;
  /** Resolves when the process printed `claiming <trackingId>`: a delivery asked the store for its claim. */
  claiming(trackingId: string): Promise<void>;
}

function startInstance(settings: Record<string, unknown>): Promise<Instance> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(ROOT, 'test/fixtures/stall-merchant.ts'), JSON.stringify(settings)],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.add(child);
    child.on('exit', () => children.delete(child));
    let out = '';
    let err = '';
    const watchers = new Set<() => void>();
    const timer = setTimeout(() => fail(new Error(`instance did not start in 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (const watch of [...watchers]) watch();
      const port = /^port (\d+)$/m.exec(out);
      if (port) {
        clearTimeout(timer);
        const url = `http://127.0.0.1:${port[1]}`;
        const printed = (line: string) =>
          new Promise<void>((seen, never) => {
            const limit = setTimeout(() => never(new Error(`no "${line}" in 20 s: ${err}`)), 20_000);
            const watch = () => {
              if (!out.includes(`${line}\n`)) return;
              clearTimeout(limit);
              watchers.delete(watch);
              seen();
            };
            watchers.add(watch);
            watch();
          });
        done({
          child,
          callbackUrl: `${url}/callback`,
          probeUrl: `${url}/probe`,
          holding: (trackingId) => printed(`holding ${trackingId}`),
          claiming: (trackingId) => printed(`claiming ${trackingId}`),
        });
      }
    });
    child.on('exit', (code, signal) => fail(new Error(`instance exited with ${code ?? signal}: ${err}`)));
  });
}

const send = (instance: Instance, payload: Record<string, unknown>): Promise<Delivered> =>
  deliver(instance.callbackUrl, seal(payload, keys.privateKey), { apiKey: API_KEY });
const errCode = (answer: Delivered) => (answer.json as { errCode?: unknown } | undefined)?.errCode;

/** The service's retries: delivers until acknowledged (errCode 0), bounded in time. */
async function untilAcknowledged(instance: Instance, payload: Record<string, unknown>): Promise<Delivered[]> {
  const answers: Delivered[] = [];
  const until = performance.now() + TAKEOVER_LIMIT_MS;
  for (;;) {
    const answer = await send(instance, payload);
    answers.push(answer);
    if (errCode(answer) === 0) return answers;
    // Never a 5xx or a dropped connection on the way: "busy, retry later" is HTTP 200 with 409.
    expect({ status: answer.status, errCode: errCode(answer) }).toEqual({ status: 200, errCode: 409 });
    if (performance.now() > until) throw new Error(`not acknowledged within ${TAKEOVER_LIMIT_MS} ms: ${answer.text}`);
    await sleep(100);
  }
}

/** How often each trackingId appears in the probe. */
async function probed(instance: Instance): Promise<Map<string, number>> {
  const { text } = await probe(instance.probeUrl);
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/"trackingId":"([^"]+)"/g)) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
  return counts;
}

interface Mode {
  name: string;
  postgres: boolean;
  transactional: boolean;
}

const MODES: Mode[] = [
  { name: 'PostgreSQL', postgres: true, transactional: false },
  { name: 'PostgreSQL, transactional', postgres: true, transactional: true },
  { name: 'SQLite', postgres: false, transactional: false },
  { name: 'SQLite, transactional', postgres: false, transactional: true },
];

let runs = 0;

describe.each(MODES)('a stalled claim holder on $name', (mode) => {
  const n = runs++;
  const table = `stall_${n}`;
  const sqlitePath = join(dir, `stall-${n}.sqlite`);
  const ledgerFile = join(dir, `ledger-${n}.txt`);
  const settings = () => ({
    store: mode.postgres ? postgres.url : sqlitePath,
    table,
    transactional: mode.transactional,
    publicKeyFile,
    apiKey: API_KEY,
    ledgerFile,
    leaseMs: LEASE_MS,
    lockTimeoutMs: LOCK_TIMEOUT_MS,
    busyWaitMs: BUSY_WAIT_MS,
    holdMs: HOLD_MS,
  });
  let b: Instance;
  /** The holder the stall test resumed, alive and well at its end: the crash test's holder (one process start less). */
  let spare: Instance | undefined;

  /** The business effects recorded for `trackingId`: one per processing that committed (or, plain mode, ran). */
  async function effects(trackingId: string): Promise<number> {
    if (!mode.transactional) {
      if (!existsSync(ledgerFile)) return 0;
      return readFileSync(ledgerFile, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${trackingId} `)).length;
    }
    if (mode.postgres) {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        return (
          await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}_ledger WHERE tracking_id = $1`, [
            trackingId,
          ])
        ).rows[0]!.n;
      } finally {
        await client.end();
      }
    }
    const db = openSqlite(sqlitePath);
    try {
      return db
        .prepare<[string], { n: number }>('SELECT count(*) AS n FROM ledger WHERE tracking_id = ?')
        .get(trackingId)!.n;
    } finally {
      db.close();
    }
  }

  beforeAll(async () => {
    if (mode.postgres) {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      await client.query(`CREATE TABLE ${table}_ledger (tracking_id text NOT NULL, pid int NOT NULL)`);
      await client.end();
    } else {
      const db = openSqlite(sqlitePath);
      db.exec('CREATE TABLE ledger (tracking_id TEXT NOT NULL, pid INTEGER NOT NULL)');
      db.close();
    }
    b = await startInstance(settings());
  }, 60_000);

  it('stall: another instance answers an unrelated event while the holder is stopped; resume: the event is processed once', async () => {
    const a = await startInstance(settings());
    const held = deposit({ trackingId: `hold-stall-${n}` });
    const unrelated = deposit({ trackingId: `free-stall-${n}` });
    const late = send(a, held);
    await a.holding(String(held.trackingId));
    a.child.kill('SIGSTOP');
    try {
      if (mode.postgres || !mode.transactional) {
        // Answered and processed while A is still stopped.
        expect((await send(b, unrelated)).json).toEqual({ errCode: 0, message: '' });
        // The service's retries of the stalled event reach B, which takes it over once A's lease ran out.
        await untilAcknowledged(b, held);
      } else {
        // A holds SQLite's write lock. B's event loop is free: its probe answers while its delivery waits for the lock.
        // (With busy_timeout the wait for the lock ran on B's event loop, and the probe was answered only after it.)
        const order: string[] = [];
        const waiting = send(b, unrelated).then((answer) => {
          order.push('callback');
          return answer;
        });
        // Once the delivery asked B's store for its claim it waits for A's lock (the lock bound and the
        // busy wait, over 1 s): the probe goes in while it waits.
        await b.claiming(String(unrelated.trackingId));
        await probe(b.probeUrl);
        order.push('probe');
        const answer = await waiting;
        expect(order).toEqual(['probe', 'callback']);
        expect({ status: answer.status, errCode: errCode(answer) }).toEqual({ status: 200, errCode: 409 });
      }
    } finally {
      a.child.kill('SIGCONT');
    }
    const resumed = await late;
    if (mode.postgres || !mode.transactional) {
      // Resume: A's token was fenced off by B's takeover. Its answer is non-zero, nothing of it is marked.
      expect(resumed.status).toBe(200);
      expect([409, 500]).toContain(errCode(resumed));
      // Transactional: A's ledger row was rolled back; plain: the effect ran in both (at-least-once).
      expect(await effects(String(held.trackingId))).toBe(mode.transactional ? 1 : 2);
    } else {
      // SQLite, transactional: nobody could take the claim while A held the lock, so A's commit stands.
      expect(resumed.json).toEqual({ errCode: 0, message: '' });
      await untilAcknowledged(b, unrelated);
      expect(await effects(String(held.trackingId))).toBe(1);
    }
    expect(await effects(String(unrelated.trackingId))).toBe(1);
    const counts = await probed(b);
    expect(counts.get(String(held.trackingId))).toBe(1);
    expect(counts.get(String(unrelated.trackingId))).toBe(1);
    // Later deliveries are duplicates, everywhere.
    expect((await send(a, held)).json).toEqual({ errCode: 0, message: '' });
    expect(await effects(String(held.trackingId))).toBe(mode.transactional ? 1 : 2);
    // Handed over only when every assertion above held; otherwise the crash test starts its own (afterAll stops every process).
    spare = a;
  }, 90_000);

  it('crash: the holder is killed (SIGKILL) holding a claim; another instance takes the event over and processes it once', async () => {
    const a = spare ?? (await startInstance(settings()));
    spare = undefined;
    const held = deposit({ trackingId: `hold-crash-${n}` });
    const lost = send(a, held).catch(() => undefined);
    await a.holding(String(held.trackingId));
    const exited = new Promise((gone) => a.child.once('exit', gone));
    a.child.kill('SIGKILL');
    await exited;
    expect(await lost).toBeUndefined();
    const unrelated = deposit({ trackingId: `free-crash-${n}` });
    expect((await send(b, unrelated)).json).toEqual({ errCode: 0, message: '' });
    await untilAcknowledged(b, held);
    const counts = await probed(b);
    expect(counts.get(String(held.trackingId))).toBe(1);
    // Transactional: the killed transaction left nothing; plain: A's effect before the crash stays.
    expect(await effects(String(held.trackingId))).toBe(mode.transactional ? 1 : 2);
  }, 90_000);
});
