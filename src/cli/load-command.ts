import { connect } from 'node:net';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { RsaKey } from '../crypto/keys.js';
import { STORM_TYPES } from '../load/events.js';
import { STORM_LIMITS } from '../load/limits.js';
import type { loadReportJson } from '../load/report.js';
import type { StormResult } from '../load/storm.js';
import type { NetworkConfig } from '../net/network-config.js';
import type { ProbeSource } from '../runner/probe-reader.js';
import type { NetworkFlags } from './network-options.js';
// Registration imports only flags.ts; the storm, keys and the probe reader are imported by the action.
import { addNetworkOptions, secretFileOption, secretOption, sharedOption } from './flags.js';
import { httpUrl } from './target-flags.js';

/** What the load reports say about the target. */
type StormTarget = Parameters<typeof loadReportJson>[1];

interface LoadFlags extends NetworkFlags {
  callbackUrl: string[];
  apiKey?: string;
  apiKeyFile?: string;
  privateKey?: string;
  probeUrl?: string;
  probeCmd?: string;
  probeToken?: string;
  probeTokenFile?: string;
  events: string;
  duplicates: string;
  concurrency: string;
  rate?: string;
  types: string;
  duration: string;
  profile?: string;
  reports: string;
}

/** `load merchant ...`: a bounded callback storm against the user's own endpoint(s). */
export function registerLoadCommand(program: Command): void {
  const load = program.command('load').description('load tests: a bounded callback storm against your own endpoint');
  const merchant = load
    .command('merchant')
    .description(
      'deliver a storm of callbacks (with duplicates and retries) to your callback URL(s) and judge exactly-once with the probe',
    )
    .addOption(
      sharedOption(
        'callbackUrl',
        'a callback URL of yours; repeat it to spread deliveries over several instances (required)',
      ).argParser((value: string, list: string[] = []) => [...list, value]),
    )
    .addOption(
      secretOption('apiKey', "the merchant's X-API-KEY (or --api-key-file, or WALLET_API_KEY)", { asWritten: true }),
    )
    .addOption(secretFileOption('apiKey', 'a file holding the X-API-KEY'))
    .addOption(sharedOption('privateKey'))
    .addOption(
      sharedOption(
        'probeUrl',
        'the processing probe: GET answers {"processed": [payload, ...]}; exactly-once is judged only with it or --probe-cmd',
      ),
    )
    .addOption(
      sharedOption('probeCmd', 'a shell command printing the processed payloads as JSON, in place of --probe-url'),
    )
    .addOption(secretOption('probeToken', "sent to --probe-url as Authorization: Bearer (the merchant's probe.token)"))
    .addOption(secretFileOption('probeToken'))
    .option('--events <n>', `distinct events (1 to ${STORM_LIMITS.events})`, '1000')
    .option(
      '--duplicates <r>',
      'share of events delivered again with a fresh requestUUID, some racing, some late (0 to 5)',
      '0.3',
    )
    .option('--concurrency <c>', `deliveries in flight at once (1 to ${STORM_LIMITS.concurrency})`, '32')
    .option('--rate <per-s>', 'delivery starts per second (default: as fast as the endpoint answers)')
    .option('--types <list>', `callback types to generate, e.g. 1,3 (of ${STORM_TYPES.join(',')})`, '1,3')
    .option(
      '--duration <s>',
      `stop starting deliveries after this many seconds (at most ${STORM_LIMITS.durationS})`,
      '120',
    )
    .addOption(sharedOption('profile'))
    .addOption(sharedOption('reports', 'where report.json and report.html go'));
  addNetworkOptions(merchant, { runTimeout: false }).action(loadMerchant);
}

/** The action of `load merchant`: check the flags, read the probe's mark, run the storm, write the reports. */
async function loadMerchant(flags: LoadFlags): Promise<void> {
  const { runStorm } = await import('../load/storm.js');
  const { progressLine } = await import('../load/summary.js');
  const { halfFor } = await import('../crypto/codec.js');
  const { loadKeyFile, loadProfile } = await import('./io.js');
  const { networkFromFlags } = await import('./network-options.js');
  const urls = (flags.callbackUrl ?? []).map((url) => httpUrl(url, '--callback-url'));
  if (urls.length === 0)
    throw new ConfigError('bad-flag', 'load merchant needs --callback-url URL (repeat it for several instances)');
  if (flags.privateKey === undefined)
    throw new ConfigError(
      'bad-flag',
      'load merchant needs --private-key FILE (the key the service encrypts callbacks with)',
    );
  if (flags.probeUrl && flags.probeCmd) throw new ConfigError('bad-flag', 'give --probe-url or --probe-cmd, not both');
  const { apiKey, probeToken } = await stormSecrets(flags);
  // --ca, --cert, --key, --insecure as verify: the storm's agents and the probe's reads use them.
  const network = networkFromFlags(flags);
  const profile = loadProfile(flags.profile);
  const key: RsaKey = loadKeyFile(flags.privateKey, halfFor('callback', 'encrypt', profile));
  const options = stormOptions(flags);
  const probeUrl = flags.probeUrl === undefined ? undefined : httpUrl(flags.probeUrl, '--probe-url');
  for (const url of urls) await assertConnects(url, '--callback-url');
  const source: ProbeSource | undefined = probeUrl
    ? { probeUrl, ...(probeToken ? { probeToken } : {}) }
    : flags.probeCmd
      ? { probeCmd: flags.probeCmd }
      : undefined;
  const probe = source ? await probeFrom(source) : undefined;
  if (!source)
    process.stderr.write(
      'load: no --probe-url or --probe-cmd: answers are measured, processing is not checked (exactly-once is not judged)\n',
    );
  let result: StormResult;
  try {
    result = await runStorm({
      callbackUrls: urls,
      apiKey,
      key,
      profile,
      tls: await stormTls(network),
      ...options,
      ...(probe ? { probe } : {}),
      onProgress: (progress) => process.stdout.write(`${progressLine(progress)}\n`),
    });
  } catch (error) {
    throw new ConfigError('load-failed', `load merchant: ${(error as Error).message}`);
  }
  // The report notes --insecure, extra CAs and a client certificate, as verify's do.
  const { describeNetwork } = await import('../net/network-config.js');
  const target = {
    callbackUrls: urls,
    probe: probeUrl ?? (flags.probeCmd ? '--probe-cmd' : null),
    ...describeNetwork(network),
  };
  process.exitCode = await reportStorm(result, target, flags.reports, source !== undefined);
}

/** The storm's API key and probe token from flag, file or environment, each registered for scrubbing. */
async function stormSecrets(flags: LoadFlags): Promise<{ apiKey: string; probeToken: string | undefined }> {
  const { protect, protectKeyFile, readSecretFile } = await import('./secrets.js');
  const apiKey =
    flags.apiKey ??
    (flags.apiKeyFile ? readSecretFile(flags.apiKeyFile, 'API key', '--api-key-file') : process.env.WALLET_API_KEY);
  if (!apiKey)
    throw new ConfigError('missing-secret', 'no API key: give it with --api-key, --api-key-file or WALLET_API_KEY');
  protect({ kind: 'ak', value: apiKey });
  if (flags.probeToken !== undefined && flags.probeTokenFile !== undefined)
    throw new ConfigError('bad-flag', 'give the probe token once: --probe-token or --probe-token-file, not both');
  const probeToken =
    flags.probeToken ??
    (flags.probeTokenFile
      ? readSecretFile(flags.probeTokenFile, 'probe token', '--probe-token-file')
      : process.env.WALLET_PROBE_TOKEN || undefined);
  if (probeToken) protect({ kind: 'pt', value: probeToken });
  if (flags.key) protectKeyFile(flags.key);
  return { apiKey, probeToken };
}

/** The storm's sizes from the flags, each checked against its limit. */
function stormOptions(flags: LoadFlags) {
  return {
    events: number(flags.events, '--events', 1, STORM_LIMITS.events, true),
    duplicates: number(flags.duplicates, '--duplicates', 0, STORM_LIMITS.duplicates, false),
    concurrency: number(flags.concurrency, '--concurrency', 1, STORM_LIMITS.concurrency, true),
    durationS: number(flags.duration, '--duration', 1, STORM_LIMITS.durationS, false),
    types: types(flags.types),
    ...(flags.rate === undefined ? {} : { rate: number(flags.rate, '--rate', 1, 1_000_000, false) }),
  };
}

/** Reads the probe from now on, page by page: the merchant's earlier history is not the storm's. */
async function probeFrom(source: ProbeSource): Promise<() => Promise<string[]>> {
  const { probeBaseline, probeEntriesAfter } = await import('../runner/probe-reader.js');
  let mark;
  try {
    mark = await probeBaseline(source);
  } catch (error) {
    throw new ConfigError(
      'probe-failed',
      `load merchant: reading the probe before the storm: ${(error as Error).message}`,
    );
  }
  return () => probeEntriesAfter(source, mark);
}

/** The TLS settings of the storm's own agents, from the run's network. */
async function stormTls(network: NetworkConfig) {
  const { trustedCa } = await import('../net/network-config.js');
  const ca = trustedCa(network.tls);
  return {
    insecure: network.tls.insecure,
    ...(ca ? { ca } : {}),
    ...(network.tls.cert ? { cert: network.tls.cert } : {}),
    ...(network.tls.key ? { key: network.tls.key } : {}),
  };
}

/** Writes report.json and report.html, prints the verdict; the exit status (1 when not exactly once or not acknowledged). */
async function reportStorm(
  result: StormResult,
  target: StormTarget,
  reports: string,
  probed: boolean,
): Promise<number> {
  const { scrubOutput } = await import('./secrets.js');
  const { offenderLines, summaryLine } = await import('../load/summary.js');
  const { loadReportHtml, loadReportJson } = await import('../load/report.js');
  const { writeUserFile } = await import('./io.js');
  writeUserFile(
    join(reports, 'report.json'),
    scrubOutput(`${JSON.stringify(loadReportJson(result, target), null, 2)}\n`),
    { overwrite: true },
  );
  writeUserFile(join(reports, 'report.html'), scrubOutput(loadReportHtml(result, target)), { overwrite: true });
  process.stdout.write(`${summaryLine(result)}\n`);
  if (result.exactlyOnce === false) {
    process.stdout.write(
      `${result.offenders.length} events were not processed exactly once; the first:\n${offenderLines(result).join('\n')}\n`,
    );
  }
  if (result.unacknowledgedDeliveries > 0)
    process.stdout.write(
      `${result.unacknowledgedDeliveries} deliveries were never acknowledged (${failureText(result)})\n`,
    );
  const unacknowledged = result.events - result.acknowledged;
  if (unacknowledged > 0)
    process.stdout.write(
      `${unacknowledged} of ${result.events} events were never acknowledged (errCode 0): the storm fails\n`,
    );
  if (!probed)
    process.stdout.write(
      'processing was not checked: no --probe-url or --probe-cmd, so only the answers were judged\n',
    );
  process.stdout.write(`reports: ${join(reports, 'report.json')}, ${join(reports, 'report.html')}\n`);
  return result.exactlyOnce === false || unacknowledged > 0 ? 1 : 0;
}

function failureText(result: StormResult): string {
  return Object.entries(result.failures)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([why, n]) => `${why}: ${n}`)
    .join(', ');
}

/** One TCP connection: a URL nobody listens on is exit 2 before the storm, not 2,000 failures. */
function assertConnects(value: string, flag: string): Promise<void> {
  const url = new URL(value);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    const fail = (why: string) => {
      socket.destroy();
      reject(new ConfigError('unreachable', `${flag} ${value} is unreachable: ${why}`));
    };
    socket.once('timeout', () => fail('no connection within 5 s'));
    socket.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
  });
}

function number(value: string, flag: string, min: number, max: number, whole: boolean): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min || n > max) {
    throw new ConfigError(
      'bad-flag',
      `${flag} takes ${whole ? 'a whole number' : 'a number'} from ${min} to ${max}, not ${JSON.stringify(value)}`,
    );
  }
  return n;
}

function types(value: string): number[] {
  const list = value.split(',').map((part) => part.trim());
  const parsed = list.map(Number);
  if (list.length === 0 || parsed.some((type, i) => list[i] === '' || !STORM_TYPES.includes(type))) {
    throw new ConfigError(
      'bad-flag',
      `--types takes callback types from ${STORM_TYPES.join(',')} separated by commas, not ${JSON.stringify(value)}`,
    );
  }
  return [...new Set(parsed)];
}
