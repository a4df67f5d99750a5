/**
 * Figures of observe's live page (`--ui`, issue 34): what the page costs forwarding while a browser
 * listens, and whether its memory stays flat.
 *
 * - Throughput: autocannon (16 connections) against a bare upstream (a node:http server answering a
 *   fixed order answer: the worst case, where the proxy's own work is as large as the upstream's)
 *   through a plain node:http forwarding proxy, through observe's proxy alone, and through observe's
 *   proxy feeding the live page and the metrics with an event-stream client reading (a process of
 *   its own, as a browser is). The three alternate for three rounds (OBSERVE_BENCH_ROUNDS), which
 *   goes first turning each round, and the median round counts. Goal: with the page ≥ 0.8× the
 *   plain proxy.
 * - Added latency: sequential requests straight and through observe with the page, alternating
 *   batches; p99(through) − p99(direct). Goal ≤ 2 ms.
 * - Memory: the page's feed after 10,000 and after 1,000,000 synthetic exchanges (and a finding
 *   every 10th), heap after a full GC. Goal: within 1.2×.
 *
 * Each server runs in its own child process (this file with OBSERVE_UI_BENCH_ROLE set). The
 * proxy's judge is left out (it only counts): these are the page's and the proxy's figures.
 * Observe's code runs compiled, from dist/, as users run it (bench/compiled.ts).
 */
import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { ObservedExchange } from '../src/observe/exchange.js';
import { startBenchChild, startEventReader, type BenchChild } from './child.js';
import { buildDist, compiledObserve } from './compiled.js';
import { medianRound } from './median.js';
import { startBareUpstream, startPlainProxy } from './plain-proxy.js';

const ENERGY = '/api/v1/api/order/getEnergyMaxCount';
const DURATION_S = Number(process.env.OBSERVE_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
/** Throughput rounds, the three routes alternating (the median round's ratio is reported). */
const ROUNDS = Number(process.env.OBSERVE_BENCH_ROUNDS ?? 3);
const ANSWER = JSON.stringify({ code: 0, message: '', data: 'A'.repeat(344) });
const BODY = `data=${'B'.repeat(344)}`;
const API_KEY = 'ak_bench_0123456789abcdef';

type Role = 'bare' | 'plain' | 'proxy' | 'ui';

/** Listens on a free loopback port and prints `listening URL[ UI]`; stops on SIGTERM. */
async function child(role: Role): Promise<void> {
  const upstream = process.env.OBSERVE_BENCH_UPSTREAM!;
  let urls: string;
  let close: () => Promise<unknown>;
  if (role === 'plain') {
    const plain = await startPlainProxy(upstream);
    urls = plain.url;
    close = plain.close;
  } else if (role === 'bare') {
    const bare = await startBareUpstream(ANSWER);
    urls = bare.url;
    close = bare.close;
  } else {
    const { createObserveMetrics, LiveFeed, judgeKeys, createScrubber, startLivePage, startObserveProxy } =
      await compiledObserve();
    const metrics = createObserveMetrics();
    const feed = new LiveFeed({ keys: judgeKeys({}), scrubber: createScrubber([{ kind: 'ak', value: API_KEY }]) });
    const page = role === 'ui' ? await startLivePage(feed, metrics, '127.0.0.1', 0) : undefined;
    const proxy = await startObserveProxy({
      listeners: [{ direction: 'merchant→service', host: '127.0.0.1', port: 0, upstream }],
      onExchange: (exchange) => {
        if (!page) return;
        metrics.exchange(exchange);
        feed.exchange(exchange);
      },
    });
    urls = `${proxy.addresses[0]!.url}${page ? ` ${page.url}` : ''}`;
    close = async () => (await page?.close(), await proxy.close());
  }
  process.stdout.write(`listening ${urls.replace(' ', '|')}\n`);
  await new Promise((done) => process.once('SIGTERM', done));
  await close();
  process.exit(0);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function once(url: string): Promise<number> {
  const target = new URL(ENERGY, url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-api-key': API_KEY,
      'content-length': BODY.length,
    };
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers },
      (res) => res.resume().on('end', () => resolve(performance.now() - started)),
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

const p99 = (times: number[]) => [...times].sort((a, b) => a - b)[Math.ceil(0.99 * times.length) - 1]!;

async function addedP99(direct: string, through: string): Promise<{ direct: number; through: number }> {
  const times = { direct: [] as number[], through: [] as number[] };
  for (let i = 0; i < 200; i++) await once(i % 2 ? direct : through);
  for (let round = 0; round < 20; round++)
    for (const name of round % 2 ? (['direct', 'through'] as const) : (['through', 'direct'] as const))
      for (let i = 0; i < 100; i++) times[name].push(await once(name === 'direct' ? direct : through));
  return { direct: p99(times.direct), through: p99(times.through) };
}

async function rps(url: string): Promise<number> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': API_KEY };
  const result = await autocannon({
    url: `${url}${ENERGY}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    body: BODY,
    headers,
  });
  return result.requests.average;
}

interface Round {
  plain: number;
  proxy: number;
  ui: number;
}

/**
 * The three routes' requests a second, one after the other, for `ROUNDS` rounds (which goes first
 * turning each round, so drift of a shared machine hits every route alike); the median round by
 * --ui/plain.
 */
async function throughput(urls: Record<keyof Round, string>): Promise<Round> {
  const routes = Object.keys(urls) as Array<keyof Round>;
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const measured: Round = { plain: 0, proxy: 0, ui: 0 };
    for (const route of routes.map((_, i) => routes[(i + round) % routes.length]!))
      measured[route] = await rps(urls[route]);
    rounds.push(measured);
    console.log(
      `    round ${round + 1}: plain proxy ${measured.plain.toFixed(0)} req/s, observe ${measured.proxy.toFixed(0)} req/s, observe --ui with a client ${measured.ui.toFixed(0)} req/s: ${(measured.ui / measured.plain).toFixed(2)}`,
    );
  }
  return medianRound(rounds, (one) => one.ui / one.plain);
}

/** Heap used (MiB) after a full collection. */
function heapMiB(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

async function memory(): Promise<{ at10k: number; at1m: number }> {
  const { LiveFeed, judgeKeys, createScrubber } = await compiledObserve();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const feed = new LiveFeed({ keys: judgeKeys({}), scrubber: createScrubber([]), schedule: () => undefined });
  const base: ObservedExchange = {
    v: 1,
    seq: 0,
    kind: 'energy',
    direction: 'merchant→service',
    startedAt: 0,
    endedAt: 1,
    request: {
      method: 'POST',
      path: ENERGY,
      headers: { 'x-api-key': API_KEY },
      bodyBase64: Buffer.from(BODY).toString('base64'),
    },
    response: { status: 200, headers: {}, bodyBase64: Buffer.from(ANSWER).toString('base64') },
  };
  let at10k = 0;
  for (let seq = 1; seq <= 1_000_000; seq++) {
    feed.exchange({ ...base, seq, startedAt: seq, endedAt: seq + 1 });
    if (seq % 10 === 0)
      feed.findings([
        {
          id: `observe/seq-${seq}/x`,
          suite: 'observe',
          case: `seq-${seq}`,
          title: 't',
          rules: ['AUTH-KEY'],
          status: 'failed',
          message: 'm',
        },
      ]);
    if (seq % 100 === 0) feed.flush();
    if (seq === 10_000) at10k = heapMiB(gc);
  }
  return { at10k, at1m: heapMiB(gc) };
}

export default async function bench(): Promise<void> {
  buildDist();
  const children: BenchChild[] = [];
  const start = async (role: Role, upstream = '') => {
    const started = await startBenchChild(fileURLToPath(import.meta.url), role, {
      OBSERVE_UI_BENCH_ROLE: role,
      OBSERVE_BENCH_UPSTREAM: upstream,
    });
    children.push(started);
    return started;
  };
  try {
    const bare = await start('bare');
    const plain = await start('plain', bare.url);
    const proxy = await start('proxy', bare.url);
    const [withUi, ui] = (await start('ui', bare.url)).url.split('|') as [string, string];
    const page = await startEventReader(`${ui}/events`);
    const alone = await addedP99(bare.url, proxy.url);
    const latency = await addedP99(bare.url, withUi);
    const added = latency.through - latency.direct;
    console.log(
      `latency (4000 sequential requests each, bare upstream): p99 direct ${latency.direct.toFixed(2)} ms, through observe with --ui and a client ${latency.through.toFixed(2)} ms; observe alone adds ${(alone.through - alone.direct).toFixed(2)} ms`,
    );
    console.log(`  added p99 with --ui = ${added.toFixed(2)} ms (goal <= 2 ms: ${added <= 2 ? 'met' : 'NOT met'})`);
    const median = await throughput({ plain: plain.url, proxy: proxy.url, ui: withUi });
    const [plainRps, proxyRps, uiRps] = [median.plain, median.proxy, median.ui];
    console.log(
      `throughput: autocannon ${CONNECTIONS} connections, ${DURATION_S} s each, bare upstream, loopback; the median of ${ROUNDS} rounds`,
    );
    console.log(
      `  plain node:http proxy=${plainRps.toFixed(0)} req/s  observe=${proxyRps.toFixed(0)} req/s  observe --ui with a client=${uiRps.toFixed(0)} req/s`,
    );
    const ofPlain = uiRps / plainRps;
    console.log(
      `  --ui/plain=${ofPlain.toFixed(2)} (goal >= 0.8: ${ofPlain >= 0.8 ? 'met' : 'NOT met'})  --ui/observe=${(uiRps / proxyRps).toFixed(2)}  event bytes read by the client=${await page.stop()}`,
    );
  } finally {
    agent.destroy();
    await Promise.all(children.map((started) => started.stop()));
  }
  const { at10k, at1m } = await memory();
  const ratio = at1m / at10k;
  console.log(
    `memory of the page's feed (heap after GC): ${at10k.toFixed(1)} MiB after 10,000 exchanges, ${at1m.toFixed(1)} MiB after 1,000,000`,
  );
  console.log(`  ratio = ${ratio.toFixed(2)} (goal <= 1.2: ${ratio <= 1.2 ? 'met' : 'NOT met'})`);
}

if (process.env.OBSERVE_UI_BENCH_ROLE) await child(process.env.OBSERVE_UI_BENCH_ROLE as Role);
