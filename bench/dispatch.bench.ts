/**
 * `npm run bench dispatch`: the emulator's callback dispatch rate next to the rate at which one core
 * seals callbacks (the dispatcher's CPU bound: each delivery is sealed with the merchant's 2048-bit
 * private key), as a ratio (goal: dispatch / seal >= 0.8). The emulator runs in a child process
 * (this file with DISPATCH_BENCH_ROLE set) with a SQLite file store; the receiver, in this process,
 * acknowledges at once and counts each delivery (every one must be acknowledged exactly once).
 * The concurrent run is measured in rounds (DISPATCH_BENCH_ROUNDS, default 3), each between two
 * measurements of the seal rate; the figure is the median of the rounds' ratios, so one round the
 * machine starved does not decide it (docs/decisions/0096-outbox-write-window.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LosslessNumber } from '../src/core/exact-json.js';
import {
  controlEmitCallback,
  controlListDeliveries,
  type ControlClient,
  type ControlEmitCallbackAnswer,
  type ControlListDeliveriesAnswer,
} from '../src/generated/control-client.js';
import { sealCallback, withRequestUUID } from '../src/wire/callback-delivery.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { SealPool } from '../src/emulator/seal-pool.js';
import { median } from './median.js';
import { startEmulator } from '../src/emulator/server.js';
import type { RsaPrivateKey } from '../src/crypto/keys.js';

const DELIVERIES = Number(process.env.DISPATCH_BENCH_DELIVERIES ?? 2_000);
/** Concurrent deliveries sent before the measured runs (DISPATCH_BENCH_WARM_UP; default: as many as the measured run). */
const WARM_UP = Number(process.env.DISPATCH_BENCH_WARM_UP ?? DELIVERIES);
const GOAL = 0.8;
/** Measured rounds of the concurrent run (each with its own seal rate around it). */
const ROUNDS = Math.max(1, Number(process.env.DISPATCH_BENCH_ROUNDS ?? 3));

/**
 * CPU µs of this process's main thread alone (the emulator's event loop, without the sealing
 * threads), from /proc on Linux (clock ticks of 10 ms); -1 elsewhere.
 */
function mainThreadCpu(): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return -1;
  }
}

/** Child role: the emulator; prints its URL, stops on SIGTERM. */
async function child(configPath: string): Promise<void> {
  // DISPATCH_BENCH_SPARE=0: one sealing thread and no spare (the dispatcher's own overhead, for comparison).
  const sealer = process.env.DISPATCH_BENCH_SPARE === '0' ? new SealPool({ spare: false }) : undefined;
  await sealer?.warm();
  const emulator = await startEmulator(loadEmulatorConfig(configPath), { port: 0, ...(sealer ? { sealer } : {}) });
  // How late the event loop ran its timers (the spare thread must not hold it back), reset at each report.
  // The histogram holds whole intervals between its timer's runs: its resolution plus the lateness.
  const resolutionMs = 10;
  const delay = monitorEventLoopDelay({ resolution: resolutionMs });
  delay.enable();
  // The parent reads this process's CPU time around each run (SIGUSR2 -> "cpu <microseconds>").
  // And how busy its event loop was since the last such signal (1: the emulator's thread was the bottleneck).
  // Listening before the line below: the parent may signal as soon as it reads it, and a SIGUSR2
  // with no listener ends the process.
  let elu = performance.eventLoopUtilization();
  process.on('SIGUSR2', () => {
    const { user, system } = process.cpuUsage();
    const busy = performance.eventLoopUtilization(elu);
    elu = performance.eventLoopUtilization();
    // The monotonic clock in µs (the clock of V8's CPU profiles): a profile can be cut to the measured run.
    process.stdout.write(
      `cpu ${user + system} ${busy.utilization.toFixed(3)} ${process.hrtime.bigint() / 1000n} ${mainThreadCpu()} ${Math.max(0, delay.percentile(99) / 1e6 - resolutionMs).toFixed(1)}\n`,
    );
    delay.reset();
  });
  process.stdout.write(`listening ${emulator.url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  await emulator.close();
  await sealer?.close();
  process.exit(0);
}

interface EmulatorChild {
  url: string;
  /** CPU seconds the emulator process used so far (user + system). */
  cpu(): Promise<number>;
  /** The share of wall time its event loop was busy between the last two `cpu()` calls. */
  loopBusy(): number;
  /** Its monotonic clock in µs at the last `cpu()` call (the time base of its CPU profiles). */
  clock(): string;
  /** CPU seconds of its main thread alone at the last `cpu()` call (negative: not known on this system). */
  mainCpu(): number;
  /** The 99th percentile of its event loop's delay (ms) between the last two `cpu()` calls. */
  loopDelayP99(): number;
  pid: number;
  stop(): Promise<void>;
}

function startChild(configPath: string, spare = true): Promise<EmulatorChild> {
  // BENCH_CPU_PROF=<dir>: the emulator child (and its sealing threads) write V8 CPU profiles there (bench/cpu-profile.ts sums them).
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const proc: ChildProcess = spawn(process.execPath, [...prof, '--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      DISPATCH_BENCH_ROLE: 'emulator',
      DISPATCH_BENCH_CONFIG: configPath,
      DISPATCH_BENCH_SPARE: spare ? '1' : '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let cpuWaiter: ((seconds: number) => void) | undefined;
    let exited: Error | undefined;
    let cpuFailed: ((error: Error) => void) | undefined;
    let loopBusy = 0;
    let clock = '';
    let mainCpu = 0;
    let loopDelayP99 = 0;
    let resolved = false;
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const report = /^cpu (\d+) (\S+) (\d+) (-?\d+) (\S+)\n/m;
      for (let line = report.exec(out); line; line = report.exec(out)) {
        out = out.replace(line[0], '');
        loopBusy = Number(line[2]);
        clock = line[3]!;
        mainCpu = Number(line[4]) / 1e6;
        loopDelayP99 = Number(line[5]);
        cpuWaiter?.(Number(line[1]) / 1e6);
      }
      const url = /listening (\S+)\n/.exec(out)?.[1];
      if (url && !resolved) {
        resolved = true;
        resolve({
          url,
          cpu: () =>
            new Promise((done, failed) => {
              if (exited) return failed(exited);
              cpuWaiter = done;
              cpuFailed = failed;
              proc.kill('SIGUSR2');
            }),
          loopBusy: () => loopBusy,
          clock: () => clock,
          mainCpu: () => mainCpu,
          loopDelayP99: () => loopDelayP99,
          stop: () => new Promise((done) => (proc.once('exit', () => done()), proc.kill('SIGTERM'))),
          pid: proc.pid ?? 0,
        });
      }
    });
    proc.once('exit', (code, signal) => {
      // Before it listened, or while the parent waits for its CPU time: either way an error, never a hang.
      exited = new Error(`emulator child exited with ${code ?? signal}: ${out}`);
      reject(exited);
      cpuFailed?.(exited);
    });
  });
}

/** Callbacks sealed on this core per wall second and per CPU second: the payload the emulator sends, a fresh requestUUID each. */
function sealRate(key: RsaPrivateKey, ms = 2_000): { wall: number; cpu: number } {
  const payload = {
    type: new LosslessNumber('1'),
    trackingId: 'dep-7f3a9c',
    txid: 'a'.repeat(64),
    chain: 'TRON',
    symbol: 'USDT',
    toAddress: 'T'.repeat(34),
    amount: '250.000001',
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let n = 0;
  while (performance.now() - t0 < ms) {
    sealCallback(withRequestUUID(payload), key);
    n++;
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: n / ((performance.now() - t0) / 1000), cpu: n / ((cpu.user + cpu.system) / 1e6) };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wc-dispatch-bench-'));
  let received = 0;
  let target = 0;
  let reached: (() => void) | undefined;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0,"message":""}');
      if (received === target) reached?.();
    });
  });
  try {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
    const { configPath } = initEmulatorDir(dir, { bits: 2048, store: 'dispatch.sqlite', callbackUrl, port: 0 });
    const config = loadEmulatorConfig(configPath);
    const merchant = config.merchants[0]!;
    const key = merchant.keyPair.privateKey;
    // The seal rate is taken before the first round and after each one: on a shared machine the load
    // moves, so each round is set against the seal rates on either side of it.
    const seals = [sealRate(key)];
    /** Warm-up, the measured rounds and the sequential run against one emulator child; each round's ratios. */
    const measureEmulator = async (spare: boolean, label: string): Promise<Array<{ wall: number; cpu: number }>> => {
      const emulator = await startChild(configPath, spare);
      // The control API through the generated client, sent with fetch.
      const control: ControlClient = {
        baseUrl: emulator.url,
        token: config.control.token,
        send: async (request) => {
          const res = await fetch(request.url, {
            method: request.method,
            headers: request.headers,
            ...(request.body === undefined ? {} : { body: request.body }),
          });
          return { status: res.status, body: await res.text() };
        },
      };
      /** One run: `count` deliveries emitted at once (concurrent or one after another), timed until the receiver has them all. */
      const measure = async (
        mode: string,
        concurrent: boolean,
        count: number,
      ): Promise<{ wall: number; cpu: number }> => {
        mode = `${label}${mode}`;
        received = 0;
        target = count;
        const done = new Promise<void>((resolve) => (reached = resolve));
        const cpu0 = await emulator.cpu();
        const clock0 = emulator.clock();
        const main0 = emulator.mainCpu();
        const t0 = performance.now();
        // One event holds at most 1,000 deliveries (ControlCallbackRequest): several events, emitted at once.
        const sizes = Array.from({ length: Math.ceil(count / 1_000) }, (_, i) => Math.min(1_000, count - i * 1_000));
        const trackingIds = await Promise.all(
          sizes.map(async (deliveries) => {
            const res = await controlEmitCallback(
              control,
              { userId: merchant.userId },
              { type: 1, deliveries, concurrent },
            );
            if (res.status !== 200) throw new Error(`control API answered ${res.status}: ${res.text}`);
            return (res.json as ControlEmitCallbackAnswer).trackingId;
          }),
        );
        await done;
        const seconds = (performance.now() - t0) / 1000;
        const cpuSeconds = (await emulator.cpu()) - cpu0;
        const rate = { wall: count / seconds, cpu: count / cpuSeconds };
        const loopBusy = emulator.loopBusy();
        const mainMs = main0 < 0 ? undefined : ((emulator.mainCpu() - main0) * 1000) / count;
        if (process.env.BENCH_CPU_PROF || process.env.BENCH_WINDOW)
          console.log(`profile window (${mode}): --from ${clock0} --to ${emulator.clock()} (pid ${emulator.pid})`);
        // Every delivery acknowledged exactly once, as the emulator recorded it.
        const recorded = async () => {
          const lists = await Promise.all(
            trackingIds.map(
              async (trackingId) =>
                ((await controlListDeliveries(control, { trackingId })).json as ControlListDeliveriesAnswer).attempts,
            ),
          );
          return lists.flat();
        };
        let attempts = await recorded();
        for (let i = 0; i < 100 && attempts.length < count; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          attempts = await recorded();
        }
        const acked = attempts.filter((a) => a.verdict === 'acknowledged').length;
        console.log(
          `callback dispatch (${mode}): ${count} deliveries in ${seconds.toFixed(2)} s = ${rate.wall.toFixed(0)} callbacks/s (${rate.cpu.toFixed(0)} per emulator CPU second, its event loop busy ${(loopBusy * 100).toFixed(0)}% of the time and late by up to ${emulator.loopDelayP99()} ms at p99${mainMs === undefined ? '' : `, ${mainMs.toFixed(3)} ms CPU per delivery on its main thread`}); received ${received}, recorded ${attempts.length} attempts, ${acked} acknowledged`,
        );
        return rate;
      };
      const rounds: Array<{ wall: number; cpu: number }> = [];
      try {
        // The warm-up run first (not in the ratio): a long-running emulator's hot paths are compiled;
        // without it V8's optimizing compiler ran in the measured run (0.15 ms of CPU per delivery on
        // its background threads, by `perf record -e task-clock`, docs/decisions/0091-dispatch-figures.md).
        if (WARM_UP > 0) await measure('warm-up', true, WARM_UP);
        for (let round = 1; round <= ROUNDS; round++) {
          const rate = await measure(ROUNDS > 1 ? `concurrent, round ${round}` : 'concurrent', true, DELIVERIES);
          seals.push(sealRate(key, 1_000));
          // Wall rates depend on what else the machine runs; CPU rates compare the work per callback.
          const [before, after] = [seals.at(-2)!, seals.at(-1)!];
          rounds.push({
            wall: rate.wall / ((before.wall + after.wall) / 2),
            cpu: rate.cpu / ((before.cpu + after.cpu) / 2),
          });
        }
        if (spare) await measure('one after another', false, DELIVERIES / 8);
      } finally {
        await emulator.stop();
      }
      return rounds;
    };
    // The emulator as it ships (its sealing threads and the low-priority spare), then with one
    // sealing thread alone: what the dispatcher's own work leaves of one core's seal rate.
    const rounds = await measureEmulator(true, '');
    const alone = await measureEmulator(false, 'one sealing thread, no spare: ');
    const sealWall = seals.map((seal) => seal.wall);
    console.log(
      `reference: one core seals ${median(sealWall).toFixed(0)} callbacks/s (median of ${seals.length} measurements around the rounds, ${Math.min(...sealWall).toFixed(0)} to ${Math.max(...sealWall).toFixed(0)}; ${median(seals.map((seal) => seal.cpu)).toFixed(0)} per CPU second; 2048-bit private key, default profile)`,
    );
    const wall = median(rounds.map((round) => round.wall));
    const cpu = median(rounds.map((round) => round.cpu));
    const each = (list: Array<{ wall: number }>) =>
      list.length > 1
        ? `; medians of ${list.length} rounds, each against the seal rates on either side of it: ${list.map((round) => round.wall.toFixed(2)).join(', ')} by wall time`
        : '';
    console.log(
      `dispatch/seal = ${wall.toFixed(2)} by wall time, ${cpu.toFixed(2)} by CPU time (goal >= ${GOAL}: ${wall >= GOAL ? 'met' : 'NOT met'} by wall time, ${cpu >= GOAL ? 'met' : 'NOT met'} by CPU time)${each(rounds)}`,
    );
    console.log(
      `  with one sealing thread and no spare (informative: the dispatcher's own overhead): ${median(alone.map((round) => round.wall)).toFixed(2)} by wall time, ${median(alone.map((round) => round.cpu)).toFixed(2)} by CPU time${each(alone)}`,
    );
  } finally {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.DISPATCH_BENCH_ROLE) await child(process.env.DISPATCH_BENCH_CONFIG ?? '');
