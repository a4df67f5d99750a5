/**
 * The storm scenario of the benches: separate reference merchant processes
 * (bench/merchant-instance.ts under tsx) driven by `load merchant`'s storm from this process, with
 * the CPU the merchant processes used per event. Shared by merchant.bench.ts (every store) and
 * postgres-instances.bench.ts (PostgreSQL, one and three instances, alone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RsaPrivateKey } from '../src/crypto/keys.js';
import { probeEntriesAfter } from '../src/runner/probe-reader.js';
import { runStorm, type StormResult } from '../src/load/storm.js';

export const STORM_EVENTS = 2000;
export const STORM_CONCURRENCY = 64;
const API_KEY = 'bench-key';

/**
 * On PostgreSQL: a counter of the statements the merchants run from now on, every one (BEGIN, LISTEN
 * and COMMIT too), from pg_stat_statements, which counts a statement as it ends. Undefined where the
 * server has not loaded it (startPostgres's `statementCounts`; a PG_URL server may not): the column
 * then reads `?`. (pg_stat_database's transaction count, used before, is written by a backend at most
 * once a second and up to ten seconds late once it is idle: it moved with the timing, not the work.)
 */
async function statementCounter(store: string): Promise<(() => Promise<number>) | undefined> {
  if (!/^postgres(?:ql)?:\/\//.test(store)) return undefined;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: store });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
  } catch {
    await client.end();
    return undefined;
  }
  await client.end();
  return async () => {
    const reader = new pg.Client({ connectionString: store });
    await reader.connect();
    try {
      // The statements still ending (an UNLISTEN after the last answer) are the storm's too.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { rows } = await reader.query<{ n: string }>(
        `SELECT coalesce(sum(calls), 0) AS n FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`,
      );
      return Number(rows[0]!.n);
    } finally {
      await reader.end();
    }
  };
}

/** A storm's result with the merchant processes' CPU per event. */
export type StormFigures = StormResult & {
  cpuMsPerEvent: number;
  systemMsPerEvent: number;
  statementsPerEvent?: number;
  /** At a set rate: the deliveries per second the storm achieved over the rate asked (1: it kept up). */
  carried?: number;
};

/** A merchant process (bench/merchant-instance.ts under tsx) and its port. */
function instance(store: string, keyFile: string): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=<dir>: each merchant process writes a V8 CPU profile there when it stops (bench/cpu-profile.ts sums it).
    const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const child = spawn(
      process.execPath,
      [...prof, '--import', 'tsx', join(import.meta.dirname, 'merchant-instance.ts'), store, keyFile, API_KEY],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /port (\d+)/.exec(out);
      if (port) resolve({ child, port: Number(port[1]) });
    });
    child.on('exit', (code) => reject(new Error(`merchant instance (${store}) exited with ${code}`)));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  return kernelAndUser(pid).reduce((a, b) => a + b);
}

/** [user, system] CPU seconds of a process so far, from /proc (Linux); NaN elsewhere. */
function kernelAndUser(pid: number): [number, number] {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return [Number(fields[11]) / 100, Number(fields[12]) / 100];
  } catch {
    return [Number.NaN, Number.NaN];
  }
}

/**
 * One measured storm of {@link stormsOn}: `rate` deliveries per second across all instances, or as
 * fast as the storm's in-flight limit allows; `events` (default STORM_EVENTS).
 */
export interface StormPlan {
  rate?: number;
  events?: number;
}

/**
 * One storm against one merchant process per entry of `stores` (`memory`, `ack-only`, a SQLite path,
 * a postgres:// URL). `control`: no duplicates and no exactly-once check (separate memory stores
 * share nothing, and the probe reads the first process only): a CPU figure without a shared store.
 */
export async function stormOn(
  name: string,
  stores: string[],
  keyFile: string,
  privateKey: RsaPrivateKey,
  warmUpPerInstance = 0,
  control = false,
): Promise<StormFigures> {
  return (
    await stormsOn(name, stores, keyFile, privateKey, [{}], {
      warmUpPerInstance,
      duplicates: control ? 0 : 0.3,
      judge: !control,
    })
  )[0]!;
}

/** How {@link stormsOn} runs its storms. */
export interface StormsOptions {
  /** Warm-up events per process before the measured storms (default 0). */
  warmUpPerInstance?: number;
  /** Share of redeliveries (default 0.3). */
  duplicates?: number;
  /** Check exactly-once through the first process's probe (default true; false when the processes share no store). */
  judge?: boolean;
}

/**
 * {@link stormOn} with several measured storms, one after another, against the same processes
 * (warmed once): one figure per plan.
 */
export async function stormsOn(
  name: string,
  stores: string[],
  keyFile: string,
  privateKey: RsaPrivateKey,
  plans: readonly StormPlan[],
  { warmUpPerInstance = 0, duplicates = 0.3, judge = true }: StormsOptions = {},
): Promise<StormFigures[]> {
  const children = await Promise.all(stores.map((store) => instance(store, keyFile)));
  try {
    const urls = children.map(({ port }) => `http://127.0.0.1:${port}/callback`);
    if (warmUpPerInstance > 0) {
      // Each process compiles its hot paths once (V8's JIT): a fixed cost per process, which a
      // short storm would charge to its events, N times over for N instances.
      await runStorm({
        callbackUrls: urls,
        apiKey: API_KEY,
        key: privateKey,
        events: warmUpPerInstance * urls.length,
        duplicates,
        concurrency: STORM_CONCURRENCY,
        durationS: 300,
      });
    }
    const figures: StormFigures[] = [];
    for (const plan of plans) {
      const statements = await statementCounter(stores[0]!);
      const before = children.reduce((sum, { child }) => sum + cpuSeconds(child.pid!), 0);
      const systemBefore = children.reduce((sum, { child }) => sum + kernelAndUser(child.pid!)[1], 0);
      // The monotonic clock in µs (the clock of V8's CPU profiles and of `perf record -k CLOCK_MONOTONIC`,
      // the same in every process): the measured window, printed with BENCH_CPU_PROF or BENCH_WINDOW set.
      const from = process.hrtime.bigint() / 1000n;
      const result = await runStorm({
        callbackUrls: urls,
        apiKey: API_KEY,
        key: privateKey,
        events: plan.events ?? STORM_EVENTS,
        duplicates,
        concurrency: STORM_CONCURRENCY,
        durationS: 300,
        ...(plan.rate ? { rate: plan.rate } : {}),
        ...(stores[0] === 'ack-only' || !judge
          ? {}
          : { probe: () => probeEntriesAfter({ probeUrl: `http://127.0.0.1:${children[0]!.port}/probe` }, undefined) }),
      });
      const cpu = children.reduce((sum, { child }) => sum + cpuSeconds(child.pid!), 0) - before;
      const system = children.reduce((sum, { child }) => sum + kernelAndUser(child.pid!)[1], 0) - systemBefore;
      if (process.env.BENCH_CPU_PROF || process.env.BENCH_WINDOW)
        console.log(
          `  ${name}${plan.rate ? ` at ${plan.rate}/s` : ''}: profile window --from ${from} --to ${process.hrtime.bigint() / 1000n} (pids ${children.map(({ child }) => child.pid).join(' ')})`,
        );
      const perEvent = statements ? (await statements()) / result.events : undefined;
      if (result.exactlyOnce === false)
        throw new Error(`${name}: ${result.offenders.length} events not processed exactly once`);
      figures.push({
        ...result,
        cpuMsPerEvent: (cpu * 1000) / result.events,
        systemMsPerEvent: (system * 1000) / result.events,
        ...(plan.rate ? { carried: result.deliveries / (result.durationMs / 1000) / plan.rate } : {}),
        ...(perEvent === undefined ? {} : { statementsPerEvent: perEvent }),
      });
    }
    return figures;
  } finally {
    for (const { child } of children) child.kill('SIGTERM');
  }
}

/**
 * Merchant CPU per event of three PostgreSQL instances over one under the same storm (each of three
 * carries a third of it). Informative: issue 20's figure (at most 1.2x) compares them at the same
 * load per instance, `npm run bench postgres-instances`.
 */
export function cpuRatioLine(one: StormFigures, three: StormFigures): string {
  return `  PostgreSQL merchant CPU per event, 3 instances ÷ 1, the same storm split three ways: ${(three.cpuMsPerEvent / one.cpuMsPerEvent).toFixed(2)}x (${three.cpuMsPerEvent.toFixed(2)} ÷ ${one.cpuMsPerEvent.toFixed(2)} ms/event)`;
}
