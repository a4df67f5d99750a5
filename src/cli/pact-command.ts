import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT, SPEC_PATH } from '../platform/package-paths.js';
import { parseInteger } from './options.js';
import { assertReachable, httpUrl } from './target-flags.js';
import type { NetworkFlags } from './network-options.js';
// Registration imports only flags.ts; keys, the spec, the network and Pact are imported by the actions.
import { addNetworkOptions, secretFileOption, secretOption, sharedOption } from './flags.js';
import type { PactVerification } from '../generate/pact/verifier.js';
import { withOptionalPackage } from './optional-package.js';

interface GenerateFlags {
  spec: string;
  out: string;
  check?: boolean;
}

interface VerifyFlags extends NetworkFlags {
  spec: string;
  baseUrl: string;
  cardBaseUrl?: string;
  apiKey: string;
  privateKey?: string;
  publicKey?: string;
  profile?: string;
  userId?: string;
  controlToken?: string;
  forbiddenKey?: string;
  pactDir?: string;
  brokerUrl?: string;
  brokerToken?: string;
  providerVersion?: string;
  providerBranch?: string;
  publish?: boolean;
  logLevel: string;
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'] as const;

/** The local pact files whose provider is `provider`, in name order. */
function pactFilesOf(dir: string, provider: string): string[] {
  if (!existsSync(dir)) throw new ConfigError('no-pacts', `--pact-dir ${dir} does not exist`);
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name))
    .filter((file) => {
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as { provider?: { name?: string } }).provider?.name === provider;
      } catch {
        return false;
      }
    });
  if (files.length === 0)
    throw new ConfigError(
      'no-pacts',
      `${dir} holds no pact file of provider ${provider} (run: wallet-conformance pact generate)`,
    );
  return files;
}

/** `pact generate` and `pact verify`: Pact V4 contracts from the spec, verified with Pact's verifier. */
export function registerPactCommand(program: Command): void {
  const pact = program
    .command('pact')
    .description('Pact contracts from the spec (generate) and their verification against a wallet service (verify)');
  pact
    .command('generate')
    .description('write the Pact V4 files (HTTP and callback messages) to spec/pacts from the spec, with pact-js')
    .option('--spec <file>', 'OpenAPI spec', SPEC_PATH)
    .option('--out <dir>', 'folder the generated paths are relative to (spec/pacts/…)', PACKAGE_ROOT)
    .option('--check', 'write nothing; exit 1 when a pact file is missing or stale')
    .action(async (flags: GenerateFlags) => {
      const { loadSpecFile, writeGeneratedFiles } = await import('./io.js');
      const { generatePactFiles } = await withOptionalPackage(
        '@pact-foundation/pact',
        'pact generate',
        () => import('../generate/pact/files.js'),
      );
      if (writeGeneratedFiles(await generatePactFiles(loadSpecFile(flags.spec)), flags.out, flags.check) > 0)
        process.exitCode = 1;
    });
  registerPactVerify(pact);
}

function registerPactVerify(pact: Command): void {
  addNetworkOptions(pact.command('verify'), { runTimeout: false })
    .description(
      'verify a wallet service against the HTTP pact with the Pact verifier (provider states through the control API)',
    )
    .addOption(sharedOption('baseUrl'))
    .addOption(sharedOption('cardBaseUrl'))
    .addOption(secretOption('apiKey', "the merchant's X-API-KEY, injected into the requests (required)"))
    .addOption(secretFileOption('apiKey'))
    .addOption(
      sharedOption(
        'privateKey',
        "the merchant's private key (PEM or bare Base64 DER); its public half is used where the profile says so",
      ),
    )
    .addOption(sharedOption('publicKey', "the merchant's public key (enough for the default profile)"))
    .addOption(sharedOption('profile'))
    .addOption(
      sharedOption('userId', "the merchant's userId in the wallet system (default: the pact's example merchant)"),
    )
    .addOption(
      secretOption(
        'controlToken',
        'the target offers the control API (/__control, X-Control-Token): provider states are set up through it',
      ),
    )
    .addOption(secretFileOption('controlToken'))
    .addOption(secretOption('forbiddenKey', 'a valid key without the permission, for the 403 interaction (ERR-403)'))
    .addOption(secretFileOption('forbiddenKey'))
    .option('--pact-dir <dir>', 'folder of pact files (default: the packaged spec/pacts)')
    .option('--broker-url <url>', 'fetch the pacts from this Pact Broker instead (env PACT_BROKER_BASE_URL)')
    .addOption(secretOption('brokerToken', 'Pact Broker bearer token'))
    .addOption(secretFileOption('brokerToken'))
    .option('--provider-version <v>', 'provider version for published results (e.g. the git SHA)')
    .option('--provider-branch <b>', 'provider branch for published results')
    .option('--publish', 'publish the verification results to the broker (needs --broker-url and --provider-version)')
    .option('--spec <file>', 'OpenAPI spec the pacts were generated from', SPEC_PATH)
    .option('--log-level <level>', `Pact log level: ${LOG_LEVELS.join(', ')}`, 'warn')
    .addOption(sharedOption('config'))
    .action((_given: VerifyFlags, command: Command) => pactVerify(command));
}

/** The settled flags of `pact verify`, checked together (one line, exit 2), with the broker from flags or env. */
async function pactVerifyFlags(
  command: Command,
): Promise<{ flags: VerifyFlags; baseUrl: string; cardBaseUrl: string; brokerUrl?: string; brokerToken?: string }> {
  const { settleFlags } = await import('./secrets.js');
  const flags = settleFlags<VerifyFlags>(command, {
    sections: ['service', 'pact'],
    secrets: { apiKey: true, controlToken: false, forbiddenKey: false, brokerToken: false },
    required: ['baseUrl'],
  });
  // A key half given on the command line replaces the other half from the config file.
  if (command.getOptionValueSource('privateKey') === 'cli' && command.getOptionValueSource('publicKey') === 'config')
    delete flags.publicKey;
  if (command.getOptionValueSource('publicKey') === 'cli' && command.getOptionValueSource('privateKey') === 'config')
    delete flags.privateKey;
  const baseUrl = httpUrl(flags.baseUrl, '--base-url');
  const cardBaseUrl = httpUrl(flags.cardBaseUrl ?? flags.baseUrl, '--card-base-url');
  if (Boolean(flags.privateKey) === Boolean(flags.publicKey))
    throw new ConfigError('bad-flag', 'give the merchant key with exactly one of --private-key F or --public-key F');
  if (!(LOG_LEVELS as readonly string[]).includes(flags.logLevel))
    throw new ConfigError(
      'bad-flag',
      `--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(flags.logLevel)}`,
    );
  const brokerUrl = flags.brokerUrl ?? process.env.PACT_BROKER_BASE_URL;
  const brokerToken = flags.brokerToken ?? process.env.PACT_BROKER_TOKEN;
  if (brokerUrl !== undefined && !/^https?:\/\//.test(brokerUrl))
    throw new ConfigError('bad-url', `--broker-url must be an http(s) URL, not ${JSON.stringify(brokerUrl)}`);
  if (flags.publish && !brokerUrl)
    throw new ConfigError(
      'bad-flag',
      '--publish needs --broker-url (verification results are published to the broker the pacts came from)',
    );
  if (flags.publish && !flags.providerVersion) throw new ConfigError('bad-flag', '--publish needs --provider-version');
  return {
    flags,
    baseUrl,
    cardBaseUrl,
    ...(brokerUrl === undefined ? {} : { brokerUrl }),
    ...(brokerToken === undefined ? {} : { brokerToken }),
  };
}

/** The action of `pact verify`: the Pact verifier against the target through loopback relays, then one line per check. */
async function pactVerify(command: Command): Promise<void> {
  const { flags, baseUrl, cardBaseUrl, brokerUrl, brokerToken } = await pactVerifyFlags(command);
  const { protectKey, scrubOutput } = await import('./secrets.js');
  const { loadKeyFile, loadProfile, loadSpecFile } = await import('./io.js');
  const { networkFromFlags } = await import('./network-options.js');
  const { pactEndpoints } = await import('./relay.js');
  const key = flags.privateKey ? loadKeyFile(flags.privateKey, 'private') : loadKeyFile(flags.publicKey!, 'public');
  protectKey(key);
  const profile = loadProfile(flags.profile);
  const userId = flags.userId === undefined ? undefined : parseInteger(flags.userId, '--user-id', { min: 0 });
  const spec = loadSpecFile(flags.spec);
  const pactFiles = brokerUrl
    ? undefined
    : pactFilesOf(resolve(flags.pactDir ?? join(PACKAGE_ROOT, 'spec', 'pacts')), 'wallet-service');
  const network = networkFromFlags(flags);
  await assertReachable(baseUrl, '--base-url');
  if (cardBaseUrl !== baseUrl) await assertReachable(cardBaseUrl, '--card-base-url');
  const { verifyPacts } = await withOptionalPackage(
    '@pact-foundation/pact',
    'pact verify',
    () => import('../generate/pact/verifier.js'),
  );
  // HTTPS and proxies: the Pact verifier reaches the target through loopback relays on our network layer.
  const endpoints = await pactEndpoints(baseUrl, cardBaseUrl, network);
  const result = await verifyPacts({
    spec,
    baseUrl: endpoints.baseUrl,
    cardBaseUrl: endpoints.cardBaseUrl,
    apiKey: flags.apiKey,
    key,
    profile,
    logLevel: flags.logLevel as (typeof LOG_LEVELS)[number],
    ...(userId === undefined ? {} : { userId }),
    ...(flags.controlToken ? { controlToken: flags.controlToken } : {}),
    ...(flags.forbiddenKey ? { forbiddenKey: flags.forbiddenKey } : {}),
    ...(pactFiles ? { pactFiles } : {}),
    ...(brokerUrl ? { broker: brokerOf(flags, brokerUrl, brokerToken) } : {}),
  }).finally(() => endpoints.close());
  process.stdout.write(scrubOutput(`${resultLines(result).join('\n')}\n`));
  process.exitCode = result.passed ? 0 : 1;
}

/** Where the pacts come from and where the results go, when a broker is named. */
function brokerOf(flags: VerifyFlags, url: string, token: string | undefined) {
  return {
    url,
    ...(token ? { token } : {}),
    publish: flags.publish ?? false,
    ...(flags.providerVersion ? { providerVersion: flags.providerVersion } : {}),
    ...(flags.providerBranch ? { providerBranch: flags.providerBranch } : {}),
  };
}

/** The console lines of a verification: notes, the verifier's failures, each decrypted-data check, the totals. */
function resultLines(result: PactVerification): string[] {
  const out: string[] = [];
  for (const note of result.notes) out.push(`note   ${note}`);
  for (const failure of result.failures) out.push(`FAIL   pact: ${failure}`);
  for (const check of result.checks)
    out.push(
      `${check.status === 'passed' ? 'ok    ' : check.status === 'failed' ? 'FAIL  ' : 'skip  '} decrypted: ${check.interaction}: ${check.message}`,
    );
  const counts = (status: string) => result.checks.filter((check) => check.status === status).length;
  out.push(
    `pact verify: Pact verifier ${result.pactPassed ? 'passed' : 'FAILED'}; decrypted data checks: ${counts('passed')} passed, ${counts('failed')} failed, ${counts('skipped')} skipped`,
  );
  return out;
}
