import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { inKeyWindow } from '../core/api-keys.js';
import { ConfigReader, parseConfigYaml, showValue, type ConfigDoc } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { fingerprint } from '../core/scrub.js';
import { DEFAULT_BODY_LIMIT } from '../core/http-io.js';
import { parseProfileYaml, resolveProfile, type CryptoProfile } from '../core/profile.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../crypto/keys.js';
import { resolvePolicies, type ServicePolicies as EmulatorPolicies } from '../service/policies.js';
import { splitPem } from '../net/network-config.js';
import { loadServerTls, type ServerTls } from '../net/server-tls.js';

/** What an API key may call (ERR-403 when the key lacks it). */
const PERMISSIONS = ['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard'] as const;
/** One permission of an API key. */
export type Permission = (typeof PERMISSIONS)[number];

/** An extra API key of a merchant: its permissions and validity window (ERR-401 outside it). */
interface EmulatorApiKey {
  key: string;
  permissions: Permission[];
  /** ISO 8601; the key is valid from this instant (inclusive). */
  notBefore?: string;
  /** ISO 8601; the key is valid until this instant (inclusive). */
  notAfter?: string;
}

/** A card the merchant's users hold (card close). */
interface EmulatorCard {
  powerCardId: string;
  merchantUserId: string;
  status: 'open' | 'closed';
}

/** One merchant of the emulator, keys loaded. */
export interface EmulatorMerchant {
  /** The merchant's identifier in the wallet system (order requests carry it; card close's merchantId is its text). */
  userId: number;
  /**
   * Main credential: every permission, valid within apiKeyValidFrom..apiKeyValidUntil (ISO 8601,
   * inclusive). emulator.yaml may name the bounds `apiKeyNotBefore`/`apiKeyNotAfter`, as an extra
   * key's `notBefore`/`notAfter` and the reference merchant's are named; either name lands here.
   */
  apiKey: string;
  apiKeyValidFrom?: string;
  apiKeyValidUntil?: string;
  /** Further keys, e.g. one without permissions (ERR-403) and an expired one (ERR-401). */
  apiKeys: EmulatorApiKey[];
  /** Absolute path of the private key (the service's half). */
  privateKey: string;
  /** Absolute path of the public key (the merchant's half: clients encrypt requests with it by default). */
  publicKey: string;
  profile: CryptoProfile;
  /** Where callbacks go; none: they wait until the control API sets one. */
  callbackUrl?: string;
  /** Initial energy (the store keeps the live balance once it exists). */
  energy: { balance: bigint; costPerTx: bigint };
  /** Initial cards (added to the store when missing). */
  cards: EmulatorCard[];
  /** The loaded key pair. */
  keyPair: { privateKey: RsaPrivateKey; publicKey: RsaPublicKey };
}

/** Callback retry schedule (U-RETRY): delay before retry n = min(initialDelayMs × factor^(n-1), maxDelayMs). */
interface RetrySchedule {
  initialDelayMs: number;
  factor: number;
  maxDelayMs: number;
  /** Attempts per delivery, the first included. */
  maxAttempts: number;
}

/** emulator.yaml, validated and resolved (paths absolute, keys loaded, defaults filled). */
export interface EmulatorConfig {
  /** Where the config came from, for messages. */
  source: string;
  host: string;
  /** Preferred port; `startEmulator` uses 0 (any free port) when neither this nor its option is set. */
  port?: number;
  /** SQLite file path, or `:memory:` for a throwaway run. */
  store: string;
  /** Largest request body in bytes; larger gets 413 (U-LIMITS). */
  bodyLimit: number;
  /** A client must send its headers within this time. */
  headersTimeoutMs: number;
  /** A client must send its whole request within this time (slow clients are cut). */
  requestTimeoutMs: number;
  control: { token: string };
  callbacks: {
    /** A callback target must answer within this time (hanging receivers). */
    timeoutMs: number;
    /** A withdrawal order completes, and its callback is due, this long after submission. */
    withdrawalDelayMs: number;
    retry: RetrySchedule;
    /** `callbacks.ca: FILE`: PEM certificates trusted (besides the system roots) for https callback URLs. */
    ca?: string[];
  };
  merchants: EmulatorMerchant[];
  /** The readings of the interface's open points (policies.ts); defaults are the historical behaviour. */
  policies: EmulatorPolicies;
  /** `tls: {cert, key}`: serve HTTPS (paths relative to the YAML). */
  tls?: ServerTls;
}

/** Defaults of every optional setting. */
const EMULATOR_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  bodyLimit: DEFAULT_BODY_LIMIT,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  callbackTimeoutMs: 5_000,
  withdrawalDelayMs: 1_000,
  retry: Object.freeze({ initialDelayMs: 1_000, factor: 2, maxDelayMs: 60_000, maxAttempts: 8 }),
});

const TOP_FIELDS = ['host', 'port', 'store', 'bodyLimit', 'headersTimeoutMs', 'requestTimeoutMs', 'control', 'callbacks', 'policies', 'merchants', 'tls'];
const CONTROL_FIELDS = ['token'];
const CALLBACK_FIELDS = ['timeoutMs', 'withdrawalDelayMs', 'retry', 'ca'];
const RETRY_FIELDS = ['initialDelayMs', 'factor', 'maxDelayMs', 'maxAttempts'];
const MERCHANT_FIELDS = ['userId', 'apiKey', 'apiKeyNotBefore', 'apiKeyNotAfter', 'apiKeyValidFrom', 'apiKeyValidUntil', 'apiKeys', 'privateKey', 'publicKey', 'profile', 'callbackUrl', 'energy', 'cards'];
const KEY_FIELDS = ['key', 'permissions', 'notBefore', 'notAfter'];
const ENERGY_FIELDS = ['balance', 'costPerTx'];
const CARD_FIELDS = ['powerCardId', 'merchantUserId', 'status'];

function readText(path: string, what: string, source: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable');
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
  const r = new ConfigReader(source, 'bad-emulator-config', (path) => (isAbsolute(path) ? path : resolve(baseDir, path)));
  const doc = r.mapping(raw, '', TOP_FIELDS);
  const control = r.mapping(doc.control, 'control', CONTROL_FIELDS);
  const callbacks = r.optionalMapping(doc.callbacks, 'callbacks', CALLBACK_FIELDS);
  const retry = r.optionalMapping(callbacks.retry, 'callbacks.retry', RETRY_FIELDS);
  const defaults = EMULATOR_DEFAULTS;
  const headersTimeoutMs = r.integer(doc.headersTimeoutMs, 'headersTimeoutMs', defaults.headersTimeoutMs, 50, 600_000);
  const requestTimeoutMs = r.integer(doc.requestTimeoutMs, 'requestTimeoutMs', Math.max(defaults.requestTimeoutMs, headersTimeoutMs), 50, 600_000);
  if (requestTimeoutMs < headersTimeoutMs) r.fail('requestTimeoutMs', `must be at least headersTimeoutMs (${headersTimeoutMs})`);
  const initialDelayMs = r.integer(retry.initialDelayMs, 'callbacks.retry.initialDelayMs', defaults.retry.initialDelayMs, 0, 3_600_000);
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
      withdrawalDelayMs: r.integer(callbacks.withdrawalDelayMs, 'callbacks.withdrawalDelayMs', defaults.withdrawalDelayMs, 0, 86_400_000),
      retry: {
        initialDelayMs,
        factor: r.number(retry.factor, 'callbacks.retry.factor', defaults.retry.factor, 1, 100),
        maxDelayMs: r.integer(retry.maxDelayMs, 'callbacks.retry.maxDelayMs', Math.max(defaults.retry.maxDelayMs, initialDelayMs), initialDelayMs, 86_400_000),
        maxAttempts: r.integer(retry.maxAttempts, 'callbacks.retry.maxAttempts', defaults.retry.maxAttempts, 1, 100),
      },
    },
    merchants: [],
    policies: resolvePolicies(doc.policies, (where, message) => r.fail(where, message)),
  };
  if (doc.port !== undefined && doc.port !== null) config.port = r.integer(doc.port, 'port', undefined, 0, 65_535);
  const tls = loadServerTls(doc.tls, baseDir, source);
  if (tls) config.tls = tls;
  if (callbacks.ca !== undefined && callbacks.ca !== null) config.callbacks.ca = splitPem(readText(r.path(callbacks.ca, 'callbacks.ca'), 'callbacks.ca', source));
  const merchants = r.array(doc.merchants, 'merchants');
  if (merchants.length === 0) r.fail('merchants', 'at least one merchant is required');
  const userIds = new Set<number>();
  const keys = new Set<string>();
  merchants.forEach((item, index) => {
    const merchant = resolveMerchant(r, item, `merchants[${index}]`);
    if (userIds.has(merchant.userId)) r.fail(`merchants[${index}].userId`, `${merchant.userId} is used by another merchant`);
    userIds.add(merchant.userId);
    for (const key of [merchant.apiKey, ...merchant.apiKeys.map((k) => k.key)]) {
      // One key, one merchant: the key alone says whose request it is. Named by its fingerprint: a key never shows in a message.
      if (keys.has(key)) r.fail(`merchants[${index}]`, `API key ${fingerprint(key, 'ak')} appears twice (every key must be unique across merchants)`);
      keys.add(key);
    }
    config.merchants.push(merchant);
  });
  return config;
}

function resolveMerchant(r: ConfigReader, raw: unknown, where: string): EmulatorMerchant {
  const doc = r.mapping(raw, where, MERCHANT_FIELDS);
  const userId = r.integer(doc.userId, `${where}.userId`, undefined, 0, Number.MAX_SAFE_INTEGER);
  const privatePath = r.path(doc.privateKey, `${where}.privateKey`);
  const publicPath = r.path(doc.publicKey, `${where}.publicKey`);
  const privateKey = parseKey(readText(privatePath, 'private key', r.source), { source: privatePath, expect: 'private' }) as RsaPrivateKey;
  const publicKey = parseKey(readText(publicPath, 'public key', r.source), { source: publicPath, expect: 'public' }) as RsaPublicKey;
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
    apiKeys: r.array(doc.apiKeys, `${where}.apiKeys`).map((item, index) => resolveApiKey(r, item, `${where}.apiKeys[${index}]`)),
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
    if (cardIds.has(card.powerCardId)) r.fail(`${where}.cards`, `powerCardId ${showValue(card.powerCardId)} appears twice`);
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
    if (!(PERMISSIONS as readonly unknown[]).includes(value)) r.fail(`${where}.permissions[${index}]`, `must be one of ${PERMISSIONS.join(', ')}, not ${showValue(value)}`);
    return value as Permission;
  });
  return { key: r.secret(doc.key, `${where}.key`), permissions, ...r.keyWindow(doc, where) };
}

function resolveCard(r: ConfigReader, raw: unknown, where: string): EmulatorCard {
  const doc = r.mapping(raw, where, CARD_FIELDS);
  const status = doc.status ?? 'open';
  if (status !== 'open' && status !== 'closed') r.fail(`${where}.status`, `must be open or closed, not ${showValue(status)}`);
  return { powerCardId: r.string(doc.powerCardId, `${where}.powerCardId`), merchantUserId: r.string(doc.merchantUserId, `${where}.merchantUserId`), status };
}

/** The keys a test runner needs for ERR-401 and ERR-403 cases, found in a merchant's config. */
interface MerchantKeyDescription {
  /** The main key: every permission. */
  apiKey: string;
  /** A key valid now that lacks a permission (ERR-403). */
  forbiddenKey?: string;
  /** A key outside its validity window now (ERR-401). */
  expiredKey?: string;
}

/**
 * Picks the main key, a valid key without every permission, and an expired key from a merchant.
 *
 * @example describeMerchantKeys(config.merchants[0]!).forbiddenKey // 'forbidden-3f9a...'
 */
export function describeMerchantKeys(merchant: EmulatorMerchant, now = Date.now()): MerchantKeyDescription {
  const description: MerchantKeyDescription = { apiKey: merchant.apiKey };
  const forbidden = merchant.apiKeys.find((k) => inKeyWindow(k, now) && PERMISSIONS.some((p) => !k.permissions.includes(p)));
  if (forbidden) description.forbiddenKey = forbidden.key;
  const expired = merchant.apiKeys.find((k) => k.notAfter !== undefined && Date.parse(k.notAfter) < now);
  if (expired) description.expiredKey = expired.key;
  else if (merchant.apiKeyValidUntil !== undefined && Date.parse(merchant.apiKeyValidUntil) < now) description.expiredKey = merchant.apiKey;
  return description;
}

/** One file of an emulator setup. */
interface SetupFile {
  /** File name inside the setup folder. */
  name: string;
  contents: string;
  mode: number;
}

/** Options of a new emulator setup. */
interface SetupOptions {
  /** Key size of the merchant key pair (default 1024, the platform's). */
  bits?: number;
  /** `store:` of the config (default `emulator.sqlite` beside it). */
  store?: string;
  /** `callbackUrl:` of the merchant (default http://127.0.0.1:9400/callback). */
  callbackUrl?: string;
  /** `port:` of the config (default 8080). */
  port?: number;
}

/**
 * The files of a ready emulator setup: emulator.yaml (one merchant with a main key, a key without
 * permissions, an expired key, energy and two open cards) and the merchant key pair. Pure: the
 * caller writes them.
 *
 * @example emulatorSetupFiles().map((f) => f.name) // ['emulator.yaml', 'merchant-private.pem', ...]
 */
export function emulatorSetupFiles(options: SetupOptions = {}): SetupFile[] {
  const pair = generateMerchantKeyPair(options.bits ?? 1024);
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  const yaml = `# wallet-conformance service emulator (npx wallet-conformance emulator --config THIS_FILE)
# Paths are relative to this file. The store keeps state across restarts: it is seeded from this
# file once (merchants' energy, cards) and wins afterwards; delete it to start afresh.
host: 127.0.0.1
port: ${options.port ?? 8080}                  # --port overrides; 0 picks a free port
store: '${options.store ?? 'emulator.sqlite'}'   # SQLite file, or ':memory:' for a throwaway run
bodyLimit: 65536              # bytes; larger bodies get 413 (U-LIMITS)
headersTimeoutMs: 5000        # slow clients are cut
requestTimeoutMs: 10000
control:
  token: ${hex(16)}   # X-Control-Token of the control API (/__control)
callbacks:
  timeoutMs: 5000             # a callback target must answer within this time
  withdrawalDelayMs: 1000     # a withdrawal completes and its callback (type 3) is due after this
  retry:                      # U-RETRY: until errCode 0, never after
    initialDelayMs: 1000
    factor: 2
    maxDelayMs: 60000
    maxAttempts: 8
policies: {}                  # readings of the interface's open points (U-*): see docs/decisions/open-points-emulator-policies.md
merchants:
  - userId: 10086
    apiKey: ak_${hex(12)}                 # every permission
    apiKeyNotBefore: '2020-01-01T00:00:00Z'  # the main key's window (the older names apiKeyValidFrom/apiKeyValidUntil still work)
    apiKeyNotAfter: '2099-12-31T23:59:59Z'
    apiKeys:
      - key: forbidden-${hex(8)}          # valid, no permission: ERR-403
        permissions: []
      - key: expired-${hex(8)}            # outside its validity window: ERR-401
        permissions: [getEnergyMaxCount, withdrawWithoutVerify, closeCard]
        notAfter: '2020-01-01T00:00:00Z'
    privateKey: merchant-private.pem      # the service's half
    publicKey: merchant-public.pem        # the merchant's half: encrypt requests with it
    profile: {}                           # crypto profile (inline, or a profile YAML path); defaults: pkcs1, request: public
    callbackUrl: ${options.callbackUrl ?? 'http://127.0.0.1:9400/callback'}
    energy:
      balance: 20000000                   # energyMaxCount = floor(balance / costPerTx) = 312
      costPerTx: 64000
    cards:
      - {powerCardId: pc-5500-0001, merchantUserId: u-1001, status: open}
      - {powerCardId: pc-5500-0002, merchantUserId: u-1001, status: open}
`;
  return [
    { name: 'emulator.yaml', contents: yaml, mode: 0o600 },
    { name: 'merchant-private.pem', contents: pair.privatePem, mode: 0o600 },
    { name: 'merchant-public.pem', contents: pair.publicPem, mode: 0o644 },
    { name: 'merchant-private.b64', contents: `${pair.privateBase64}\n`, mode: 0o600 },
    { name: 'merchant-public.b64', contents: `${pair.publicBase64}\n`, mode: 0o644 },
  ];
}

/**
 * Writes a ready emulator setup into `dir` (see {@link emulatorSetupFiles}); refuses to overwrite
 * existing files unless `force`.
 *
 * @example initEmulatorDir('emu').configPath // '<abs>/emu/emulator.yaml'
 */
export function initEmulatorDir(dir: string, options: SetupOptions & { force?: boolean } = {}): { configPath: string; files: string[] } {
  const root = resolve(dir);
  const files = emulatorSetupFiles(options);
  try {
    mkdirSync(root, { recursive: true });
  } catch (error) {
    throw new ConfigError('unwritable-file', `cannot create ${root}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!options.force) {
    // Check every file first: a half-written setup (new key, old config) would be worse than none.
    const existing = files.map((file) => join(root, file.name)).find((path) => existsSync(path));
    if (existing) throw new ConfigError('file-exists', `${existing} exists already (use --force to overwrite)`);
  }
  const written: string[] = [];
  for (const file of files) {
    const path = join(root, file.name);
    try {
      writeFileSync(path, file.contents, { flag: options.force ? 'w' : 'wx', mode: file.mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new ConfigError('file-exists', `${path} exists already (use --force to overwrite)`);
      throw new ConfigError('unwritable-file', `cannot write ${path}: ${code ?? (error as Error).message}`);
    }
    written.push(path);
  }
  return { configPath: join(root, 'emulator.yaml'), files: written };
}
