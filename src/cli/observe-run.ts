// The work of `observe` (registered in observe-command.ts), imported when the command runs.
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { parseConfigYaml } from '../core/config-reader.js';
import { ConfigError, MESSAGE_PREFIX } from '../core/errors.js';
import type { NetworkConfig } from '../net/network-config.js';
import { loadServerTls, type ServerTls } from '../net/server-tls.js';
import { CaptureWriter, readCaptureFile, type CaptureSink } from '../observe/capture.js';
import { replayFiles, RotatingCaptureSink } from './capture-files.js';
import { JudgeQueue } from '../observe/judge-queue.js';
import { createObserveMetrics, startMetricsServer, type ObserveMetrics } from '../observe/metrics.js';
import type { Judge, ObserveKeys, ObserveResult, ObservedExchange } from '../observe/exchange.js';
import { createJudge, type JudgeOptions } from '../observe/judge.js';
import {
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  startObserveProxy,
  upstreamPath,
  type ObserveProxy,
  type ProxyListener,
} from '../observe/proxy.js';
import type { CheckResult } from '../runner/types.js';
import { checkReadableFile, readUserFile, loadKeyFile, loadProfile } from './io.js';
import { networkNote, networkFromFlags, type NetworkFlags } from './network-options.js';
import { parseInteger } from './options.js';
import { finish } from './report-output.js';
import { protectKey, scrubData, scrubOutput, settleFlags } from './secrets.js';
import { reportWindow, startInterimReports } from './observe-interim.js';
import { exposedListenerWarnings, JUDGE_DRAIN_MS, stopSignals, upstreamFlag } from './observe-stop.js';
import { liveFeed, serveLivePage, uiAddress } from './observe-ui.js';
import type { LiveFeed } from '../observe/ui/feed.js';

/** The flags of `observe`. */
export interface ObserveFlags extends NetworkFlags {
  serviceUrl?: string;
  cardServiceUrl?: string;
  listen?: string;
  listenTls?: string;
  merchantUrl?: string;
  callbackListen?: string;
  callbackListenTls?: string;
  publicKey?: string;
  privateKey?: string;
  apiKey?: string;
  profile?: string;
  reports: string;
  capture?: string;
  captureMaxMb?: string;
  captureMaxAge?: string;
  captureKeep?: string;
  duration?: string;
  upstreamTimeout?: string;
  reportEvery?: string;
  metrics?: string;
  ui?: string;
  /** Files or globs, in order (commander gives a variadic option as a list). */
  replay?: string | string[];
  strict?: boolean;
}

/** `[HOST:]PORT` of a listener (host 127.0.0.1 unless given: a proxy is opened to the network on purpose). */
function listenAddress(value: string, flag: string): { host: string; port: number } {
  const match = /^(?:\[?([^\]]*)\]?:)?(\d+)$/.exec(value.trim());
  if (!match) throw new ConfigError('bad-flag', `${flag} takes [HOST:]PORT, not ${JSON.stringify(value)}`);
  return { host: match[1] || '127.0.0.1', port: parseInteger(match[2]!, flag, { min: 0, max: 65_535 }) };
}

/** A YAML file's `tls:` block (cert, key, clientCa: as in emulator.yaml and merchant.yaml; other keys are ignored). */
function listenerTls(file: string, flag: string): ServerTls {
  const document = parseConfigYaml(readUserFile(file, `${flag} file`).toString('utf8'), file, 'bad-config');
  const raw =
    typeof document === 'object' && document !== null && !Array.isArray(document)
      ? (document as Record<string, unknown>).tls
      : undefined;
  if (raw === undefined || raw === null)
    throw new ConfigError('bad-config', `${file}: no tls: block (${flag} needs tls: {cert: FILE, key: FILE})`);
  return loadServerTls(raw, dirname(resolve(file)), file)!;
}

function seconds(value: string, flag: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) <= 0)
    throw new ConfigError('bad-flag', `${flag} takes a positive number of seconds, not ${JSON.stringify(value)}`);
  return Number(value) * 1000;
}

/** The listeners the flags ask for; each side needs both its listener and its upstream, and at least one side is needed. */
function listenersOf(flags: ObserveFlags): ProxyListener[] {
  const listeners: ProxyListener[] = [];
  const pairs = [
    {
      listen: flags.listen,
      listenFlag: '--listen',
      url: flags.serviceUrl,
      urlFlag: '--service-url',
      tls: flags.listenTls,
      tlsFlag: '--listen-tls',
      direction: 'merchant→service' as const,
    },
    {
      listen: flags.callbackListen,
      listenFlag: '--callback-listen',
      url: flags.merchantUrl,
      urlFlag: '--merchant-url',
      tls: flags.callbackListenTls,
      tlsFlag: '--callback-listen-tls',
      direction: 'service→merchant' as const,
    },
  ];
  for (const pair of pairs) {
    if (pair.listen === undefined && pair.url === undefined) {
      if (pair.tls !== undefined)
        throw new ConfigError('bad-flag', `${pair.tlsFlag} goes with ${pair.listenFlag} PORT`);
      continue;
    }
    if (pair.listen === undefined)
      throw new ConfigError(
        'bad-flag',
        `${pair.urlFlag} needs ${pair.listenFlag} [HOST:]PORT (where the other side sends its requests)`,
      );
    if (pair.url === undefined)
      throw new ConfigError('bad-flag', `${pair.listenFlag} needs ${pair.urlFlag} URL (where the requests go on to)`);
    listeners.push({
      direction: pair.direction,
      ...listenAddress(pair.listen, pair.listenFlag),
      upstream: upstreamFlag(pair.url, pair.urlFlag),
      ...(pair.tls === undefined ? {} : { tls: listenerTls(pair.tls, pair.tlsFlag) }),
      ...(pair.direction === 'merchant→service' && flags.cardServiceUrl !== undefined
        ? { cardUpstream: upstreamFlag(flags.cardServiceUrl, '--card-service-url') }
        : {}),
    });
  }
  if (flags.cardServiceUrl !== undefined && flags.serviceUrl === undefined)
    throw new ConfigError('bad-flag', '--card-service-url goes with --service-url and --listen');
  if (listeners.length === 0)
    throw new ConfigError(
      'bad-flag',
      'observe needs --listen PORT with --service-url URL, --callback-listen PORT with --merchant-url URL, or both (or --replay FILE)',
    );
  return listeners;
}

/** The keys the judge may use; a key file that cannot be read or parsed is one line, exit 2. */
function keysOf(flags: ObserveFlags): ObserveKeys {
  if (flags.publicKey === undefined)
    throw new ConfigError(
      'missing-option',
      "--public-key FILE is required (the merchant's public key: PEM or bare Base64 DER)",
    );
  const publicKey = loadKeyFile(flags.publicKey, 'public');
  const privateKey = flags.privateKey === undefined ? undefined : loadKeyFile(flags.privateKey, 'private');
  if (privateKey) protectKey(privateKey);
  return {
    publicKeyPem: publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
    ...(privateKey ? { privateKeyPem: privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString() } : {}),
    ...(flags.apiKey === undefined ? {} : { apiKey: flags.apiKey }),
  };
}

/**
 * Prints each failed or warning result once, as it is known. A result is remembered by its id: the
 * judge's thread sends copies, and its final report holds the same results again. The ids are as
 * many as the judge's individual results, which its tally bounds (per check and status), so memory
 * stays bounded however long observe runs.
 */
function findingPrinter(): { print(results: readonly CheckResult[]): void } {
  const printed = new Set<string>();
  return {
    print(results) {
      for (const result of results) {
        if (result.status !== 'failed' && result.status !== 'warning') continue;
        if (printed.has(result.id)) continue;
        printed.add(result.id);
        process.stdout.write(
          scrubOutput(
            `  ${result.status === 'failed' ? 'FAIL' : 'WARN'} ${result.id} [${result.rules.join(', ')}]: ${result.message}\n`,
          ),
        );
      }
    },
  };
}

/** `--capture-max-mb MB`, `--capture-max-age SECONDS`, `--capture-keep N`: the capture rotates (each needs --capture; --capture-keep needs a rotation). */
function captureRotation(flags: ObserveFlags): Pick<LivePlan, 'capture'> {
  if (flags.captureMaxMb === undefined && flags.captureMaxAge === undefined) {
    if (flags.captureKeep !== undefined)
      throw new ConfigError(
        'bad-flag',
        '--capture-keep goes with --capture-max-mb MB or --capture-max-age SECONDS (it counts rotated files)',
      );
    return {};
  }
  if (flags.capture === undefined)
    throw new ConfigError(
      'bad-flag',
      `${flags.captureMaxMb === undefined ? '--capture-max-age' : '--capture-max-mb'} goes with --capture FILE`,
    );
  if (
    flags.captureMaxMb !== undefined &&
    (!/^\d+(\.\d+)?$/.test(flags.captureMaxMb.trim()) || Number(flags.captureMaxMb) <= 0)
  )
    throw new ConfigError(
      'bad-flag',
      `--capture-max-mb takes a positive number of MiB, not ${JSON.stringify(flags.captureMaxMb)}`,
    );
  const keep =
    flags.captureKeep === undefined
      ? undefined
      : parseInteger(flags.captureKeep, '--capture-keep', { min: 1, max: 1_000_000 });
  return {
    capture: {
      ...(flags.captureMaxMb === undefined ? {} : { maxBytes: Math.round(Number(flags.captureMaxMb) * 1024 * 1024) }),
      ...(flags.captureMaxAge === undefined ? {} : { maxAgeMs: seconds(flags.captureMaxAge, '--capture-max-age') }),
      ...(keep === undefined ? {} : { keep }),
    },
  };
}

/** `--metrics [HOST:]PORT` (loopback unless a host is named); never a proxy listener's own address. */
function metricsAddress(value: string | undefined, listeners: readonly ProxyListener[]): Pick<LivePlan, 'metrics'> {
  if (value === undefined) return {};
  const address = listenAddress(value, '--metrics');
  if (address.port !== 0 && listeners.some((listener) => listener.port === address.port))
    throw new ConfigError(
      'bad-flag',
      `--metrics ${value}: port ${address.port} is a proxy listener's (give the metrics their own port)`,
    );
  return { metrics: address };
}

/** Starts the metrics server after the proxy; one that cannot listen closes the proxy and is one line. */
async function serveMetrics(
  metrics: ObserveMetrics,
  at: { host: string; port: number },
  proxy: ObserveProxy,
): Promise<{ close: () => Promise<void> }> {
  try {
    const server = await startMetricsServer(metrics, at.host, at.port);
    process.stdout.write(`observe: metrics ${server.url}/metrics (probes: ${server.url}/healthz)\n`);
    return server;
  } catch (error) {
    await proxy.close({ graceMs: 0 });
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError('cannot-listen', `cannot listen on ${at.host}:${at.port} for --metrics: ${code}`);
  }
}

/** The servers beside the proxy (--ui, --metrics), started after it; one that cannot listen closes the others and is one line. */
async function serveBeside(
  metrics: ObserveMetrics | undefined,
  page: LiveFeed | undefined,
  plan: LivePlan,
  proxy: ObserveProxy,
): Promise<{ close: () => Promise<void> }> {
  const pageServer = page && metrics && plan.ui ? await serveLivePage(page, metrics, plan.ui, proxy) : undefined;
  try {
    const metricsServer = metrics && plan.metrics ? await serveMetrics(metrics, plan.metrics, proxy) : undefined;
    return { close: async () => (await metricsServer?.close(), await pageServer?.close()) };
  } catch (error) {
    await pageServer?.close();
    throw error;
  }
}

/** The files of a rotated capture, for the end line. */
function rotatedFiles(files: readonly string[]): string {
  return files.length === 1 ? files[0]! : `${files[0]} … ${files[files.length - 1]}`;
}

/** Opens the capture file, refusing to overwrite an earlier capture (real traffic is not thrown away by a rerun). */
async function openCaptureFile(path: string): Promise<WriteStream> {
  if (existsSync(path))
    throw new ConfigError(
      'file-exists',
      `--capture ${path} exists already: name a new file (an earlier capture is not overwritten)`,
    );
  const stream = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  await new Promise<void>((resolveOpen, reject) => {
    stream.once('open', () => resolveOpen());
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(new ConfigError('unwritable-file', `cannot write --capture ${path}: ${error.code ?? error.message}`)),
    );
  });
  return stream;
}

/** Ends an observe run or replay: the summary line, the four reports, the exit status. */
function conclude(
  result: ObserveResult,
  flags: ObserveFlags,
  printer: ReturnType<typeof findingPrinter>,
  target: Record<string, unknown>,
  extraLines: string[],
): number {
  printer.print(result.report.results);
  const { summary } = result.report;
  // What the queue shed and the stop cut reached the judge's count as exchanges not judged.
  process.stdout.write(
    `observe: ${result.exchanges} exchanges, ${summary.failed} failed, ${summary.warnings} warnings, ${result.notJudged} not judged\n`,
  );
  for (const line of extraLines) process.stdout.write(scrubOutput(`${line}\n`));
  if (result.forgottenEvents > 0)
    process.stdout.write(
      `observe: ${result.forgottenEvents} events left the stream window before they were settled (memory is bounded); see the report's notes\n`,
    );
  const report = { ...result.report, target: { ...result.report.target, ...target } };
  return finish(report, { reports: flags.reports, ...(flags.strict ? { strict: true } : {}) });
}

/**
 * How a base URL with a path is joined (docs/observe.md): the path each request was received on is
 * appended to it, said at start, since a full callback URL given as --merchant-url doubles the path.
 */
function joinLine(address: { upstream: string; direction: ObservedExchange['direction'] } | undefined): string {
  if (!address) return '';
  const base = new URL(address.upstream);
  if (base.pathname === '/' || base.pathname === '') return '';
  const flag = address.direction === 'merchant→service' ? '--service-url' : '--merchant-url';
  const example = address.direction === 'merchant→service' ? '/api/v1/api/order/getEnergyMaxCount' : '/callback';
  return `observe: ${flag} has a path: the path each request is received on is appended to it (a request to ${example} goes on to ${base.origin}${upstreamPath(base, example)})\n`;
}

/** Opens --capture: one new file, or the first of a rotating series (--capture-max-mb). */
async function openCapture(flags: ObserveFlags, plan: LivePlan) {
  const onProblem = (line: string) => process.stderr.write(scrubOutput(`${MESSAGE_PREFIX} ${line}\n`));
  const rotating =
    flags.capture === undefined || plan.capture === undefined
      ? undefined
      : RotatingCaptureSink.open(flags.capture, { ...plan.capture, onProblem });
  const stream: (CaptureSink & { end(done: () => void): void }) | undefined =
    rotating ?? (flags.capture === undefined ? undefined : await openCaptureFile(flags.capture));
  const capture = stream ? new CaptureWriter(stream, { text: scrubOutput, value: scrubData }) : undefined;
  return { stream, rotating, capture };
}

/** Starts the listeners; a port that cannot be had is one line (the capture opened for it is closed). */
async function startProxy(
  { listeners, network, upstreamTimeoutMs }: LivePlan,
  onExchange: (exchange: ObservedExchange) => void,
  onError: (error: unknown) => void,
  stream: { end(done: () => void): void } | undefined,
): Promise<ObserveProxy> {
  try {
    return await startObserveProxy({
      listeners,
      network,
      upstreamTimeoutMs,
      maxRecordedBodyBytes: network.maxBodyBytes,
      onExchange,
      onError,
    });
  } catch (error) {
    if (stream) await new Promise<void>((done) => stream.end(() => done()));
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const failed = error as NodeJS.ErrnoException & { address?: string; port?: number };
      throw new ConfigError(
        'cannot-listen',
        `cannot listen on ${failed.address ?? '?'}:${failed.port ?? '?'}: ${code}${code === 'EADDRINUSE' ? ' (another process uses the port)' : ''}`,
      );
    }
    throw error;
  }
}

/** The line naming both addresses (what tests and scripts wait for). */
function printAddresses(proxy: ObserveProxy): void {
  const side = (direction: ObservedExchange['direction']) =>
    proxy.addresses.find((address) => address.direction === direction);
  const orders = side('merchant→service');
  const callbacks = side('service→merchant');
  process.stdout.write(
    scrubOutput(
      `observe: ${[
        orders
          ? `orders ${orders.url} → ${orders.upstream}${orders.cardUpstream ? ` (card close → ${orders.cardUpstream})` : ''}`
          : 'orders not observed (no --listen)',
        callbacks
          ? `callbacks ${callbacks.url} → ${callbacks.upstream}`
          : 'callbacks not observed (no --callback-listen)',
      ].join('; ')}\n${[orders, callbacks].map(joinLine).join('')}`,
    ),
  );
}

/** Live: listen, forward, judge as it happens, until a signal or --duration. */
interface LivePlan {
  listeners: ProxyListener[];
  durationMs?: number;
  upstreamTimeoutMs: number;
  /** Where /metrics and /healthz are served (--metrics). */
  metrics?: { host: string; port: number };
  /** Where the live page is served, with /metrics and /healthz (--ui). */
  ui?: { host: string; port: number };
  /** Reports rewritten while running, every this many ms (--report-every). */
  reportEveryMs?: number;
  /** A rotating capture (--capture-max-mb, --capture-keep). */
  capture?: { maxBytes?: number; maxAgeMs?: number; keep?: number };
  network: NetworkConfig;
}

/** Every flag of a live run checked before anything starts (one line, exit 2). */
function planLive(flags: ObserveFlags): LivePlan {
  const listeners = listenersOf(flags);
  const metrics = metricsAddress(flags.metrics, listeners);
  return {
    listeners,
    ...(flags.duration === undefined ? {} : { durationMs: seconds(flags.duration, '--duration') }),
    upstreamTimeoutMs:
      flags.upstreamTimeout === undefined
        ? DEFAULT_UPSTREAM_TIMEOUT_MS
        : seconds(flags.upstreamTimeout, '--upstream-timeout'),
    ...captureRotation(flags),
    ...(flags.reportEvery === undefined ? {} : { reportEveryMs: seconds(flags.reportEvery, '--report-every') }),
    ...metrics,
    ...uiAddress(flags.ui, listenAddress, listeners, metrics.metrics),
    // Upstreams are reached directly: observe is the proxy (HTTP(S)_PROXY of the environment is not used).
    network: networkFromFlags(flags, { proxy: false }),
  };
}

async function observeLive(
  flags: ObserveFlags,
  judgeOptions: JudgeOptions,
  plan: LivePlan,
  page: LiveFeed | undefined,
): Promise<number> {
  const { listeners, durationMs, network } = plan;
  const printer = findingPrinter();
  const { stream, rotating, capture } = await openCapture(flags, plan);
  const judgeFailed = (error: unknown) =>
    process.stderr.write(
      scrubOutput(
        `${MESSAGE_PREFIX} observe: the judge failed on an exchange (forwarding goes on): ${(error as Error)?.message ?? String(error)}\n`,
      ),
    );
  // Judging runs on its own thread behind a bounded queue (src/observe/judge-queue.ts); the capture is written at once.
  const queue = JudgeQueue.start(judgeOptions, {
    onFindings: (findings) => {
      metrics?.findings(findings);
      page?.findings(findings);
      printer.print(findings);
    },
    onError: judgeFailed,
    onShed: () => metrics?.notJudged('shed'),
  });
  const metrics = plan.metrics || plan.ui ? createObserveMetrics() : undefined;
  // Listening starts once the judge is made: an exchange never waits for the thread to load.
  await queue.ready();
  const onExchange = (exchange: ObservedExchange) => {
    capture?.write(exchange);
    metrics?.exchange(exchange);
    page?.exchange(exchange);
    queue.submit(exchange);
  };
  const proxy = await startProxy(plan, onExchange, judgeFailed, stream);
  printAddresses(proxy);

  for (const line of exposedListenerWarnings(listeners)) process.stderr.write(`${line}\n`);
  const beside = await serveBeside(metrics, page, plan, proxy);
  const startedAt = Date.now();
  const interim = startInterimReports({
    snapshot: () => queue.snapshot(),
    reports: flags.reports,
    startedAt,
    ...(plan.reportEveryMs === undefined ? {} : { everyMs: plan.reportEveryMs }),
    target: () => ({ observe: { ...(queue.notJudged > 0 ? { notJudged: queue.notJudged } : {}) } }),
  });
  const signals = stopSignals(durationMs);
  await signals.stopped;
  interim.stop();
  await beside.close();
  const { cut } = await proxy.close({ signal: signals.cut });
  const result = await queue.close({ deadline: Date.now() + JUDGE_DRAIN_MS, signal: signals.cut, cut });
  const lines: string[] = [];
  if (cut > 0) lines.push(`observe: ${cut} exchanges still in flight at the stop were cut (not judged)`);
  if (queue.notJudged > 0)
    lines.push(
      `observe: ${queue.notJudged} exchanges not judged: the judge fell behind or the stop came first (its queue is bounded; the capture holds them)`,
    );
  if (capture) {
    await capture.close();
    lines.push(
      `capture: ${rotating ? rotatedFiles(rotating.files) : flags.capture} (${rotating && rotating.files.length > 1 ? `${rotating.files.length} files, ` : ''}${capture.written} exchanges${capture.dropped > 0 ? `; ${capture.dropped} not written: the disk fell behind` : ''})`,
    );
  }
  const observed = {
    listeners: proxy.addresses.map((address) => ({
      direction: address.direction,
      listen: address.url,
      upstream: address.upstream,
      ...(address.cardUpstream ? { cardUpstream: address.cardUpstream } : {}),
    })),
    ...(flags.capture
      ? {
          capture: flags.capture,
          captured: capture!.written,
          ...(capture!.dropped ? { notCaptured: capture!.dropped } : {}),
        }
      : {}),
    ...(rotating ? { captureFiles: rotating.files.length } : {}),
    ...(queue.notJudged > 0 ? { notJudged: queue.notJudged } : {}),
    ...(cut > 0 ? { cut } : {}),
  };
  const status = conclude(
    result,
    flags,
    printer,
    {
      observe: observed,
      window: reportWindow(result.report.target, startedAt, Date.now(), true),
      ...networkNote(network, observed),
    },
    lines,
  );
  // Signals are taken until the reports are out: a signal during the writing does not lose them.
  signals.release();
  return status;
}

/** Replay: judge a capture file as the live run would have. */
/** A replay takes no flag of a live run, and its file must be readable. */
function checkReplay(flags: ObserveFlags, file: string | string[]): void {
  const live = [
    'listen',
    'callbackListen',
    'serviceUrl',
    'merchantUrl',
    'cardServiceUrl',
    'capture',
    'duration',
    'listenTls',
    'callbackListenTls',
    'upstreamTimeout',
    'captureMaxMb',
    'captureMaxAge',
    'captureKeep',
    'reportEvery',
    'metrics',
    'ui',
  ] as const;
  const given = live.filter((name) => flags[name] !== undefined);
  if (given.length > 0)
    throw new ConfigError(
      'bad-flag',
      `--replay judges a capture offline: drop ${given.map((name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`,
    );
  for (const one of replayFiles([file].flat())) checkReadableFile(one, 'capture');
}

async function observeReplay(flags: ObserveFlags, judge: Judge, given: string | string[]): Promise<number> {
  const files = replayFiles([given].flat());
  const printer = findingPrinter();
  const onWarning = (line: string) => process.stderr.write(scrubOutput(`${MESSAGE_PREFIX} observe: ${line}\n`));
  for (const file of files)
    for await (const exchange of readCaptureFile(file, {
      ...(flags.apiKey === undefined ? {} : { apiKey: flags.apiKey }),
      onWarning,
    }))
      printer.print(judge.accept(exchange));
  return conclude(judge.finish(), flags, printer, { observe: { replay: files.length === 1 ? files[0] : files } }, []);
}

/** The work of `observe`: settle the flags, check every flag and file, then listen or replay. */
export async function observe(self: Command): Promise<void> {
  const flags = settleFlags<ObserveFlags>(self, { sections: [], secrets: { apiKey: false } });
  // Every flag and file is checked before anything listens or prints.
  const plan = flags.replay === undefined ? planLive(flags) : (checkReplay(flags, flags.replay), undefined);
  const keys = keysOf(flags);
  const profile = flags.profile === undefined ? undefined : loadProfile(flags.profile);
  const upstreams = { 'merchant→service': flags.serviceUrl, 'service→merchant': flags.merchantUrl };
  const options: JudgeOptions = {
    keys,
    strict: flags.strict ?? false,
    ...(profile ? { profile } : {}),
    ...(plan
      ? { upstreams: Object.fromEntries(Object.entries(upstreams).filter(([, url]) => url !== undefined)) }
      : {}),
  };
  const page = plan?.ui ? liveFeed(keys, profile) : undefined;
  // Live, the judge runs on its own thread beside forwarding; a replay forwards nothing and judges here.
  process.exitCode = plan
    ? await observeLive(flags, options, plan, page)
    : await observeReplay(flags, createJudge(options), flags.replay!);
}
