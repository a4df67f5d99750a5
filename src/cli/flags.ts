import { Option, type Command } from 'commander';
import type { SecretKind } from '../secrets/scrub.js';
import { DEFAULT_MAX_BODY_BYTES } from '../net/network-config.js';

/**
 * What registering a command needs, and nothing more: help texts, collectors and shared option
 * sets. `main.ts` registers every command on each start (`--help`, `--version` and a flag error
 * included), so this file and every command file's registration import nothing heavy: no runner,
 * crypto, stores, yaml, ajv or fast-check (`main-imports.test.ts` holds the line). The work of a
 * command is imported when its action runs.
 */

/** The file read from the working directory when `--config` is not given. */
export const CONFIG_FILE_NAME = 'wallet-conformance.yaml';

/** The help text of `--config FILE`. */
export const CONFIG_HELP = `options from this YAML file (default: ./${CONFIG_FILE_NAME} when present); flags and env win`;

/** `--case ID` (repeatable, or a comma list): collects every id given. */
export function collectCases(value: string, all: string[] = []): string[] {
  return [
    ...all,
    ...value
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id.length > 0),
  ];
}

/** Commander collector for a repeatable `--suites DIR`. */
export function collectDirs(value: string, all: string[]): string[] {
  return [...all, value];
}

/** A flag several commands share: how it is written, its usual help, its collector and default. */
interface SharedOptionSpec {
  flags: string;
  description: string;
  parse?: (value: string, previous: string[]) => string[];
  defaultValue?: string | readonly string[];
}

/**
 * The registry of the flags commands share (targets, keys, TLS, reports, case choice, profile,
 * config). A command adds them with `sharedOption(name)` in its own order, and may word the help
 * for itself; the flag, the value it reads and its default stay the same everywhere.
 */
const SHARED_OPTIONS = {
  ca: {
    flags: '--ca <file>',
    description: 'PEM CA bundle trusted besides the system roots (repeatable; env NODE_EXTRA_CA_CERTS works too)',
    parse: (value: string, all: string[] = []) => [...all, value],
  },
  cert: { flags: '--cert <file>', description: 'client certificate (PEM) for targets that require mTLS; needs --key' },
  key: { flags: '--key <file>', description: 'private key (PEM, unencrypted) of --cert' },
  insecure: {
    flags: '--insecure',
    description: 'do not verify TLS certificates (a warning is printed and every report notes it)',
  },
  maxBody: {
    flags: '--max-body <bytes>',
    description: `largest answer accepted; a bigger one is a transport error (default ${DEFAULT_MAX_BODY_BYTES})`,
  },
  timeout: {
    flags: '--timeout <seconds>',
    description: 'bound the whole run: when it runs out the run stops, reports are written, exit 2',
  },
  baseUrl: { flags: '--base-url <url>', description: '{base_url} of the order endpoints (required)' },
  cardBaseUrl: { flags: '--card-base-url <url>', description: '{card_base_url} of card close (default: --base-url)' },
  callbackUrl: { flags: '--callback-url <url>', description: "the merchant's callback URL (required)" },
  publicKey: {
    flags: '--public-key <file>',
    description: "the merchant's public key (PEM or bare Base64 DER) (required)",
  },
  privateKey: {
    flags: '--private-key <file>',
    description: 'the private key the service encrypts callbacks with (required)',
  },
  userId: { flags: '--user-id <n>', description: "the merchant's userId in the wallet system" },
  probeUrl: {
    flags: '--probe-url <url>',
    description:
      'the merchant\'s processing probe: GET answers {"processed": [payload, ...]}; idempotency checks are skipped without it or --probe-cmd',
  },
  probeCmd: {
    flags: '--probe-cmd <cmd>',
    description:
      'a shell command that prints the processed payloads as JSON ({"processed": [...]} or a bare array), in place of --probe-url',
  },
  profile: { flags: '--profile <file>', description: 'crypto profile YAML' },
  config: { flags: '--config <file>', description: CONFIG_HELP },
  reports: {
    flags: '--reports <dir>',
    description: 'where report.json, junit.xml, report.html and summary.md go',
    defaultValue: 'reports',
  },
  strict: { flags: '--strict', description: 'SHOULD rules fail too' },
  suite: {
    flags: '--suite <glob>',
    description: 'only suites whose name matches (e.g. "service/energy", "*idempotency*")',
  },
  suites: {
    flags: '--suites <dir>',
    description:
      'also run your own suite files of DIR (repeatable; validated against wallet-conformance/suite.schema.json)',
    parse: collectDirs,
    defaultValue: [],
  },
  shard: { flags: '--shard <i/n>', description: 'run the i-th of n shares of the cases' },
  case: {
    flags: '--case <id>',
    description:
      'only this case: suite/case or a glob (repeatable or a comma list; each failure in the reports shows its --case)',
    parse: collectCases,
  },
  waitFor: {
    flags: '--wait-for <seconds>',
    description:
      'poll until the target answers HTTP (for a target still starting), at most this long; then the unreachable line, exit 2',
  },
  baseline: {
    flags: '--baseline <report.json>',
    description: 'an earlier report.json: only checks worse than it fail the run (known failures are listed)',
  },
  failOnSkip: {
    flags: '--fail-on-skip',
    description: 'exit 1 when a check of a MUST rule was skipped (a CI gate that must not silently shrink)',
  },
  verbose: { flags: '--verbose', description: 'print every case as it runs' },
  generate: {
    flags: '--generate <n>',
    description: 'after the suites, N generated cases per property (property-based; 0: none)',
    defaultValue: '0',
  },
  seed: {
    flags: '--seed <s>',
    description:
      'seed of the generated cases: the same seed replays the same cases (printed on the console and in summary.md)',
  },
} as const satisfies Record<string, SharedOptionSpec>;

/** A shared flag's name in the registry. */
type SharedOptionName = keyof typeof SHARED_OPTIONS;

/** A shared flag, ready for `command.addOption`; `description` words its help for one command. */
export function sharedOption(name: SharedOptionName, description?: string): Option {
  const spec: SharedOptionSpec = SHARED_OPTIONS[name];
  const option = new Option(spec.flags, description ?? spec.description);
  if (spec.parse) option.argParser(spec.parse);
  if (spec.defaultValue !== undefined)
    option.default(Array.isArray(spec.defaultValue) ? [...spec.defaultValue] : spec.defaultValue);
  return option;
}

/** Adds --ca, --cert, --key, --insecure, --max-body and (for commands that write reports) --timeout to a command. */
export function addNetworkOptions(command: Command, options: { runTimeout?: boolean } = {}): Command {
  const names: SharedOptionName[] = [
    'ca',
    'cert',
    'key',
    'insecure',
    'maxBody',
    ...(options.runTimeout === false ? [] : ['timeout' as const]),
  ];
  for (const name of names) command.addOption(sharedOption(name));
  return command;
}

/** How one secret can be given. */
interface SecretSpec {
  kind: SecretKind;
  /** The flag with the value itself (kept for compatibility; argv is visible to `ps`). */
  flag: string;
  /** The flag naming a file that holds the value. */
  fileFlag: string;
  env: string;
  /** The value's name in help texts (`--api-key <key>`). */
  value: 'key' | 'token';
  /** The config file key naming a file that holds the value. */
  configKey: string;
  /** What it is, for help texts and messages. */
  what: string;
}

/** The secrets of the CLI, by option name. */
export const SECRETS = {
  apiKey: {
    kind: 'ak',
    flag: '--api-key',
    fileFlag: '--api-key-file',
    value: 'key',
    env: 'WALLET_API_KEY',
    configKey: 'apiKeyFile',
    what: 'API key',
  },
  controlToken: {
    kind: 'ct',
    flag: '--control-token',
    fileFlag: '--control-token-file',
    value: 'token',
    env: 'WALLET_CONTROL_TOKEN',
    configKey: 'controlTokenFile',
    what: 'control API token',
  },
  forbiddenKey: {
    kind: 'fk',
    flag: '--forbidden-key',
    fileFlag: '--forbidden-key-file',
    value: 'key',
    env: 'WALLET_FORBIDDEN_KEY',
    configKey: 'forbiddenKeyFile',
    what: 'forbidden key',
  },
  expiredKey: {
    kind: 'ek',
    flag: '--expired-key',
    fileFlag: '--expired-key-file',
    value: 'key',
    env: 'WALLET_EXPIRED_KEY',
    configKey: 'expiredKeyFile',
    what: 'expired key',
  },
  futureKey: {
    kind: 'nk',
    flag: '--future-key',
    fileFlag: '--future-key-file',
    value: 'key',
    env: 'WALLET_FUTURE_KEY',
    configKey: 'futureKeyFile',
    what: 'not-yet-valid key',
  },
  probeToken: {
    kind: 'pt',
    flag: '--probe-token',
    fileFlag: '--probe-token-file',
    value: 'token',
    env: 'WALLET_PROBE_TOKEN',
    configKey: 'probeTokenFile',
    what: 'probe token',
  },
  brokerToken: {
    kind: 'bt',
    flag: '--broker-token',
    fileFlag: '--broker-token-file',
    value: 'token',
    env: 'PACT_BROKER_TOKEN',
    configKey: 'brokerTokenFile',
    what: 'Pact Broker token',
  },
} as const satisfies Record<string, SecretSpec>;

/** A secret's option name. */
export type SecretName = keyof typeof SECRETS;

/** The help of a secret's value flag: it names the forms that keep the secret out of argv. */
export function secretHelp(name: SecretName, description: string): string {
  const spec = SECRETS[name];
  return `${description}; better env ${spec.env} or ${spec.fileFlag} (ps and CI logs show argv)`;
}

/** The help of a secret's file flag. */
export function secretFileHelp(name: SecretName): string {
  return `read the ${SECRETS[name].what} from this file (one trailing newline is dropped)`;
}

/**
 * A secret's value flag (`--api-key <key>`), its help naming the forms that keep the secret out of
 * argv; `asWritten` keeps a command's own wording whole.
 */
export function secretOption(name: SecretName, description: string, options: { asWritten?: boolean } = {}): Option {
  const spec = SECRETS[name];
  return new Option(`${spec.flag} <${spec.value}>`, options.asWritten ? description : secretHelp(name, description));
}

/** A secret's file flag (`--api-key-file <file>`). */
export function secretFileOption(name: SecretName, description = secretFileHelp(name)): Option {
  return new Option(`${SECRETS[name].fileFlag} <file>`, description);
}
