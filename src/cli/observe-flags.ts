// The flags of `observe` (registered in observe-command.ts): every one checked before anything
// listens or prints (one line, exit 2), turned into the plan src/observe/live.ts runs or the files
// src/observe/replay-run.ts judges.
import { dirname, resolve } from 'node:path';
import { parseConfigYaml } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { loadServerTls, type ServerTls } from '../net/server-tls.js';
import type { ObserveKeys } from '../observe/exchange.js';
import { DEFAULT_JUDGE_CPU_PERCENT } from '../observe/defaults.js';
import type { JudgeOptions } from '../observe/judge.js';
import type { JudgePriority } from '../observe/judge-protocol.js';
import type { LivePlan } from '../observe/live.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS, type ProxyListener } from '../observe/proxy.js';
import { replayFiles } from './capture-files.js';
import { checkReadableFile, loadKeyFile, loadProfile, readUserFile } from './io.js';
import { networkFromFlags, type NetworkFlags } from './network-options.js';
import { parseInteger } from './options.js';
import { protectKey } from './secrets.js';
import { httpUrl } from './target-flags.js';

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
  judgePriority?: string;
  judgeCpu?: string;
  metrics?: string;
  ui?: string;
  /** Files or globs, in order (commander gives a variadic option as a list). */
  replay?: string | string[];
  strict?: boolean;
}

/** How --capture rotates (--capture-max-mb, --capture-max-age, --capture-keep). */
interface CaptureRotation {
  maxBytes?: number;
  maxAgeMs?: number;
  keep?: number;
}

type Address = { host: string; port: number };

/** `[HOST:]PORT` of a listener (host 127.0.0.1 unless given: a proxy is opened to the network on purpose). */
function listenAddress(value: string, flag: string): Address {
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

/**
 * An upstream URL flag: http(s), without credentials or a query. Observe forwards each request's
 * own credentials and its own path and query; a user:password or a query in the flag would be
 * dropped without a word (or sent with every request), so it is refused. The value is not repeated
 * in the message: it may hold a password.
 */
export function upstreamFlag(value: string, flag: string): string {
  const checked = httpUrl(value, flag);
  const url = new URL(checked);
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      'bad-url',
      `${flag} carries credentials (user:password@): observe forwards each request's own credentials and adds none; give the URL without them`,
    );
  if (url.search !== '' || value.includes('?'))
    throw new ConfigError(
      'bad-url',
      `${flag} has a query (?...): observe appends each request's own path and query to the URL's path; give the base URL without one`,
    );
  if (url.hash !== '' || value.includes('#'))
    throw new ConfigError('bad-url', `${flag} has a fragment (#...): give the base URL without one`);
  return checked;
}

/** One side of the proxy as the flags give it: its listener, its upstream and its TLS file. */
interface Side {
  listen: string | undefined;
  listenFlag: string;
  url: string | undefined;
  urlFlag: string;
  tls: string | undefined;
  tlsFlag: string;
  direction: ProxyListener['direction'];
}

/** The sides of the proxy, orders first. */
function sidesOf(flags: ObserveFlags): Side[] {
  return [
    {
      listen: flags.listen,
      listenFlag: '--listen',
      url: flags.serviceUrl,
      urlFlag: '--service-url',
      tls: flags.listenTls,
      tlsFlag: '--listen-tls',
      direction: 'merchant→service',
    },
    {
      listen: flags.callbackListen,
      listenFlag: '--callback-listen',
      url: flags.merchantUrl,
      urlFlag: '--merchant-url',
      tls: flags.callbackListenTls,
      tlsFlag: '--callback-listen-tls',
      direction: 'service→merchant',
    },
  ];
}

/** One side's listener; undefined when the side is not observed. */
function listenerOf(side: Side, cardServiceUrl: string | undefined): ProxyListener | undefined {
  if (side.listen === undefined && side.url === undefined) {
    if (side.tls !== undefined) throw new ConfigError('bad-flag', `${side.tlsFlag} goes with ${side.listenFlag} PORT`);
    return undefined;
  }
  if (side.listen === undefined)
    throw new ConfigError(
      'bad-flag',
      `${side.urlFlag} needs ${side.listenFlag} [HOST:]PORT (where the other side sends its requests)`,
    );
  if (side.url === undefined)
    throw new ConfigError('bad-flag', `${side.listenFlag} needs ${side.urlFlag} URL (where the requests go on to)`);
  return {
    direction: side.direction,
    ...listenAddress(side.listen, side.listenFlag),
    upstream: upstreamFlag(side.url, side.urlFlag),
    ...(side.tls === undefined ? {} : { tls: listenerTls(side.tls, side.tlsFlag) }),
    ...(side.direction === 'merchant→service' && cardServiceUrl !== undefined
      ? { cardUpstream: upstreamFlag(cardServiceUrl, '--card-service-url') }
      : {}),
  };
}

/** The listeners the flags ask for; each side needs both its listener and its upstream, and at least one side is needed. */
function listenersOf(flags: ObserveFlags): ProxyListener[] {
  const listeners: ProxyListener[] = [];
  for (const side of sidesOf(flags)) {
    const listener = listenerOf(side, flags.cardServiceUrl);
    if (listener) listeners.push(listener);
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

/** `--capture-max-mb MB`, `--capture-max-age SECONDS`, `--capture-keep N`: the capture rotates (each needs --capture; --capture-keep needs a rotation). */
function captureRotation(flags: ObserveFlags): { capture?: CaptureRotation } {
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
function metricsAddress(value: string | undefined, listeners: readonly ProxyListener[]): { metrics?: Address } {
  if (value === undefined) return {};
  const address = listenAddress(value, '--metrics');
  if (address.port !== 0 && listeners.some((listener) => listener.port === address.port))
    throw new ConfigError(
      'bad-flag',
      `--metrics ${value}: port ${address.port} is a proxy listener's (give the metrics their own port)`,
    );
  return { metrics: address };
}

/**
 * `--ui [HOST:]PORT`: never a proxy listener's port nor the metrics' (each has its own server, so
 * a browser never holds a forwarding socket).
 */
function uiAddress(
  value: string | undefined,
  listeners: readonly ProxyListener[],
  metrics: Address | undefined,
): { ui?: Address } {
  if (value === undefined) return {};
  const address = listenAddress(value, '--ui');
  if (address.port === 0) return { ui: address };
  if (listeners.some((listener) => listener.port === address.port))
    throw new ConfigError(
      'bad-flag',
      `--ui ${value}: port ${address.port} is a proxy listener's (give the page its own port)`,
    );
  if (metrics && metrics.port === address.port)
    throw new ConfigError(
      'bad-flag',
      `--ui ${value}: port ${address.port} is --metrics's (the page serves /metrics itself: drop --metrics or give it another port)`,
    );
  return { ui: address };
}

/** `--judge-priority low|normal` (decision 0116): low unless given. */
function judgePriorityOf(value: string | undefined): JudgePriority {
  if (value === undefined || value === 'low' || value === 'normal') return value ?? 'low';
  throw new ConfigError('bad-flag', `--judge-priority takes low or normal, not ${JSON.stringify(value)}`);
}

/** `--judge-cpu PERCENT` (decision 0121): the share of one core the judge may spend, 1 to 100. */
function judgeCpuShareOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_JUDGE_CPU_PERCENT / 100;
  if (/^[0-9]+$/.test(value) && Number(value) >= 1 && Number(value) <= 100) return Number(value) / 100;
  throw new ConfigError(
    'bad-flag',
    `--judge-cpu takes a whole percentage of one core from 1 to 100, not ${JSON.stringify(value)}`,
  );
}

/** Every flag of a live run checked before anything starts (one line, exit 2). */
function planLive(flags: ObserveFlags): LivePlan & { capture?: CaptureRotation } {
  const listeners = listenersOf(flags);
  const metrics = metricsAddress(flags.metrics, listeners);
  return {
    listeners,
    judgePriority: judgePriorityOf(flags.judgePriority),
    judgeCpuShare: judgeCpuShareOf(flags.judgeCpu),
    ...(flags.duration === undefined ? {} : { durationMs: seconds(flags.duration, '--duration') }),
    upstreamTimeoutMs:
      flags.upstreamTimeout === undefined
        ? DEFAULT_UPSTREAM_TIMEOUT_MS
        : seconds(flags.upstreamTimeout, '--upstream-timeout'),
    ...captureRotation(flags),
    ...(flags.reportEvery === undefined ? {} : { reportEveryMs: seconds(flags.reportEvery, '--report-every') }),
    ...metrics,
    ...uiAddress(flags.ui, listeners, metrics.metrics),
    // Upstreams are reached directly: observe is the proxy (HTTP(S)_PROXY of the environment is not used).
    network: networkFromFlags(flags, { proxy: false }),
  };
}

/** The flags of a live run, by their names in ObserveFlags: a replay takes none of them. */
const LIVE_ONLY = [
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
  'judgePriority',
  'judgeCpu',
  'metrics',
  'ui',
] as const;

/** A replay takes no flag of a live run, and its files must be readable. */
function checkReplay(flags: ObserveFlags, file: string | string[]): void {
  const given = LIVE_ONLY.filter((name) => flags[name] !== undefined);
  if (given.length > 0)
    throw new ConfigError(
      'bad-flag',
      `--replay judges a capture offline: drop ${given.map((name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`,
    );
  for (const one of replayFiles([file].flat())) checkReadableFile(one, 'capture');
}

/** What `observe` runs: a live plan (with the capture's rotation) or a replay, and the judge's options. */
interface ObservePlan {
  live?: LivePlan & { capture?: CaptureRotation };
  judge: JudgeOptions;
}

/** Every flag and file checked before anything listens or prints; the judge's keys loaded. */
export function planObserve(flags: ObserveFlags): ObservePlan {
  const live = flags.replay === undefined ? planLive(flags) : (checkReplay(flags, flags.replay), undefined);
  const keys = keysOf(flags);
  const profile = flags.profile === undefined ? undefined : loadProfile(flags.profile);
  const upstreams = { 'merchant→service': flags.serviceUrl, 'service→merchant': flags.merchantUrl };
  const judge: JudgeOptions = {
    keys,
    strict: flags.strict ?? false,
    ...(profile ? { profile } : {}),
    ...(live
      ? { upstreams: Object.fromEntries(Object.entries(upstreams).filter(([, url]) => url !== undefined)) }
      : {}),
  };
  return { ...(live ? { live } : {}), judge };
}
