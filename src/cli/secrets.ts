import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { fingerprint } from '../secrets/scrub.js';
import type { RsaKey } from '../crypto/keys.js';
import type { Target } from '../runner/types.js';
import {
  applyConfigFile,
  CONFIG_FILE_NAME,
  configKeyOf,
  requireOption,
  type AppliedConfig,
  type ConfigSection,
} from './config-file.js';
import { readUserFile } from './io.js';
import { SECRETS, type SecretName } from './flags.js';
import { protect } from './scrub-output.js';

/**
 * Secrets never need the command line (where `ps` and CI logs show them): each has a flag, an
 * environment variable and a file form. Every secret the CLI learns is also registered here, and
 * every report and console line the CLI writes passes through the scrubber built from them.
 */

export { SECRETS, type SecretName } from './flags.js';

/** The ways to give a secret, for the line that says it is missing. */
function waysToGive(name: SecretName, configKey: string): string {
  const spec = SECRETS[name];
  return `${spec.fileFlag} FILE, env ${spec.env}, ${configKey} in ${CONFIG_FILE_NAME}, or ${spec.flag} VALUE`;
}

/** Reads a secret file: one trailing newline (as editors and `echo` write) is not part of the secret. */
export function readSecretFile(path: string, what: string, where: string): string {
  const value = readUserFile(path, `${what} file (${where})`)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (value.length === 0) throw new ConfigError('empty-secret', `the ${what} file ${path} (${where}) is empty`);
  return value;
}

/**
 * A secret from, in this order, its flag or file flag, its environment variable (an empty one counts
 * as unset: CI gives missing secrets as empty strings), or its file key in the config file. A secret
 * found is registered for scrubbing; a required one found nowhere is one line naming every way.
 *
 * @example const apiKey = resolveSecret('apiKey', applied, { configKey: 'service.apiKeyFile', required: true });
 */
function resolveSecret(
  name: SecretName,
  applied: Pick<AppliedConfig, 'flags' | 'values' | 'file'>,
  options: { configKey: string; required: true; env?: NodeJS.ProcessEnv },
): string;
function resolveSecret(
  name: SecretName,
  applied: Pick<AppliedConfig, 'flags' | 'values' | 'file'>,
  options: { configKey: string; required?: boolean; env?: NodeJS.ProcessEnv },
): string | undefined;
function resolveSecret(
  name: SecretName,
  applied: Pick<AppliedConfig, 'flags' | 'values' | 'file'>,
  options: { configKey: string; required?: boolean; env?: NodeJS.ProcessEnv },
): string | undefined {
  const spec = SECRETS[name];
  const env = options.env ?? process.env;
  const inline = applied.flags[name];
  const file = applied.flags[`${name}File`];
  if (typeof inline === 'string' && typeof file === 'string')
    throw new ConfigError('bad-flag', `give the ${spec.what} once: ${spec.flag} or ${spec.fileFlag}, not both`);
  let value: string | undefined;
  if (typeof inline === 'string') {
    if (inline.length === 0) throw new ConfigError('empty-secret', `${spec.flag} is empty`);
    value = inline;
  } else if (typeof file === 'string') value = readSecretFile(file, spec.what, spec.fileFlag);
  else if (env[spec.env]) value = env[spec.env];
  else if (typeof applied.values[spec.configKey] === 'string') {
    value = readSecretFile(
      applied.values[spec.configKey] as string,
      spec.what,
      `${options.configKey} in ${applied.file ?? CONFIG_FILE_NAME}`,
    );
  }
  if (value !== undefined) {
    sources.set(
      name,
      typeof inline === 'string'
        ? spec.flag
        : typeof file === 'string'
          ? `${spec.fileFlag} ${file}`
          : env[spec.env]
            ? `env ${spec.env}`
            : `${options.configKey} in ${applied.file ?? CONFIG_FILE_NAME}`,
    );
  }
  if (value === undefined) {
    if (options.required)
      throw new ConfigError('missing-secret', `no ${spec.what}: give it with ${waysToGive(name, options.configKey)}`);
    return undefined;
  }
  protect({ kind: spec.kind, value });
  return value;
}

const sources = new Map<SecretName, string>();

/**
 * Where a secret of this run came from, for messages about it: `--api-key`, `env WALLET_API_KEY`,
 * `--api-key-file keys/ak.txt` or `merchant.apiKeyFile in wallet-conformance.yaml`. A wrong key
 * from a variable is not reported as the flag. Default (never resolved here): the value flag.
 */
export function secretSource(name: SecretName): string {
  return sources.get(name) ?? SECRETS[name].flag;
}

/** What a command needs settled before it runs. */
interface Settling {
  /** Config file sections it reads, in order (later wins). */
  sections: readonly ConfigSection[];
  /** Config keys named differently by this command (`callbackUrl` is `--url` of callback send). */
  aliases?: Record<string, string>;
  /** Its secrets: true when required. */
  secrets: Partial<Record<SecretName, boolean>>;
  /** Options that are required but may come from the config file. */
  required?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Settles a command's options before it runs: the config file fills what no flag gave, each secret
 * is resolved (flag > env > config file) into its option and registered for scrubbing, a client
 * certificate's key is registered too, and missing required options are one line (exit 2).
 *
 * @example const flags = settleFlags<ServiceFlags>(command, { sections: ['service'], secrets: { apiKey: true }, required: ['baseUrl'] });
 */
export function settleFlags<T>(command: Command, settling: Settling): T {
  const applied = applyConfigFile(command, settling.sections, settling.aliases);
  const flags = applied.flags;
  for (const name of settling.required ?? []) {
    const fileKey = Object.entries(settling.aliases ?? {}).find(([, alias]) => alias === name)?.[0] ?? name;
    requireOption(applied, name, configKeyOf(fileKey, settling.sections));
  }
  for (const [name, required] of Object.entries(settling.secrets) as Array<[SecretName, boolean]>) {
    const configKey = configKeyOf(SECRETS[name].configKey, settling.sections);
    const value = resolveSecret(name, applied, { configKey, required, ...(settling.env ? { env: settling.env } : {}) });
    if (value === undefined) delete flags[name];
    else flags[name] = value;
  }
  if (typeof flags.key === 'string') protectKeyFile(flags.key);
  return flags as T;
}

/** Registers a private key in both DER encodings it may be written in (PKCS#8 and PKCS#1). */
export function protectKey(key: RsaKey): void {
  if (key.half !== 'private') return;
  const pkcs8 = key.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString();
  protect({ kind: 'pk', value: pkcs8 });
  protect({
    kind: 'pk',
    value: key.keyObject.export({ type: 'pkcs1', format: 'pem' }).toString(),
    shownAs: fingerprint(pkcs8, 'pk'),
  });
}

/** Registers every secret a target carries: its keys, tokens and private key. */
export function protectTarget(target: Target): void {
  protect({ kind: 'ak', value: target.apiKey });
  if (target.expiredKey) protect({ kind: 'ek', value: target.expiredKey });
  if (target.futureKey) protect({ kind: 'nk', value: target.futureKey });
  if (target.side === 'service') {
    if (target.forbiddenKey) protect({ kind: 'fk', value: target.forbiddenKey });
    if (target.controlToken) protect({ kind: 'ct', value: target.controlToken });
  } else {
    protectKey(target.privateKey);
    if (target.probeToken) protect({ kind: 'pt', value: target.probeToken });
  }
}

/** Registers the key of a key file (a client certificate's key): its text is key material. An unreadable file is left to the flag's own check. */
export function protectKeyFile(path: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return;
  }
  if (/PRIVATE KEY/.test(text) || /^[A-Za-z0-9+/=\s]+$/.test(text)) protect({ kind: 'pk', value: text });
}

export { protect, scrubData, scrubOutput } from './scrub-output.js';
