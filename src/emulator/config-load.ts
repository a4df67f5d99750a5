import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigReader, parseConfigYaml, showValue, type ConfigDoc } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { fingerprint } from '../secrets/scrub.js';
import { parseProfileYaml, resolveProfile, type CryptoProfile } from '../core/profile.js';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../crypto/keys.js';
import { resolvePolicies } from '../service/policies.js';
import { splitPem } from '../net/network-config.js';
import { loadServerTls } from '../net/server-tls.js';
import {
  EMULATOR_DEFAULTS,
  PERMISSIONS,
  type EmulatorApiKey,
  type EmulatorCard,
  type EmulatorConfig,
  type EmulatorMerchant,
  type Permission,
} from './config.js';

/**
 * Reading emulator.yaml and resolving it into an {@link EmulatorConfig}: fields checked (unknown
 * ones refused), paths resolved against the file's folder, keys, profiles and TLS files loaded,
 * defaults filled; every problem one line naming the file and the field.
 */

const TOP_FIELDS = [
  'host',
  'port',
  'store',
  'bodyLimit',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'control',
  'callbacks',
  'policies',
  'merchants',
  'tls',
];
const CONTROL_FIELDS = ['token'];
const CALLBACK_FIELDS = ['timeoutMs', 'withdrawalDelayMs', 'retry', 'ca'];
const RETRY_FIELDS = ['initialDelayMs', 'factor', 'maxDelayMs', 'maxAttempts'];
const MERCHANT_FIELDS = [
  'userId',
  'apiKey',
  'apiKeyNotBefore',
  'apiKeyNotAfter',
  'apiKeyValidFrom',
  'apiKeyValidUntil',
  'apiKeys',
  'privateKey',
  'publicKey',
  'profile',
  'callbackUrl',
  'energy',
  'cards',
];
const KEY_FIELDS = ['key', 'permissions', 'notBefore', 'notAfter'];
const ENERGY_FIELDS = ['balance', 'costPerTx'];
const CARD_FIELDS = ['powerCardId', 'merchantUserId', 'status'];

function readText(path: string, what: string, source: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? 'unreadable');
    throw new ConfigError('unreadable-file', `${source}: cannot read ${what} ${path}: ${why}`);
  }
}

/**
 * Loads emulator.yaml: paths resolve against the file's folder, keys and profiles are loaded, and
 * every problem is a ConfigError of one line naming the file and the field.
 *
 * @example loadEmulatorConfig('emu/emulator.yaml').merchants[0]?.userId // 10086
 */
export function loadEmulatorConfig(path: string): EmulatorConfig {
  const source = resolve(path);
  const raw = parseConfigYaml(readText(source, 'emulator config', path), path, 'bad-emulator-config');
  return resolveEmulatorConfig(raw, dirname(source), path);
}

/**
 * Validates a parsed config document (YAML or a plain object built in code); relative paths resolve
 * against `baseDir`.
 *
 * @example resolveEmulatorConfig(parse(yamlText), '/srv/emu', 'emulator.yaml').store // '/srv/emu/emulator.sqlite'
 */
export function resolveEmulatorConfig(raw: unknown, baseDir: string, source = 'emulator config'): EmulatorConfig {
  const r = new ConfigReader(source, 'bad-emulator-config', (path) =>
    isAbsolute(path) ? path : resolve(baseDir, path),
  );
  const doc = r.mapping(raw, '', TOP_FIELDS);
  const control = r.mapping(doc.control, 'control', CONTROL_FIELDS);
  const callbacks = r.optionalMapping(doc.callbacks, 'callbacks', CALLBACK_FIELDS);
  const retry = r.optionalMapping(callbacks.retry, 'callbacks.retry', RETRY_FIELDS);
  const defaults = EMULATOR_DEFAULTS;
  const headersTimeoutMs = r.integer(doc.headersTimeoutMs, 'headersTimeoutMs', defaults.headersTimeoutMs, 50, 600_000);
  const requestTimeoutMs = r.integer(
    doc.requestTimeoutMs,
    'requestTimeoutMs',
    Math.max(defaults.requestTimeoutMs, headersTimeoutMs),
    50,
    600_000,
  );
  if (requestTimeoutMs < headersTimeoutMs)
    r.fail('requestTimeoutMs', `must be at least headersTimeoutMs (${headersTimeoutMs})`);
  const initialDelayMs = r.integer(
    retry.initialDelayMs,
    'callbacks.retry.initialDelayMs',
    defaults.retry.initialDelayMs,
    0,
    3_600_000,
  );
  const config: EmulatorConfig = {
    source,
    host: r.host(doc.host, 'host', defaults.host),
    store: doc.store === undefined ? ':memory:' : r.path(doc.store, 'store'),
    bodyLimit: r.integer(doc.bodyLimit, 'bodyLimit', defaults.bodyLimit, 1024, 16 * 1024 * 1024),
    headersTimeoutMs,
    requestTimeoutMs,
    control: { token: r.secret(control.token, 'control.token') },
    callbacks: {
      timeoutMs: r.integer(callbacks.timeoutMs, 'callbacks.timeoutMs', defaults.callbackTimeoutMs, 10, 600_000),
      withdrawalDelayMs: r.integer(
        callbacks.withdrawalDelayMs,
        'callbacks.withdrawalDelayMs',
        defaults.withdrawalDelayMs,
        0,
        86_400_000,
      ),
      retry: {
        initialDelayMs,
        factor: r.number(retry.factor, 'callbacks.retry.factor', defaults.retry.factor, 1, 100),
        maxDelayMs: r.integer(
          retry.maxDelayMs,
          'callbacks.retry.maxDelayMs',
          Math.max(defaults.retry.maxDelayMs, initialDelayMs),
          initialDelayMs,
          86_400_000,
        ),
        maxAttempts: r.integer(retry.maxAttempts, 'callbacks.retry.maxAttempts', defaults.retry.maxAttempts, 1, 100),
      },
    },
    merchants: [],
    policies: resolvePolicies(doc.policies, (where, message) => r.fail(where, message)),
  };
  if (doc.port !== undefined && doc.port !== null) config.port = r.integer(doc.port, 'port', undefined, 0, 65_535);
  const tls = loadServerTls(doc.tls, baseDir, source);
  if (tls) config.tls = tls;
  if (callbacks.ca !== undefined && callbacks.ca !== null)
    config.callbacks.ca = splitPem(readText(r.path(callbacks.ca, 'callbacks.ca'), 'callbacks.ca', source));
  config.merchants = resolveMerchants(r, doc.merchants);
  return config;
}

/** The merchants of the config: at least one, each user id and API key used by one merchant only. */
function resolveMerchants(r: ConfigReader, raw: unknown): EmulatorMerchant[] {
  const resolved: EmulatorMerchant[] = [];
  const merchants = r.array(raw, 'merchants');
  if (merchants.length === 0) r.fail('merchants', 'at least one merchant is required');
  const userIds = new Set<number>();
  const keys = new Set<string>();
  merchants.forEach((item, index) => {
    const merchant = resolveMerchant(r, item, `merchants[${index}]`);
    if (userIds.has(merchant.userId))
      r.fail(`merchants[${index}].userId`, `${merchant.userId} is used by another merchant`);
    userIds.add(merchant.userId);
    for (const key of [merchant.apiKey, ...merchant.apiKeys.map((k) => k.key)]) {
      // One key, one merchant: the key alone says whose request it is. Named by its fingerprint: a key never shows in a message.
      if (keys.has(key))
        r.fail(
          `merchants[${index}]`,
          `API key ${fingerprint(key, 'ak')} appears twice (every key must be unique across merchants)`,
        );
      keys.add(key);
    }
    resolved.push(merchant);
  });
  return resolved;
}

function resolveMerchant(r: ConfigReader, raw: unknown, where: string): EmulatorMerchant {
  const doc = r.mapping(raw, where, MERCHANT_FIELDS);
  const userId = r.integer(doc.userId, `${where}.userId`, undefined, 0, Number.MAX_SAFE_INTEGER);
  const privatePath = r.path(doc.privateKey, `${where}.privateKey`);
  const publicPath = r.path(doc.publicKey, `${where}.publicKey`);
  const privateKey = parseKey(readText(privatePath, 'private key', r.source), {
    source: privatePath,
    expect: 'private',
  }) as RsaPrivateKey;
  const publicKey = parseKey(readText(publicPath, 'public key', r.source), {
    source: publicPath,
    expect: 'public',
  }) as RsaPublicKey;
  const exported = (key: RsaPublicKey) => key.keyObject.export({ type: 'spki', format: 'der' });
  if (!exported(publicKey).equals(exported(privateKey.publicKey))) {
    r.fail(`${where}.publicKey`, `${publicPath} is not the public half of ${privatePath}`);
  }
  let profile: CryptoProfile;
  if (typeof doc.profile === 'string') {
    const profilePath = r.path(doc.profile, `${where}.profile`);
    profile = parseProfileYaml(readText(profilePath, 'profile', r.source), profilePath);
  } else {
    profile = resolveProfile(doc.profile, `${r.source}: ${where}.profile`);
  }
  const energy = r.mapping(doc.energy ?? { balance: 0, costPerTx: 1 }, `${where}.energy`, ENERGY_FIELDS);
  const merchant: EmulatorMerchant = {
    userId,
    apiKey: r.secret(doc.apiKey, `${where}.apiKey`),
    apiKeys: r
      .array(doc.apiKeys, `${where}.apiKeys`)
      .map((item, index) => resolveApiKey(r, item, `${where}.apiKeys[${index}]`)),
    privateKey: privatePath,
    publicKey: publicPath,
    profile,
    energy: {
      balance: r.bigint(energy.balance ?? 0, `${where}.energy.balance`, 0n),
      costPerTx: r.bigint(energy.costPerTx ?? 1, `${where}.energy.costPerTx`, 1n),
    },
    cards: r.array(doc.cards, `${where}.cards`).map((item, index) => resolveCard(r, item, `${where}.cards[${index}]`)),
    keyPair: { privateKey, publicKey },
  };
  const validFrom = keyBound(r, doc, where, 'apiKeyNotBefore', 'apiKeyValidFrom');
  const validUntil = keyBound(r, doc, where, 'apiKeyNotAfter', 'apiKeyValidUntil');
  if (validFrom !== undefined) merchant.apiKeyValidFrom = validFrom;
  if (validUntil !== undefined) merchant.apiKeyValidUntil = validUntil;
  const callbackUrl = r.url(doc.callbackUrl, `${where}.callbackUrl`);
  if (callbackUrl !== undefined) merchant.callbackUrl = callbackUrl;
  const cardIds = new Set<string>();
  for (const card of merchant.cards) {
    if (cardIds.has(card.powerCardId))
      r.fail(`${where}.cards`, `powerCardId ${showValue(card.powerCardId)} appears twice`);
    cardIds.add(card.powerCardId);
  }
  return merchant;
}

/**
 * A bound of the main key's window under either of its names: `apiKeyNotBefore` (the name an extra
 * key and the reference merchant use) or `apiKeyValidFrom` (the older one); both at once is an error.
 */
function keyBound(r: ConfigReader, doc: ConfigDoc, where: string, name: string, oldName: string): string | undefined {
  const given = (field: string) => doc[field] !== undefined && doc[field] !== null;
  if (given(name) && given(oldName)) r.fail(`${where}.${name}`, `${oldName} names the same bound: give one of them`);
  const field = given(name) ? name : oldName;
  return r.instant(doc[field], `${where}.${field}`);
}

function resolveApiKey(r: ConfigReader, raw: unknown, where: string): EmulatorApiKey {
  const doc = r.mapping(raw, where, KEY_FIELDS);
  const permissions = r.array(doc.permissions, `${where}.permissions`).map((value, index) => {
    if (!(PERMISSIONS as readonly unknown[]).includes(value))
      r.fail(`${where}.permissions[${index}]`, `must be one of ${PERMISSIONS.join(', ')}, not ${showValue(value)}`);
    return value as Permission;
  });
  return { key: r.secret(doc.key, `${where}.key`), permissions, ...r.keyWindow(doc, where) };
}

function resolveCard(r: ConfigReader, raw: unknown, where: string): EmulatorCard {
  const doc = r.mapping(raw, where, CARD_FIELDS);
  const status = doc.status ?? 'open';
  if (status !== 'open' && status !== 'closed')
    r.fail(`${where}.status`, `must be open or closed, not ${showValue(status)}`);
  return {
    powerCardId: r.string(doc.powerCardId, `${where}.powerCardId`),
    merchantUserId: r.string(doc.merchantUserId, `${where}.merchantUserId`),
    status,
  };
}
