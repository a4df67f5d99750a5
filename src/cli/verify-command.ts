import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { RsaPrivateKey, RsaPublicKey } from '../crypto/keys.js';
import type { Target } from '../runner/types.js';
import { generateFlags, parseInteger } from './options.js';
import type { CommonRunOptions } from './report-output.js';
import { receiverAddress } from './receiver-flags.js';
import type { NetworkFlags } from './network-options.js';
import { assertReachable, httpUrl } from './target-flags.js';
// Registration imports only flags.ts; the work (runner, crypto, suites) is imported by the actions.
import { addNetworkOptions, secretFileOption, secretOption, sharedOption } from './flags.js';

interface ServiceFlags extends CommonRunOptions, NetworkFlags {
  waitFor?: string;
  generate?: string;
  seed?: string;
  baseUrl: string;
  cardBaseUrl?: string;
  apiKey: string;
  publicKey: string;
  userId?: string;
  profile?: string;
  allowOrders?: boolean;
  forbiddenKey?: string;
  expiredKey?: string;
  futureKey?: string;
  controlToken?: string;
  listen?: string;
  listenHost?: string;
  publicUrl?: string;
}

interface MerchantFlags extends CommonRunOptions, NetworkFlags {
  waitFor?: string;
  generate?: string;
  seed?: string;
  callbackUrl: string;
  apiKey: string;
  privateKey: string;
  probeUrl?: string;
  probeCmd?: string;
  probeToken?: string;
  restart?: string;
  profile?: string;
  expiredKey?: string;
  futureKey?: string;
  settleMs?: string;
  replay?: string;
}

/** The flags both sides share: the network, where the reports go, which cases run, the config file. */
function common(command: Command): Command {
  addNetworkOptions(command);
  for (const name of [
    'reports',
    'strict',
    'suite',
    'suites',
    'shard',
    'waitFor',
    'case',
    'config',
    'baseline',
    'failOnSkip',
    'verbose',
    'generate',
    'seed',
  ] as const)
    command.addOption(sharedOption(name));
  return command;
}

/** Builds the service target from flags. */
async function serviceTarget(flags: ServiceFlags): Promise<Target> {
  const { loadKeyFile, loadProfile } = await import('./io.js');
  return {
    side: 'service',
    baseUrl: httpUrl(flags.baseUrl, '--base-url'),
    cardBaseUrl: httpUrl(flags.cardBaseUrl ?? flags.baseUrl, '--card-base-url'),
    apiKey: flags.apiKey,
    publicKey: loadKeyFile(flags.publicKey, 'public') as RsaPublicKey,
    profile: loadProfile(flags.profile),
    allowOrders: flags.allowOrders ?? false,
    ...(flags.userId === undefined ? {} : { userId: parseInteger(flags.userId, '--user-id', { min: 0 }) }),
    ...(flags.forbiddenKey ? { forbiddenKey: flags.forbiddenKey } : {}),
    ...(flags.expiredKey ? { expiredKey: flags.expiredKey } : {}),
    ...(flags.futureKey ? { futureKey: flags.futureKey } : {}),
    ...(flags.controlToken ? { controlToken: flags.controlToken } : {}),
    ...(flags.listen === undefined
      ? {}
      : { listenPort: parseInteger(flags.listen, '--listen', { min: 0, max: 65535 }) }),
    ...receiverAddress(flags),
  };
}

/** `verify service ...` and `verify merchant ...` (flags: docs/cli-reference.md; exit statuses: README.md). */
export function registerVerifyCommand(program: Command): void {
  const verify = program.command('verify').description('run the conformance suites against a service or a merchant');
  registerVerifyService(verify);
  registerVerifyMerchant(verify);
}

function registerVerifyService(verify: Command): void {
  common(verify.command('service'))
    .description('verify a wallet service (or an emulator of it) at a base URL')
    .addOption(sharedOption('baseUrl'))
    .addOption(sharedOption('cardBaseUrl'))
    .addOption(secretOption('apiKey', "the merchant's X-API-KEY (required)"))
    .addOption(secretFileOption('apiKey'))
    .addOption(sharedOption('publicKey'))
    .addOption(
      sharedOption('userId', "the merchant's userId in the wallet system (order cases are skipped without it)"),
    )
    .addOption(sharedOption('profile'))
    .option('--allow-orders', 'run order-creating cases against a real service (they move money)')
    .addOption(secretOption('forbiddenKey', 'a valid key without the permission (ERR-403)'))
    .addOption(secretFileOption('forbiddenKey'))
    .addOption(secretOption('expiredKey', 'a key outside its validity window (ERR-401)'))
    .addOption(secretFileOption('expiredKey'))
    .addOption(secretOption('futureKey', 'a key whose validity window has not begun yet (ERR-401)'))
    .addOption(secretFileOption('futureKey'))
    .addOption(
      secretOption('controlToken', 'the target offers the control API (/__control, X-Control-Token) with this token'),
    )
    .addOption(secretFileOption('controlToken'))
    .option('--listen <port>', 'port of the callback receiver')
    .option(
      '--listen-host <host>',
      'address the callback receiver binds (default 127.0.0.1; 0.0.0.0 with --listen or --public-url)',
    )
    .option(
      '--public-url <url>',
      "the callback receiver's URL as the service reaches it (told to the service; e.g. http://runner.ci.internal:8080/cb)",
    )
    .action((_given: ServiceFlags, command: Command) => verifyService(command));
}

function registerVerifyMerchant(verify: Command): void {
  common(verify.command('merchant'))
    .description("verify a merchant's callback endpoint")
    .addOption(sharedOption('callbackUrl'))
    .addOption(secretOption('apiKey', "the merchant's X-API-KEY, sent with every callback (required)"))
    .addOption(secretFileOption('apiKey'))
    .addOption(sharedOption('privateKey'))
    .addOption(sharedOption('probeUrl'))
    .addOption(sharedOption('probeCmd'))
    .addOption(secretOption('probeToken', "sent to --probe-url as Authorization: Bearer (the merchant's probe.token)"))
    .addOption(secretFileOption('probeToken'))
    .option(
      '--restart <cmd>',
      'a shell command that takes the receiver down (SIGKILL: a crash, not a graceful stop) and lets it come back, restarted by the command or by a supervisor; the runner waits up to 30 s for the callback URL to answer: enables redelivery across a restart',
    )
    .addOption(sharedOption('profile'))
    .addOption(secretOption('expiredKey', 'a key outside its validity window (CB-KEY-401)'))
    .addOption(secretFileOption('expiredKey'))
    .addOption(secretOption('futureKey', 'a key whose validity window has not begun yet (CB-KEY-401)'))
    .addOption(secretFileOption('futureKey'))
    .option(
      '--settle-ms <ms>',
      'how long to wait for processing that ends after the answer before the probe counts it (default 2000; 0: read the probe once)',
    )
    .option(
      '--replay <file>',
      'instead of the suites: resend the callbacks of an observe capture (JSON lines) byte for byte and judge the answers',
    )
    .action((_given: MerchantFlags, command: Command) => verifyMerchant(command));
}

/** The action of `verify service`: reach the target, probe it, run the suites and the generated cases, write the reports. */
async function verifyService(command: Command): Promise<void> {
  const { settleFlags } = await import('./secrets.js');
  const flags = settleFlags<ServiceFlags>(command, {
    sections: ['service'],
    secrets: { apiKey: true, forbiddenKey: false, expiredKey: false, futureKey: false, controlToken: false },
    required: ['baseUrl', 'publicKey'],
  });
  const parts = await import('./run-parts.js');
  const network = parts.networkFromFlags(flags);
  const target = await serviceTarget(flags);
  if (target.side !== 'service') return;
  target.apiKeySource = parts.secretSource('apiKey');
  if (target.controlToken) target.controlTokenSource = parts.secretSource('controlToken');
  parts.protectTarget(target);
  const suites = parts.chooseSuites('service', flags);
  const wait = parts.waitForMs(flags.waitFor);
  const headers = await assertReachable(target.baseUrl, '--base-url', wait);
  if (target.cardBaseUrl !== target.baseUrl) await assertReachable(target.cardBaseUrl, '--card-base-url', wait);
  // Order cases move money on a real service; on the toolkit's own emulator they move nothing.
  if (headers[parts.EMULATOR_HEADER] === '1' && !target.allowOrders) {
    target.allowOrders = true;
    process.stdout.write('the target is the wallet-conformance emulator: order cases run without --allow-orders\n');
  }
  const capabilities = await parts.probeCapabilities(target);
  const preflight = await parts.preflightService(target, capabilities);
  for (const line of parts.preflightWarnings(preflight)) process.stderr.write(parts.scrubOutput(`${line}\n`));
  const generate = generateFlags(flags);
  const strict = flags.strict ?? false;
  const onEvent = parts.progress(flags);
  const report = await parts.runSuites({
    target,
    suites,
    capabilities,
    rules: parts.loadRules(),
    strict,
    onEvent,
    preflight,
  });
  await parts.addGenerated(report, target, {
    ...generate,
    reportsDir: flags.reports,
    rules: parts.loadRules(),
    strict,
    capabilities,
    onEvent,
    ...parts.generatedOnly(flags),
  });
  process.exitCode = parts.endRun(report, network, () =>
    parts.finish(report, { ...flags, replay: parts.replayBase(command) }),
  );
}

/** The merchant target of `verify merchant` from its flags (keys read, URLs and numbers checked). */
async function merchantTarget(flags: MerchantFlags): Promise<Target> {
  const { loadKeyFile, loadProfile, secretSource } = await import('./run-parts.js');
  return {
    side: 'merchant',
    callbackUrl: httpUrl(flags.callbackUrl, '--callback-url'),
    apiKey: flags.apiKey,
    privateKey: loadKeyFile(flags.privateKey, 'private') as RsaPrivateKey,
    profile: loadProfile(flags.profile),
    ...(flags.probeUrl ? { probeUrl: httpUrl(flags.probeUrl, '--probe-url') } : {}),
    ...(flags.probeCmd ? { probeCmd: flags.probeCmd } : {}),
    ...(flags.probeToken ? { probeToken: flags.probeToken } : {}),
    ...(flags.restart ? { restartCmd: flags.restart } : {}),
    ...(flags.expiredKey ? { expiredKey: flags.expiredKey } : {}),
    ...(flags.futureKey ? { futureKey: flags.futureKey } : {}),
    ...(flags.settleMs === undefined
      ? {}
      : { settleMs: parseInteger(flags.settleMs, '--settle-ms', { min: 0, max: 60_000 }) }),
    apiKeySource: secretSource('apiKey'),
  };
}

/** The action of `verify merchant`: the suites (or the replay of a capture) against a callback URL, then the reports. */
async function verifyMerchant(command: Command): Promise<void> {
  const { settleFlags } = await import('./secrets.js');
  const flags = settleFlags<MerchantFlags>(command, {
    sections: ['merchant'],
    secrets: { apiKey: true, expiredKey: false, futureKey: false, probeToken: false },
    required: ['callbackUrl', 'privateKey'],
  });
  const parts = await import('./run-parts.js');
  const network = parts.networkFromFlags(flags);
  const target = await merchantTarget(flags);
  parts.protectTarget(target);
  if (flags.probeUrl && flags.probeCmd) throw new ConfigError('bad-flags', 'give --probe-url or --probe-cmd, not both');
  if (target.side !== 'merchant') return;
  const strict = flags.strict ?? false;
  if (flags.replay !== undefined) {
    await assertReachable(target.callbackUrl, '--callback-url');
    const replayed = await parts.replayMerchant(target, flags.replay, { strict, onEvent: parts.progress(flags) });
    process.exitCode = parts.endRun(replayed, network, () => parts.finish(replayed, flags));
    return;
  }
  const suites = parts.chooseSuites('merchant', flags);
  const wait = parts.waitForMs(flags.waitFor);
  await assertReachable(target.callbackUrl, '--callback-url', wait);
  if (target.probeUrl) await assertReachable(target.probeUrl, '--probe-url', wait);
  const preflight = await parts.preflightMerchant(target);
  for (const line of parts.preflightWarnings(preflight)) process.stderr.write(parts.scrubOutput(`${line}\n`));
  const generate = generateFlags(flags);
  const onEvent = parts.progress(flags);
  const report = await parts.runSuites({ target, suites, rules: parts.loadRules(), strict, onEvent, preflight });
  await parts.addGenerated(report, target, {
    ...generate,
    reportsDir: flags.reports,
    rules: parts.loadRules(),
    strict,
    onEvent,
    ...parts.generatedOnly(flags),
  });
  process.exitCode = parts.endRun(report, network, () =>
    parts.finish(report, { ...flags, replay: parts.replayBase(command) }),
  );
}
