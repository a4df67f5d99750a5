/**
 * Figures of `wallet-conformance observe` (the proxy half): what it adds on loopback.
 *
 * - Added latency: the same getEnergyMaxCount request, one at a time on a kept-alive connection,
 *   straight to the upstream and through observe, in alternating batches (so drift of a shared
 *   machine hits both alike); p50 and p99 of each, and p99(through) − p99(direct). Goal ≤ 2 ms.
 * - Throughput: autocannon (16 connections) straight and through, against a bare upstream (a
 *   node:http server answering a fixed order answer: the worst case, where the proxy's own work is
 *   as large as the upstream's) and against the emulator (real order traffic: 2048-bit RSA).
 *   Goal ≥ 0.8× direct.
 *
 * - Against a plain node:http forwarding proxy (pipe in, pipe out) in the same run: issue 34's goal,
 *   through observe ≥ 0.8× through the plain proxy, separates observe's own cost from any proxy's.
 *
 * Each server runs in its own child process (this file with OBSERVE_BENCH_ROLE set), so neither
 * shares an event loop with the load. The proxy hands every exchange to a judge that only counts:
 * these are the proxy's figures; judging runs after each answer has left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sealJson } from '../src/crypto/codec.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { startEmulator } from '../src/emulator/server.js';
import { startObserveProxy } from '../src/observe/proxy.js';
import { startBenchChild, type BenchChild } from './child.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const DURATION_S = Number(process.env.OBSERVE_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const LATENCY_ROUNDS = 20;
const LATENCY_BATCH = 100;
/** A sealed answer of the size the emulator sends (base64 of a 2048-bit block). */
const BARE_ANSWER = JSON.stringify({ code: 0, message: '', data: 'A'.repeat(344) });

/** Child roles: serve, print the URL, stop on SIGTERM. */
async function child(role: string): Promise<void> {
  let url: string;
  let close: () => Promise<void>;
  if (role === 'bare') {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BARE_ANSWER) }).end(BARE_ANSWER),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  } else if (role === 'emulator') {
    const emulator = await startEmulator(loadEmulatorConfig(process.env.OBSERVE_BENCH_CONFIG!), { port: 0 });
    url = emulator.url;
    close = () => emulator.close();
  } else if (role === 'plain') {
    // The yardstick of issue 34: a plain node:http forwarding proxy (pipe in, pipe out, kept-alive
    // upstream connections), no recording, no header work. What any proxy costs on this machine.
    const upstream = new URL(process.env.OBSERVE_BENCH_UPSTREAM!);
    const keepAlive = new http.Agent({ keepAlive: true });
    const server = http.createServer((req, res) => {
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: keepAlive },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  } else {
    let judged = 0;
    const proxy = await startObserveProxy({
      listeners: [{ direction: 'merchant→service', host: '127.0.0.1', port: 0, upstream: process.env.OBSERVE_BENCH_UPSTREAM! }],
      onExchange: () => void judged++,
    });
    url = proxy.addresses[0]!.url;
    close = async () => void (await proxy.close());
  }
  process.stdout.write(`listening ${url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  await close();
  process.exit(0);
}

function startChild(role: 'bare' | 'emulator' | 'proxy' | 'plain', env: Record<string, string> = {}): Promise<BenchChild> {
  return startBenchChild(fileURLToPath(import.meta.url), role, { OBSERVE_BENCH_ROLE: role, ...env });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function once(url: string, body: string, apiKey: string): Promise<number> {
  const target = new URL(ENERGY, url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function latency(direct: string, through: string, body: string, apiKey: string): Promise<{ direct: number[]; through: number[] }> {
  const times = { direct: [] as number[], through: [] as number[] };
  for (let i = 0; i < 200; i++) await once(i % 2 ? direct : through, body, apiKey);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const [name, url] of round % 2
      ? ([
          ['direct', direct],
          ['through', through],
        ] as const)
      : ([
          ['through', through],
          ['direct', direct],
        ] as const)) {
      for (let i = 0; i < LATENCY_BATCH; i++) times[name].push(await once(url, body, apiKey));
    }
  }
  times.direct.sort((a, b) => a - b);
  times.through.sort((a, b) => a - b);
  return times;
}

async function throughput(url: string, body: string, apiKey: string): Promise<{ rps: number; non2xx: number }> {
  const result = await autocannon({
    url: `${url}${ENERGY}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
  });
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors };
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wc-observe-bench-'));
  const children: BenchChild[] = [];
  try {
    const { configPath } = initEmulatorDir(dir, { bits: 2048, store: ':memory:', port: 0 });
    const merchant = loadEmulatorConfig(configPath).merchants[0]!;
    const body = new URLSearchParams({ data: sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', merchant.keyPair.publicKey) }).toString();
    const start = async (role: 'bare' | 'emulator' | 'proxy' | 'plain', env: Record<string, string> = {}) => {
      const started = await startChild(role, env);
      children.push(started);
      return started;
    };

    const bare = await start('bare');
    const bareProxy = await start('proxy', { OBSERVE_BENCH_UPSTREAM: bare.url });
    const times = await latency(bare.url, bareProxy.url, body, merchant.apiKey);
    const row = (name: string, sorted: number[]) => `${name} p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`;
    const added = percentile(times.through, 99) - percentile(times.direct, 99);
    console.log(
      `latency (${times.direct.length} sequential requests each way, kept-alive, bare upstream): ${row('direct', times.direct)}; ${row('through observe', times.through)}`,
    );
    console.log(
      `  added p99 = ${added.toFixed(2)} ms (goal <= 2 ms: ${added <= 2 ? 'met' : 'NOT met'}); added p50 = ${(percentile(times.through, 50) - percentile(times.direct, 50)).toFixed(2)} ms`,
    );

    const emulator = await start('emulator', { OBSERVE_BENCH_CONFIG: configPath });
    const emulatorProxy = await start('proxy', { OBSERVE_BENCH_UPSTREAM: emulator.url });
    const plain = {
      emulator: await start('plain', { OBSERVE_BENCH_UPSTREAM: emulator.url }),
      bare: await start('plain', { OBSERVE_BENCH_UPSTREAM: bare.url }),
    };
    console.log(`throughput: autocannon ${CONNECTIONS} connections, ${DURATION_S} s each, getEnergyMaxCount, loopback`);
    for (const [name, direct, through, yardstick] of [
      ['emulator (2048-bit RSA)', emulator, emulatorProxy, plain.emulator],
      ['bare upstream (worst case)', bare, bareProxy, plain.bare],
    ] as const) {
      const straight = await throughput(direct.url, body, merchant.apiKey);
      const proxied = await throughput(through.url, body, merchant.apiKey);
      const plainly = await throughput(yardstick.url, body, merchant.apiKey);
      const ratio = proxied.rps / straight.rps;
      const ofPlain = proxied.rps / plainly.rps;
      console.log(
        `  ${name.padEnd(27)} direct=${straight.rps.toFixed(0)} req/s  through=${proxied.rps.toFixed(0)} req/s  through/direct=${ratio.toFixed(2)} (goal >= 0.8: ${ratio >= 0.8 ? 'met' : 'NOT met'})${straight.non2xx + proxied.non2xx > 0 ? `  [${straight.non2xx}/${proxied.non2xx} answers not 2xx]` : ''}`,
      );
      console.log(
        `  ${''.padEnd(27)} plain node:http proxy=${plainly.rps.toFixed(0)} req/s  through/plain=${ofPlain.toFixed(2)} (issue 34's goal >= 0.8: ${ofPlain >= 0.8 ? 'met' : 'NOT met'})${plainly.non2xx > 0 ? `  [${plainly.non2xx} answers not 2xx]` : ''}`,
      );
    }
  } finally {
    agent.destroy();
    await Promise.all(children.map((started) => started.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.OBSERVE_BENCH_ROLE) await child(process.env.OBSERVE_BENCH_ROLE);
