import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { describeType, parseConfigYaml } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { readUserFile } from './io.js';
import { CONFIG_FILE_NAME } from './flags.js';

/**
 * `wallet-conformance.yaml` (or `--config FILE`): every option of verify, run, callback send and
 * pact verify that is not a secret, so a CI job's command line stays short and free of secrets.
 * Precedence: a flag beats the environment, which beats this file. Secrets are not written here
 * (a config file gets committed): only the files that hold them (`apiKeyFile`, ...).
 */

/** The config file's name lives in flags.ts (what registering a command needs). */
export { CONFIG_FILE_NAME };

type ValueType = 'string' | 'path' | 'paths' | 'boolean' | 'integer' | 'number';

/** Keys every section (and the top level) takes: they apply to whichever command reads the file. */
const SHARED: Record<string, ValueType> = {
  reports: 'path',
  strict: 'boolean',
  suite: 'string',
  shard: 'string',
  verbose: 'boolean',
  profile: 'path',
  suites: 'paths',
  baseline: 'path',
  failOnSkip: 'boolean',
  ca: 'paths',
  cert: 'path',
  key: 'path',
  insecure: 'boolean',
  maxBody: 'integer',
  timeout: 'number',
  tls: 'boolean',
};

/** The sections: `service` (verify service, pact verify), `merchant` (verify merchant, callback send), `pact` (pact verify). */
const SECTIONS = {
  service: {
    baseUrl: 'string',
    cardBaseUrl: 'string',
    publicKey: 'path',
    userId: 'integer',
    allowOrders: 'boolean',
    listen: 'integer',
    apiKeyFile: 'path',
    controlTokenFile: 'path',
    forbiddenKeyFile: 'path',
    expiredKeyFile: 'path',
    futureKeyFile: 'path',
  },
  merchant: {
    callbackUrl: 'string',
    privateKey: 'path',
    probeUrl: 'string',
    probeCmd: 'string',
    restart: 'string',
    apiKeyFile: 'path',
    expiredKeyFile: 'path',
    futureKeyFile: 'path',
    probeTokenFile: 'path',
  },
  pact: {
    privateKey: 'path',
    pactDir: 'path',
    brokerUrl: 'string',
    brokerTokenFile: 'path',
    providerVersion: 'string',
    providerBranch: 'string',
    publish: 'boolean',
    spec: 'path',
    logLevel: 'string',
  },
} satisfies Record<string, Record<string, ValueType>>;

/** A section of the file. */
export type ConfigSection = keyof typeof SECTIONS;

/** Keys that would hold a secret inline: refused, with the ways to give it instead. */
const INLINE_SECRETS: Record<string, string> = {
  apiKey: 'apiKeyFile, WALLET_API_KEY or --api-key-file',
  controlToken: 'controlTokenFile, WALLET_CONTROL_TOKEN or --control-token-file',
  forbiddenKey: 'forbiddenKeyFile, WALLET_FORBIDDEN_KEY or --forbidden-key-file',
  expiredKey: 'expiredKeyFile, WALLET_EXPIRED_KEY or --expired-key-file',
  futureKey: 'futureKeyFile, WALLET_FUTURE_KEY or --future-key-file',
  brokerToken: 'brokerTokenFile, PACT_BROKER_TOKEN or --broker-token-file',
  probeToken: 'probeTokenFile, WALLET_PROBE_TOKEN or --probe-token-file',
};

/** A validated config file: its path and its values by section, paths resolved against the file's folder. */
interface ConfigFile {
  path: string;
  shared: Record<string, unknown>;
  sections: Partial<Record<ConfigSection, Record<string, unknown>>>;
}

interface Where {
  /** The file as the user named it, for messages. */
  label: string;
  /** The folder relative paths in it start from. */
  base: string;
}

// A value is named by its type, never quoted: a secret pasted under the wrong key must not reach a CI log.
function checkValue({ label: file, base }: Where, key: string, type: ValueType, value: unknown): unknown {
  const fail = (what: string): never => {
    throw new ConfigError('bad-config', `${file}: ${key} must be ${what}, not ${describeType(value)}`);
  };
  switch (type) {
    case 'string':
      return typeof value === 'string' && value.length > 0 ? value : fail('a non-empty string');
    case 'path':
      return typeof value === 'string' && value.length > 0 ? resolve(base, value) : fail('a file or folder path');
    case 'paths': {
      const list = typeof value === 'string' ? [value] : value;
      if (
        !Array.isArray(list) ||
        list.length === 0 ||
        !list.every((item) => typeof item === 'string' && item.length > 0)
      )
        fail('a path or a list of paths');
      return (list as string[]).map((item) => resolve(base, item));
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : fail('true or false');
    case 'integer':
      return Number.isSafeInteger(value) && (value as number) >= 0 ? String(value) : fail('a whole number');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && value > 0
        ? String(value)
        : fail('a positive number');
  }
}

function checkMapping(
  where: Where,
  prefix: string,
  value: unknown,
  allowed: Record<string, ValueType>,
  sectionsAllowed: boolean,
): { values: Record<string, unknown>; sections: ConfigFile['sections'] } {
  const file = where.label;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(
      'bad-config',
      `${file}: ${prefix || 'the file'} must be a mapping of option names to values, not ${describeType(value)}`,
    );
  }
  const values: Record<string, unknown> = {};
  const sections: ConfigFile['sections'] = {};
  for (const [key, item] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (INLINE_SECRETS[key])
      throw new ConfigError(
        'secret-in-config',
        `${file}: ${name} would put a secret in a file that gets committed; give it as ${INLINE_SECRETS[key]}`,
      );
    if (sectionsAllowed && key in SECTIONS) {
      sections[key as ConfigSection] = checkMapping(
        where,
        key,
        item,
        { ...SHARED, ...SECTIONS[key as ConfigSection] },
        false,
      ).values;
      continue;
    }
    const type = allowed[key];
    if (!type) {
      const known = [...Object.keys(allowed), ...(sectionsAllowed ? Object.keys(SECTIONS) : [])].join(', ');
      throw new ConfigError(
        'bad-config',
        `${file}: unknown key ${name} (known${prefix ? ` in ${prefix}` : ''}: ${known})`,
      );
    }
    values[key] = checkValue(where, name, type, item);
  }
  return { values, sections };
}

/**
 * Reads and validates a config file: unknown keys, wrong types and inline secrets are one line
 * naming the key and the file (exit 2).
 *
 * @example parseConfigFile('service:\n  baseUrl: https://wallet.example/\n', '/ci/wallet-conformance.yaml')
 */
export function parseConfigFile(text: string, path: string, label: string = path): ConfigFile {
  const document = parseConfigYaml(text, label, 'bad-config');
  const { values, sections } = checkMapping({ label, base: dirname(resolve(path)) }, '', document ?? {}, SHARED, true);
  return { path: label, shared: values, sections };
}

/** `--config FILE`, else `wallet-conformance.yaml` in `cwd` when there is one, else nothing. */
function loadConfigFile(explicit: string | undefined, cwd: string = process.cwd()): ConfigFile | undefined {
  const path = explicit === undefined ? resolve(cwd, CONFIG_FILE_NAME) : resolve(cwd, explicit);
  if (explicit === undefined && !existsSync(path)) return undefined;
  return parseConfigFile(readUserFile(path, 'config file').toString('utf8'), path, explicit ?? CONFIG_FILE_NAME);
}

/** The values one command reads: the top level, then its sections in order (later wins). */
export function configValues(
  config: ConfigFile | undefined,
  sections: readonly ConfigSection[],
): Record<string, unknown> {
  if (!config) return {};
  return Object.assign({}, config.shared, ...sections.map((section) => config.sections[section] ?? {})) as Record<
    string,
    unknown
  >;
}

/** Where a command's option lives in the file: `service.baseUrl`, or `reports` at the top level. */
export function configKeyOf(name: string, sections: readonly ConfigSection[]): string {
  const section = sections.find((candidate) => name in SECTIONS[candidate]);
  return section ? `${section}.${name}` : name;
}

/** What a command got from the config file. */
export interface AppliedConfig {
  /** The command's options after the file filled in what neither a flag nor the environment gave. */
  flags: Record<string, unknown>;
  /** The file's values for this command (secret files included), for resolving secrets. */
  values: Record<string, unknown>;
  /** Where they came from, for messages. */
  file?: string;
}

/**
 * Fills a command's options from the config file: a value given on the command line (or by the
 * environment) is kept, a default is replaced. `aliases` renames a file key for this command
 * (`callback send` calls `merchant.callbackUrl` `--url`). Keys that name secret files are left to
 * the secret resolution, which ranks the environment above them.
 */
export function applyConfigFile(
  command: Command,
  sections: readonly ConfigSection[],
  aliases: Record<string, string> = {},
): AppliedConfig {
  const explicit = command.getOptionValue('config') as string | undefined;
  const config = loadConfigFile(explicit);
  const values = configValues(config, sections);
  const options = new Set(command.options.map((option) => option.attributeName()));
  for (const [key, value] of Object.entries(values)) {
    if (key.endsWith('File')) continue;
    const name = aliases[key] ?? key;
    if (!options.has(name)) continue;
    const source = command.getOptionValueSource(name);
    if (source === 'cli' || source === 'env') continue;
    command.setOptionValueWithSource(name, value, 'config');
  }
  return { flags: command.opts(), values, ...(config ? { file: config.path } : {}) };
}

/** Checks an option that is required but may come from the file: a clear line when neither gave it. */
export function requireOption(applied: AppliedConfig, name: string, configKey: string): string {
  const value = applied.flags[name];
  if (typeof value === 'string' && value.length > 0) return value;
  const flag = `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  throw new ConfigError(
    'missing-option',
    `${flag} is required (or ${configKey} in ${applied.file ?? CONFIG_FILE_NAME})`,
  );
}
