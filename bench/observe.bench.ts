/**
 * Figures of `wallet-conformance observe`: what it adds on loopback, judging as a live run does.
 *
 * Observe runs as a live run with `--ui` has it (issue 34's setting): the proxy, the judge on its
 * own thread holding every key (so it opens every request it judges), the live page with a browser's
 * event stream read throughout, and its /metrics scraped every second. Beside it, in the
 * same run, a plain node:http forwarding proxy (pipe in, pipe out, kept-alive upstream
 * connections): what any proxy costs on this machine, issue 34's yardstick.
 *
 * - Added latency: the same getEnergyMaxCount request, one at a time on a kept-alive connection,
 *   straight to a bare upstream, through the plain proxy and through observe, in alternating
 *   batches (so drift of a shared machine hits every route alike); p50 and p99 of each, and
 *   p99(observe) − p99(direct). Goal ≤ 2 ms.
 * - Throughput: autocannon (16 connections) straight, through the plain proxy and through
 *   observe, in front of a bare upstream (a node:http server answering with one real answer of the
 *   emulator, recorded at the start: the worst case, where the proxy's own work is as large as the
 *   upstream's) and in front of the emulator (real order traffic: 2048-bit RSA). The plain proxy
 *   and observe alternate for three rounds (OBSERVE_BENCH_ROUNDS), which goes first turning each
 *   round; after each observe run the bench waits until observe is quiet (its judge has caught
 *   up), so no run pays for the one before. The median round's ratio is reported, with the CPU
 *   each proxy spent per request (/proc). Goal: observe ≥ 0.8× the plain proxy.
 * - Forwarding thread's cost: in front of the bare upstream, at a fixed rate both proxies keep up
 *   with, the CPU observe's forwarding thread spends per request ÷ the plain proxy's, median of
 *   short alternating slices (`forwardingCost`). Where forwarding is the limit, throughput follows
 *   it, and it drifts far less than throughput on a shared machine.
 *
 * The judge runs at its default priority (low) and share of a core (--judge-cpu, 25%);
 * OBSERVE_BENCH_PRIORITY=normal and OBSERVE_BENCH_SHARE=<0..1> change them. The browser reading
 * the page's event stream is a process of its own, as a browser is.
 *
 * Each server runs in its own child process (this file with OBSERVE_BENCH_ROLE set), so none
 * shares an event loop with the load. Observe's own code runs as users run it, compiled into dist/
 * (the bench builds it first; bench/compiled.ts), not through the tsx loader that runs the bench.
 * At its stop each observe says how many exchanges it forwarded, judged and shed: under a load its
 * judge cannot follow, the queue sheds judgements, never forwarding.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sealJson } from '../src/crypto/codec.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { startEmulator } from '../src/emulator/server.js';
import { DEFAULT_JUDGE_CPU_PERCENT } from '../src/observe/defaults.js';
import type { ObserveKeys } from '../src/observe/exchange.js';
import type { JudgePriority } from '../src/observe/judge-protocol.js';
import { startBenchChild, startEventReader, type BenchChild, type EventReader } from './child.js';
import { buildDist, compiledObserve } from './compiled.js';
import { medianRound } from './median.js';
import { startBareUpstream, startPlainProxy } from './plain-proxy.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const DURATION_S = Number(process.env.OBSERVE_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const LATENCY_ROUNDS = 20;
/** Throughput rounds, plain proxy and observe alternating (the median round's ratio is reported). */
const ROUNDS = Number(process.env.OBSERVE_BENCH_ROUNDS ?? 3);
const LATENCY_BATCH = 100;
/**
 * The bare upstream's answer: one real answer of the emulator to the bench's request
 * (OBSERVE_BENCH_ANSWER), so the judge opens and passes it as it would a live one.
 */
const BARE_ANSWER = process.env.OBSERVE_BENCH_ANSWER ?? '';

/** Child roles: serve, print the URL, stop on SIGTERM. */
async function child(role: string): Promise<void> {
  let url: string;
  let close: () => Promise<void>;
  if (role === 'bare') {
    ({ url, close } = await startBareUpstream(BARE_ANSWER));
  } else if (role === 'emulator') {
    const emulator = await startEmulator(loadEmulatorConfig(process.env.OBSERVE_BENCH_CONFIG!), { port: 0 });
    url = emulator.url;
    close = () => emulator.close();
  } else if (role === 'plain') {
    ({ url, close } = await startPlainProxy(process.env.OBSERVE_BENCH_UPSTREAM!));
  } else {
    ({ url, close } = await observeChild());
  }
  process.stdout.write(`listening ${url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  await close();
  process.exit(0);
}

/**
 * Observe as a live run with `--ui` has it: the proxy, the judge on its thread with every key (so it
 * opens each request: 2048-bit RSA against the emulator), the live page with its metrics scraped
 * every second (a browser's event stream is read by the parent). At the stop it says how many
 * exchanges the judge judged and how many its queue shed.
 */
async function observeChild(): Promise<{ url: string; close: () => Promise<void> }> {
  const keys = JSON.parse(process.env.OBSERVE_BENCH_KEYS!) as ObserveKeys;
  const { createObserveMetrics, LiveFeed, judgeKeys, createScrubber, JudgeQueue, startObserveProxy, startLivePage } =
    await compiledObserve();
  const metrics = createObserveMetrics();
  const feed = new LiveFeed({ keys: judgeKeys(keys), scrubber: createScrubber([{ kind: 'ak', value: keys.apiKey! }]) });
  const queue = JudgeQueue.start(
    { keys, strict: false },
    {
      onFindings: (findings) => (metrics.findings(findings), feed.findings(findings)),
      onError: (error) => process.stderr.write(`observe bench: the judge failed: ${(error as Error).message}\n`),
      onShed: () => metrics.notJudged('shed'),
      ...(process.env.OBSERVE_BENCH_PRIORITY ? { priority: process.env.OBSERVE_BENCH_PRIORITY as JudgePriority } : {}),
      // The judge's share of a core as a live run has it (--judge-cpu), or OBSERVE_BENCH_SHARE.
      cpuShare: Number(process.env.OBSERVE_BENCH_SHARE ?? DEFAULT_JUDGE_CPU_PERCENT / 100),
    },
  );
  await queue.ready();
  const proxy = await startObserveProxy({
    listeners: [
      { direction: 'merchant→service', host: '127.0.0.1', port: 0, upstream: process.env.OBSERVE_BENCH_UPSTREAM! },
    ],
    onExchange: (exchange) => {
      metrics.exchange(exchange);
      feed.exchange(exchange);
      queue.submit(exchange);
    },
  });
  const page = await startLivePage(feed, metrics, '127.0.0.1', 0);
  const scraper = setInterval(
    () =>
      void fetch(`${page.url}/metrics`).then(
        (answer) => answer.text(),
        () => '',
      ),
    1_000,
  );
  return {
    url: `${proxy.addresses[0]!.url}|${page.url}`,
    close: async () => {
      clearInterval(scraper);
      await page.close();
      await proxy.close();
      const result = await queue.close({ deadline: Date.now() + 2_000 });
      process.stderr.write(
        `  observe in front of ${process.env.OBSERVE_BENCH_UPSTREAM}: ${proxy.exchanges} exchanges forwarded, ${result.exchanges} judged, ${queue.notJudged} not judged (shed by the judge's queue, or still waiting at the stop)\n`,
      );
    },
  };
}

/** A route under load: its URL and the CPU its process (every thread, or the main one) has spent. */
type Served = Pick<BenchChild, 'url' | 'cpu' | 'mainThreadCpu'>;

/** A browser on observe's live page, in its own process: the page's URL split off the child's. */
async function watchPage(child: BenchChild, readers: EventReader[]): Promise<Served> {
  const [url, page] = child.url.split('|') as [string, string];
  readers.push(await startEventReader(`${page}/events`));
  return { url, cpu: child.cpu, mainThreadCpu: child.mainThreadCpu };
}

function startChild(
  role: 'bare' | 'emulator' | 'proxy' | 'plain',
  env: Record<string, string> = {},
): Promise<BenchChild> {
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
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-api-key': apiKey,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - started)
            : reject(new Error(`answered ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

type Route = 'direct' | 'plain' | 'through';

/**
 * Sequential requests on a kept-alive connection to each route, in alternating batches (the order
 * turns every round, so drift of a shared machine hits every route alike); each route's times sorted.
 */
async function latency(urls: Record<Route, string>, body: string, apiKey: string): Promise<Record<Route, number[]>> {
  const routes = Object.keys(urls) as Route[];
  const times: Record<Route, number[]> = { direct: [], plain: [], through: [] };
  for (let i = 0; i < 300; i++) await once(urls[routes[i % routes.length]!], body, apiKey);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    const order = routes.map((_, i) => routes[(i + round) % routes.length]!);
    for (const route of order)
      for (let i = 0; i < LATENCY_BATCH; i++) times[route].push(await once(urls[route], body, apiKey));
  }
  for (const route of routes) times[route].sort((a, b) => a - b);
  return times;
}

async function throughput(
  url: string,
  body: string,
  apiKey: string,
  fixed?: { rate: number; seconds: number },
): Promise<{ rps: number; non2xx: number; total: number }> {
  const result = await autocannon({
    url: `${url}${ENERGY}`,
    connections: CONNECTIONS,
    duration: fixed?.seconds ?? DURATION_S,
    ...(fixed ? { overallRate: fixed.rate } : {}),
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': apiKey },
  });
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors, total: result.requests.total };
}

/** Slices of the fixed-rate comparison, the plain proxy and observe alternating (OBSERVE_BENCH_COST_SLICES). */
const COST_SLICES = Number(process.env.OBSERVE_BENCH_COST_SLICES ?? 9);
const COST_SLICE_S = 2;

/**
 * CPU of observe's forwarding thread per request ÷ the plain proxy's (its only busy thread), at a
 * fixed rate both keep up with (half what observe forwarded at saturation), in short slices that
 * alternate, which goes first turning each time; the median slice's ratio. Where the forwarding
 * thread alone limits observe, the throughput ratio follows this one: 0.8× the plain proxy's
 * requests a second needs it at 1.25 or less (on a machine whose cores the judge's thread and the
 * load share too, throughput falls further). It moves far less with this machine's drift than
 * throughput does. What the judge's thread spends is not in it; answers the judge sends back
 * while a slice runs are.
 */
async function forwardingCost(plain: Served, observe: Served, rate: number, body: string, apiKey: string) {
  const slices: Array<{ plain: number; observe: number }> = [];
  for (let slice = 0; slice < COST_SLICES; slice++) {
    const spent = { plain: 0, observe: 0 };
    for (const name of slice % 2 === 0 ? (['plain', 'observe'] as const) : (['observe', 'plain'] as const)) {
      const route = name === 'plain' ? plain : observe;
      const before = route.mainThreadCpu();
      const { total } = await throughput(route.url, body, apiKey, { rate, seconds: COST_SLICE_S });
      spent[name] = ((route.mainThreadCpu() - before) * 1e6) / Math.max(1, total);
    }
    slices.push(spent);
  }
  return medianRound(slices, (one) => one.observe / one.plain);
}

/**
 * Waits until observe is quiet (under 5% of a core over half a second: its judge has caught up
 * with what the last round queued), at most 30 s, so no round pays for the one before it.
 */
async function settled(cpu: () => number): Promise<void> {
  const until = Date.now() + 30_000;
  let last = cpu();
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpu();
    if (now - last < 0.025) return;
    last = now;
  }
}

interface Measured {
  rps: number;
  non2xx: number;
  /** CPU of the process that forwarded, per request (µs; every thread: observe's judge included). */
  cpuMicros: number;
}
interface Round {
  plainly: Measured;
  proxied: Measured;
}

/** One round: the plain proxy and observe, one after the other (`plainFirst` says which first). */
async function compareOnce(
  plain: BenchChild,
  observe: Served,
  plainFirst: boolean,
  body: string,
  apiKey: string,
): Promise<Round> {
  const run = async (route: Served): Promise<Measured> => {
    const before = route.cpu();
    const result = await throughput(route.url, body, apiKey);
    const cpuMicros = ((route.cpu() - before) * 1e6) / Math.max(1, result.rps * DURATION_S);
    // Observe's judge may still be judging what the round queued: the next round waits for it.
    if (route === observe) await settled(observe.cpu);
    return { ...result, cpuMicros };
  };
  if (plainFirst) {
    const plainly = await run(plain);
    return { plainly, proxied: await run(observe) };
  }
  const proxied = await run(observe);
  return { plainly: await run(plain), proxied };
}

/** The added latency and the throughputs, each line with its goal. */
async function measure(
  children: {
    bare: BenchChild;
    emulator: BenchChild;
    observe: Record<'bare' | 'emulator', Served>;
    plain: Record<'bare' | 'emulator', BenchChild>;
  },
  body: string,
  apiKey: string,
): Promise<void> {
  const times = await latency(
    { direct: children.bare.url, plain: children.plain.bare.url, through: children.observe.bare.url },
    body,
    apiKey,
  );
  const row = (name: string, sorted: number[]) =>
    `${name} p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`;
  const added = percentile(times.through, 99) - percentile(times.direct, 99);
  console.log(
    `latency (${times.direct.length} sequential requests per route, kept-alive, bare upstream): ${row('direct', times.direct)}; ${row('through a plain node:http proxy', times.plain)}; ${row('through observe', times.through)}`,
  );
  console.log(
    `  observe's added p99 = ${added.toFixed(2)} ms (goal <= 2 ms: ${added <= 2 ? 'met' : 'NOT met'}); added p50 = ${(percentile(times.through, 50) - percentile(times.direct, 50)).toFixed(2)} ms; the plain proxy's added p99 = ${(percentile(times.plain, 99) - percentile(times.direct, 99)).toFixed(2)} ms`,
  );
  console.log(`throughput: autocannon ${CONNECTIONS} connections, ${DURATION_S} s each, getEnergyMaxCount, loopback`);
  for (const [name, side] of [
    ['emulator (2048-bit RSA)', 'emulator'],
    ['bare upstream (worst case)', 'bare'],
  ] as const) {
    const straight = await throughput(children[side].url, body, apiKey);
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push(await compareOnce(children.plain[side], children.observe[side], round % 2 === 0, body, apiKey));
      const { plainly, proxied } = rounds.at(-1)!;
      console.log(
        `    round ${round + 1}: plain proxy ${plainly.rps.toFixed(0)} req/s (${plainly.cpuMicros.toFixed(0)} µs of CPU each), observe ${proxied.rps.toFixed(0)} req/s (${proxied.cpuMicros.toFixed(0)} µs each while it ran, its judge's thread included): ${(proxied.rps / plainly.rps).toFixed(2)}`,
      );
    }
    // The median round's ratio: rounds alternate which route goes first, so drift hits both.
    const { plainly, proxied } = medianRound(rounds, (one) => one.proxied.rps / one.plainly.rps);
    const ratio = proxied.rps / straight.rps;
    const ofPlain = proxied.rps / plainly.rps;
    const bad = (n: number) => (n > 0 ? `  [${n} answers not 2xx]` : '');
    console.log(
      `  ${name.padEnd(27)} direct=${straight.rps.toFixed(0)} req/s  plain proxy=${plainly.rps.toFixed(0)} req/s  observe=${proxied.rps.toFixed(0)} req/s${bad(straight.non2xx + plainly.non2xx + proxied.non2xx)}`,
    );
    console.log(
      `  ${''.padEnd(27)} observe/plain proxy=${ofPlain.toFixed(2)} (goal >= 0.8: ${ofPlain >= 0.8 ? 'met' : 'NOT met'})  observe/direct=${ratio.toFixed(2)}`,
    );
    if (side !== 'bare') continue;
    const rate = Math.max(500, Math.round(proxied.rps / 2));
    const cost = await forwardingCost(children.plain.bare, children.observe.bare, rate, body, apiKey);
    console.log(
      `  forwarding thread's CPU per request at ${rate} req/s (median of ${COST_SLICES} alternating ${COST_SLICE_S} s slices): plain proxy ${cost.plain.toFixed(0)} µs, observe ${cost.observe.toFixed(0)} µs: ${(cost.observe / cost.plain).toFixed(2)}× (0.8× throughput needs <= 1.25×)`,
    );
  }
}

export default async function bench(): Promise<void> {
  buildDist();
  const dir = mkdtempSync(join(tmpdir(), 'wc-observe-bench-'));
  const children: BenchChild[] = [];
  const readers: EventReader[] = [];
  const pages: Array<Served> = [];
  try {
    const { configPath } = initEmulatorDir(dir, { bits: 2048, store: ':memory:', port: 0 });
    const merchant = loadEmulatorConfig(configPath).merchants[0]!;
    const body = new URLSearchParams({
      data: sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', merchant.keyPair.publicKey),
    }).toString();
    const keys = JSON.stringify({
      publicKeyPem: merchant.keyPair.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: merchant.keyPair.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
      apiKey: merchant.apiKey,
    });
    const start = async (
      role: 'bare' | 'emulator' | 'proxy' | 'plain',
      upstream?: BenchChild,
      extra: Record<string, string> = {},
    ) => {
      const env: Record<string, string> = upstream
        ? { OBSERVE_BENCH_UPSTREAM: upstream.url, OBSERVE_BENCH_KEYS: keys }
        : { OBSERVE_BENCH_CONFIG: configPath, ...extra };
      const started = await startChild(role, env);
      children.push(started);
      return started;
    };
    const emulator = await start('emulator');
    const answer = await fetch(new URL(ENERGY, emulator.url), {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
    });
    if (answer.status !== 200) throw new Error(`the emulator answered ${answer.status}`);
    const bare = await start('bare', undefined, { OBSERVE_BENCH_ANSWER: await answer.text() });
    pages.push(
      await watchPage(await start('proxy', bare), readers),
      await watchPage(await start('proxy', emulator), readers),
    );
    await measure(
      {
        bare,
        emulator,
        observe: { bare: pages[0]!, emulator: pages[1]! },
        plain: { bare: await start('plain', bare), emulator: await start('plain', emulator) },
      },
      body,
      merchant.apiKey,
    );
  } finally {
    agent.destroy();
    await Promise.all(readers.map((reader) => reader.stop()));
    await Promise.all(children.map((started) => started.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.OBSERVE_BENCH_ROLE) await child(process.env.OBSERVE_BENCH_ROLE);
