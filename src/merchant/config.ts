import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_BODY_LIMIT } from '../core/http-io.js';
import { parseProfileYaml, resolveProfile, type CryptoProfile } from '../core/profile.js';
import { halfFor } from '../crypto/codec.js';
import { parseKey, type RsaKey } from '../crypto/keys.js';
import type { ApiKeyEntry } from './api-keys.js';
import { isPostgresUrl } from './postgres-store.js';
import { loadServerTls, type ServerTls } from '../net/server-tls.js';

/** merchant.yaml as written, paths resolved against the file's folder. */
export interface MerchantConfigFile {
  /** Where the config came from, for messages. */
  source: string;
  apiKeys: ApiKeyEntry[];
  publicKeyPath: string | undefined;
  /** The service's half, kept beside the receiver's config for tests; the receiver never needs it by default. */
  privateKeyPath: string | undefined;
  /** An inline profile, or the path of a profile YAML. */
  profile: CryptoProfile | { path: string };
  /** SQLite file path, `:memory:`, or a `postgres://` URL. */
  storePath: string;
  bodyLimit: number;
  port: number;
  host: string;
  /** The `tls: {cert, key}` block as written (files are read with the keys). */
  tls?: unknown;
}

/** merchant.yaml with its keys and profile loaded: what the server runs with. */
export interface MerchantSettings {
  source: string;
  apiKeys: ApiKeyEntry[];
  /** The key that opens callbacks (the public half under the default profile). */
  callbackKey: RsaKey;
  profile: CryptoProfile;
  storePath: string;
  bodyLimit: number;
  port: number;
  host: string;
  /** Serve HTTPS with this certificate and key. */
  tls?: ServerTls;
}

const FIELDS = ['apiKey', 'publicKey', 'privateKey', 'profile', 'store', 'bodyLimit', 'port', 'host', 'tls'] as const;
const KEY_FIELDS = ['key', 'notBefore', 'notAfter'] as const;

/**
 * Parses merchant.yaml. Every problem (unknown field, wrong type, missing apiKey) is a ConfigError
 * with one line naming the file and the field.
 *
 * @example parseMerchantConfig('apiKey: k\npublicKey: merchant-public.pem\n', '/srv/merchant.yaml').publicKeyPath // '/srv/merchant-public.pem'
 */
export function parseMerchantConfig(text: string, source: string): MerchantConfigFile {
  const fail = (message: string): never => {
    throw new ConfigError('bad-merchant-config', `${source}: ${message}`);
  };
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    fail(`not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(`expected a mapping of ${FIELDS.join(', ')}`);
  const doc = raw as Record<string, unknown>;
  for (const field of Object.keys(doc)) {
    if (!(FIELDS as readonly string[]).includes(field)) fail(`unknown field '${field}' (known: ${FIELDS.join(', ')})`);
  }
  const base = dirname(resolve(source));
  const path = (value: unknown, field: string): string | undefined => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || value.trim() === '') return fail(`${field} must be a file path`);
    return value === ':memory:' || isAbsolute(value) ? value : resolve(base, value);
  };
  const integer = (value: unknown, field: string, fallback: number, min: number, max: number): number => {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) return fail(`${field} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
    return value;
  };

  let profile: MerchantConfigFile['profile'];
  if (typeof doc.profile === 'string') profile = { path: path(doc.profile, 'profile') as string };
  else profile = resolveProfile(doc.profile, `${source}: profile`);
  if (doc.host !== undefined && (typeof doc.host !== 'string' || doc.host === '')) fail('host must be a host name or address, e.g. 127.0.0.1');

  return {
    source,
    apiKeys: apiKeys(doc.apiKey, fail),
    publicKeyPath: path(doc.publicKey, 'publicKey'),
    privateKeyPath: path(doc.privateKey, 'privateKey'),
    profile,
    // A postgres:// URL names a database server (several instances share it), not a file.
    storePath: typeof doc.store === 'string' && isPostgresUrl(doc.store) ? doc.store : (path(doc.store, 'store') ?? resolve(base, 'merchant.sqlite')),
    bodyLimit: integer(doc.bodyLimit, 'bodyLimit', DEFAULT_BODY_LIMIT, 1, 64 * 1024 * 1024),
    port: integer(doc.port, 'port', 0, 0, 65_535),
    host: (doc.host as string | undefined) ?? '127.0.0.1',
    ...(doc.tls === undefined || doc.tls === null ? {} : { tls: doc.tls }),
  };
}

function apiKeys(value: unknown, fail: (message: string) => never): ApiKeyEntry[] {
  if (value === undefined || value === null) return fail('apiKey is required (the X-API-KEY the service sends, CB-KEY-SAME)');
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return fail('apiKey lists no key');
  return list.map((item: unknown, i) => {
    const where = Array.isArray(value) ? `apiKey[${i}]` : 'apiKey';
    if (typeof item === 'string' && item !== '') return { key: item };
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      return fail(`${where} must be a string (quote a key that looks like a number) or a mapping of ${KEY_FIELDS.join(', ')}`);
    }
    const entry = item as Record<string, unknown>;
    for (const field of Object.keys(entry)) {
      if (!(KEY_FIELDS as readonly string[]).includes(field)) fail(`${where}: unknown field '${field}' (known: ${KEY_FIELDS.join(', ')})`);
    }
    if (typeof entry.key !== 'string' || entry.key === '') fail(`${where}.key must be a non-empty string`);
    const result: ApiKeyEntry = { key: entry.key as string };
    for (const bound of ['notBefore', 'notAfter'] as const) {
      const when = entry[bound];
      if (when === undefined || when === null) continue;
      const ms = when instanceof Date ? when.getTime() : typeof when === 'string' ? Date.parse(when) : Number.NaN;
      if (Number.isNaN(ms)) fail(`${where}.${bound} must be an ISO 8601 date-time such as 2030-01-01T00:00:00Z, not ${JSON.stringify(when)}`);
      result[bound] = new Date(ms);
    }
    return result;
  });
}

/**
 * Loads the keys and profile that merchant.yaml names, with `read` doing the file I/O (the CLI passes
 * its reader, which turns a missing file into one clear line).
 */
export function loadMerchantSettings(file: MerchantConfigFile, read: (path: string, what: string) => Uint8Array): MerchantSettings {
  const profile = 'path' in file.profile ? parseProfileYaml(Buffer.from(read(file.profile.path, 'profile')).toString('utf8'), file.profile.path) : file.profile;
  // CB-DECRYPT: the service encrypts callbacks with the private key, so the merchant opens them
  // with the public key; a profile may say otherwise, and then the other half is needed.
  const half = halfFor('callback', 'decrypt', profile);
  const path = half === 'public' ? file.publicKeyPath : file.privateKeyPath;
  if (path === undefined) {
    throw new ConfigError('bad-merchant-config', `${file.source}: ${half}Key is required (the profile opens callbacks with the ${half} key)`);
  }
  const callbackKey = parseKey(read(path, `${half} key`), { source: path, expect: half });
  const tls = loadServerTls(file.tls, dirname(resolve(file.source)), file.source);
  return { source: file.source, apiKeys: file.apiKeys, callbackKey, profile, storePath: file.storePath, bodyLimit: file.bodyLimit, port: file.port, host: file.host, ...(tls ? { tls } : {}) };
}

/** The merchant.yaml that `merchant --init` writes, with the file names it writes beside it. */
export function merchantConfigTemplate(apiKey: string): string {
  return `# Reference merchant receiver: npx wallet-conformance merchant --config merchant.yaml
# Paths are relative to this file.
apiKey: "${apiKey}"            # the X-API-KEY the service sends (CB-KEY-SAME); or a list:
#  - { key: "K1", notBefore: "2030-01-01T00:00:00Z", notAfter: "2031-01-01T00:00:00Z" }
publicKey: merchant-public.pem    # opens callbacks (CB-DECRYPT)
privateKey: merchant-private.pem  # the service's half: for sending test callbacks only
profile: {}                       # crypto profile (inline, or the path of a profile YAML); defaults: pkcs1, callback: private
store: merchant.sqlite            # processed events: SQLite file, ":memory:", or postgres://user:pw@host/db (several instances)
bodyLimit: 65536                  # bytes; larger bodies get HTTP 413
port: 9400                        # 0 = any free port; --port overrides (the emulator's --init sends callbacks here)
host: 127.0.0.1
`;
}
