import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { RsaPrivateKey, RsaPublicKey } from '../crypto/keys.js';
import type { Target } from '../runner/types.js';
import { parseInteger } from './options.js';
import type { CommonRunOptions } from './report-output.js';
import { receiverAddress } from './receiver-flags.js';
import type { NetworkFlags } from './network-options.js';
// Registration imports only flags.ts; the work (runner, crypto, suites) is imported by the actions.
import { addNetworkOptions, collectCases, collectDirs, CONFIG_HELP, secretFileHelp, secretHelp } from './flags.js';

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

/** A URL flag, checked up front so a typo is one clear line. */
export function httpUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('bad-url', `${flag} must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError('bad-url', `${flag} must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Fails with exit 2 when nothing answers at `url` (any HTTP answer is fine); returns the answer's
 * headers. With `waitMs` (--wait-for) it polls until the target answers or the time is up.
 */
export async function assertReachable(url: string, flag: string, waitMs = 0): Promise<Record<string, string>> {
  const { reachWithin } = await import('./wait-for.js');
  return reachWithin(url, flag, waitMs);
}

function common(command: Command): Command {
  return addNetworkOptions(command)
    .option('--reports <dir>', 'where report.json, junit.xml, report.html and summary.md go', 'reports')
    .option('--strict', 'SHOULD rules fail too')
    .option('--suite <glob>', 'only suites whose name matches (e.g. "service/energy", "*idempotency*")')
    .option(
      '--suites <dir>',
      'also run your own suite files of DIR (repeatable; validated against wallet-conformance/suite.schema.json)',
      collectDirs,
      [] as string[],
    )
    .option('--shard <i/n>', 'run the i-th of n shares of the cases')
    .option('--wait-for <seconds>', 'poll until the target answers HTTP (for a target still starting), at most this long; then the unreachable line, exit 2')
    .option('--case <id>', 'only this case: suite/case or a glob (repeatable or a comma list; each failure in the reports shows its --case)', collectCases)
    .option('--config <file>', CONFIG_HELP)
    .option('--baseline <report.json>', 'an earlier report.json: only checks worse than it fail the run (known failures are listed)')
    .option('--fail-on-skip', 'exit 1 when a check of a MUST rule was skipped (a CI gate that must not silently shrink)')
    .option('--verbose', 'print every case as it runs')
    .option('--generate <n>', 'after the suites, N generated cases per property (property-based; 0: none)', '0')
    .option('--seed <s>', 'seed of the generated cases: the same seed replays the same cases (printed on the console and in summary.md)');
}

/** `--generate N --seed S` as numbers (a bad value is one line and exit 2). */
export function generateFlags(flags: { generate?: string; seed?: string }): { numRuns: number; seed?: number } {
  const numRuns = parseInteger(flags.generate ?? '0', '--generate', { min: 0, max: 1_000_000 });
  return { numRuns, ...(flags.seed === undefined ? {} : { seed: parseInteger(flags.seed, '--seed', { min: 1, max: 2 ** 31 - 1 }) }) };
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
    ...(flags.listen === undefined ? {} : { listenPort: parseInteger(flags.listen, '--listen', { min: 0, max: 65535 }) }),
    ...receiverAddress(flags),
  };
}

/** `verify service ...` and `verify merchant ...` (flags: docs/cli-reference.md; exit statuses: README.md). */
export function registerVerifyCommand(program: Command): void {
  const verify = program.command('verify').description('run the conformance suites against a service or a merchant');
  common(verify.command('service'))
    .description('verify a wallet service (or an emulator of it) at a base URL')
    .option('--base-url <url>', '{base_url} of the order endpoints (required)')
    .option('--card-base-url <url>', '{card_base_url} of card close (default: --base-url)')
    .option('--api-key <key>', secretHelp('apiKey', "the merchant's X-API-KEY (required)"))
    .option('--api-key-file <file>', secretFileHelp('apiKey'))
    .option('--public-key <file>', "the merchant's public key (PEM or bare Base64 DER) (required)")
    .option('--user-id <n>', "the merchant's userId in the wallet system (order cases are skipped without it)")
    .option('--profile <file>', 'crypto profile YAML')
    .option('--allow-orders', 'run order-creating cases against a real service (they move money)')
    .option('--forbidden-key <key>', secretHelp('forbiddenKey', 'a valid key without the permission (ERR-403)'))
    .option('--forbidden-key-file <file>', secretFileHelp('forbiddenKey'))
    .option('--expired-key <key>', secretHelp('expiredKey', 'a key outside its validity window (ERR-401)'))
    .option('--expired-key-file <file>', secretFileHelp('expiredKey'))
    .option('--future-key <key>', secretHelp('futureKey', 'a key whose validity window has not begun yet (ERR-401)'))
    .option('--future-key-file <file>', secretFileHelp('futureKey'))
    .option('--control-token <token>', secretHelp('controlToken', 'the target offers the control API (/__control, X-Control-Token) with this token'))
    .option('--control-token-file <file>', secretFileHelp('controlToken'))
    .option('--listen <port>', 'port of the callback receiver')
    .option('--listen-host <host>', 'address the callback receiver binds (default 127.0.0.1; 0.0.0.0 with --listen or --public-url)')
    .option('--public-url <url>', "the callback receiver's URL as the service reaches it (told to the service; e.g. http://runner.ci.internal:8080/cb)")
    .action(async (_given: ServiceFlags, command: Command) => {
      const { settleFlags } = await import('./secrets.js');
      const flags = settleFlags<ServiceFlags>(command, {
        sections: ['service'],
        secrets: { apiKey: true, forbiddenKey: false, expiredKey: false, futureKey: false, controlToken: false },
        required: ['baseUrl', 'publicKey'],
      });
      const {
        EMULATOR_HEADER,
        addGenerated,
        chooseSuites,
        endRun,
        finish,
        generatedOnly,
        loadRules,
        networkFromFlags,
        preflightService,
        preflightWarnings,
        probeCapabilities,
        progress,
        protectTarget,
        replayBase,
        runSuites,
        scrubOutput,
        secretSource,
        waitForMs,
      } = await import('./run-parts.js');
      const network = networkFromFlags(flags);
      const target = await serviceTarget(flags);
      if (target.side !== 'service') return;
      target.apiKeySource = secretSource('apiKey');
      if (target.controlToken) target.controlTokenSource = secretSource('controlToken');
      protectTarget(target);
      const suites = chooseSuites('service', flags);
      const wait = waitForMs(flags.waitFor);
      const headers = await assertReachable(target.baseUrl, '--base-url', wait);
      if (target.cardBaseUrl !== target.baseUrl) await assertReachable(target.cardBaseUrl, '--card-base-url', wait);
      // Order cases move money on a real service; on the toolkit's own emulator they move nothing.
      if (headers[EMULATOR_HEADER] === '1' && !target.allowOrders) {
        target.allowOrders = true;
        process.stdout.write('the target is the wallet-conformance emulator: order cases run without --allow-orders\n');
      }
      const capabilities = await probeCapabilities(target);
      const preflight = await preflightService(target, capabilities);
      for (const line of preflightWarnings(preflight)) process.stderr.write(scrubOutput(`${line}\n`));
      const generate = generateFlags(flags);
      const onEvent = progress(flags);
      const report = await runSuites({ target, suites, capabilities, rules: loadRules(), strict: flags.strict ?? false, onEvent, preflight });
      await addGenerated(report, target, {
        ...generate,
        reportsDir: flags.reports,
        rules: loadRules(),
        strict: flags.strict ?? false,
        capabilities,
        onEvent,
        ...generatedOnly(flags),
      });
      process.exitCode = endRun(report, network, () => finish(report, { ...flags, replay: replayBase(command) }));
    });
  common(verify.command('merchant'))
    .description("verify a merchant's callback endpoint")
    .option('--callback-url <url>', "the merchant's callback URL (required)")
    .option('--api-key <key>', secretHelp('apiKey', "the merchant's X-API-KEY, sent with every callback (required)"))
    .option('--api-key-file <file>', secretFileHelp('apiKey'))
    .option('--private-key <file>', 'the private key the service encrypts callbacks with (required)')
    .option(
      '--probe-url <url>',
      'the merchant\'s processing probe: GET answers {"processed": [payload, ...]}; idempotency checks are skipped without it or --probe-cmd',
    )
    .option('--probe-cmd <cmd>', 'a shell command that prints the processed payloads as JSON ({"processed": [...]} or a bare array), in place of --probe-url')
    .option('--probe-token <token>', secretHelp('probeToken', "sent to --probe-url as Authorization: Bearer (the merchant's probe.token)"))
    .option('--probe-token-file <file>', secretFileHelp('probeToken'))
    .option(
      '--restart <cmd>',
      'a shell command that takes the receiver down (SIGKILL: a crash, not a graceful stop) and lets it come back, restarted by the command or by a supervisor; the runner waits up to 30 s for the callback URL to answer: enables redelivery across a restart',
    )
    .option('--profile <file>', 'crypto profile YAML')
    .option('--expired-key <key>', secretHelp('expiredKey', 'a key outside its validity window (CB-KEY-401)'))
    .option('--expired-key-file <file>', secretFileHelp('expiredKey'))
    .option('--future-key <key>', secretHelp('futureKey', 'a key whose validity window has not begun yet (CB-KEY-401)'))
    .option('--future-key-file <file>', secretFileHelp('futureKey'))
    .option('--settle-ms <ms>', 'how long to wait for processing that ends after the answer before the probe counts it (default 2000; 0: read the probe once)')
    .option('--replay <file>', 'instead of the suites: resend the callbacks of an observe capture (JSON lines) byte for byte and judge the answers')
    .action(async (_given: MerchantFlags, command: Command) => {
      const { settleFlags } = await import('./secrets.js');
      const flags = settleFlags<MerchantFlags>(command, {
        sections: ['merchant'],
        secrets: { apiKey: true, expiredKey: false, futureKey: false, probeToken: false },
        required: ['callbackUrl', 'privateKey'],
      });
      const {
        addGenerated,
        chooseSuites,
        endRun,
        finish,
        generatedOnly,
        loadKeyFile,
        loadProfile,
        loadRules,
        networkFromFlags,
        preflightMerchant,
        preflightWarnings,
        progress,
        protectTarget,
        replayBase,
        replayMerchant,
        runSuites,
        scrubOutput,
        secretSource,
        waitForMs,
      } = await import('./run-parts.js');
      const network = networkFromFlags(flags);
      const target: Target = {
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
        ...(flags.settleMs === undefined ? {} : { settleMs: parseInteger(flags.settleMs, '--settle-ms', { min: 0, max: 60_000 }) }),
        apiKeySource: secretSource('apiKey'),
      };
      protectTarget(target);
      if (flags.probeUrl && flags.probeCmd) throw new ConfigError('bad-flags', 'give --probe-url or --probe-cmd, not both');
      if (flags.replay !== undefined && target.side === 'merchant') {
        await assertReachable(target.callbackUrl, '--callback-url');
        const replayed = await replayMerchant(target, flags.replay, { strict: flags.strict ?? false, onEvent: progress(flags) });
        process.exitCode = endRun(replayed, network, () => finish(replayed, flags));
        return;
      }
      const suites = chooseSuites('merchant', flags);
      const wait = waitForMs(flags.waitFor);
      await assertReachable(target.callbackUrl, '--callback-url', wait);
      if (target.side === 'merchant' && target.probeUrl) await assertReachable(target.probeUrl, '--probe-url', wait);
      const preflight = target.side === 'merchant' ? await preflightMerchant(target) : undefined;
      for (const line of preflight ? preflightWarnings(preflight) : []) process.stderr.write(scrubOutput(`${line}\n`));
      const generate = generateFlags(flags);
      const onEvent = progress(flags);
      const report = await runSuites({ target, suites, rules: loadRules(), strict: flags.strict ?? false, onEvent, ...(preflight ? { preflight } : {}) });
      await addGenerated(report, target, {
        ...generate,
        reportsDir: flags.reports,
        rules: loadRules(),
        strict: flags.strict ?? false,
        onEvent,
        ...generatedOnly(flags),
      });
      process.exitCode = endRun(report, network, () => finish(report, { ...flags, replay: replayBase(command) }));
    });
}
