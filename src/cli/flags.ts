import type { Command } from 'commander';
import type { SecretKind } from '../core/scrub.js';
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

/** Adds --ca, --cert, --key, --insecure, --max-body and (for commands that write reports) --timeout to a command. */
export function addNetworkOptions(command: Command, options: { runTimeout?: boolean } = {}): Command {
  command
    .option(
      '--ca <file>',
      'PEM CA bundle trusted besides the system roots (repeatable; env NODE_EXTRA_CA_CERTS works too)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--cert <file>', 'client certificate (PEM) for targets that require mTLS; needs --key')
    .option('--key <file>', 'private key (PEM, unencrypted) of --cert')
    .option('--insecure', 'do not verify TLS certificates (a warning is printed and every report notes it)')
    .option('--max-body <bytes>', `largest answer accepted; a bigger one is a transport error (default ${DEFAULT_MAX_BODY_BYTES})`);
  if (options.runTimeout === false) return command;
  return command.option('--timeout <seconds>', 'bound the whole run: when it runs out the run stops, reports are written, exit 2');
}

/** How one secret can be given. */
interface SecretSpec {
  kind: SecretKind;
  /** The flag with the value itself (kept for compatibility; argv is visible to `ps`). */
  flag: string;
  /** The flag naming a file that holds the value. */
  fileFlag: string;
  env: string;
  /** The config file key naming a file that holds the value. */
  configKey: string;
  /** What it is, for help texts and messages. */
  what: string;
}

/** The secrets of the CLI, by option name. */
export const SECRETS = {
  apiKey: { kind: 'ak', flag: '--api-key', fileFlag: '--api-key-file', env: 'WALLET_API_KEY', configKey: 'apiKeyFile', what: 'API key' },
  controlToken: {
    kind: 'ct',
    flag: '--control-token',
    fileFlag: '--control-token-file',
    env: 'WALLET_CONTROL_TOKEN',
    configKey: 'controlTokenFile',
    what: 'control API token',
  },
  forbiddenKey: {
    kind: 'fk',
    flag: '--forbidden-key',
    fileFlag: '--forbidden-key-file',
    env: 'WALLET_FORBIDDEN_KEY',
    configKey: 'forbiddenKeyFile',
    what: 'forbidden key',
  },
  expiredKey: {
    kind: 'ek',
    flag: '--expired-key',
    fileFlag: '--expired-key-file',
    env: 'WALLET_EXPIRED_KEY',
    configKey: 'expiredKeyFile',
    what: 'expired key',
  },
  futureKey: {
    kind: 'nk',
    flag: '--future-key',
    fileFlag: '--future-key-file',
    env: 'WALLET_FUTURE_KEY',
    configKey: 'futureKeyFile',
    what: 'not-yet-valid key',
  },
  probeToken: {
    kind: 'pt',
    flag: '--probe-token',
    fileFlag: '--probe-token-file',
    env: 'WALLET_PROBE_TOKEN',
    configKey: 'probeTokenFile',
    what: 'probe token',
  },
  brokerToken: {
    kind: 'bt',
    flag: '--broker-token',
    fileFlag: '--broker-token-file',
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
