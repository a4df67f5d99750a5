import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigReader, describeType, parseConfigYaml } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_BODY_LIMIT } from '../platform/http-io.js';
import { parseProfileYaml, resolveProfile, type CryptoProfile } from '../core/profile.js';
import { halfFor } from '../crypto/codec.js';
import { parseKey, type RsaKey } from '../crypto/keys.js';
import type { ApiKeyEntry } from './api-keys.js';
import { isPostgresUrl } from './postgres-store.js';
import { PROBE_LIMITS, type ProbeOptions } from './probe.js';
import { loadServerTls, type ServerTls } from '../net/server-tls.js';

/** merchant.yaml as written, paths resolved against the file's folder. */
interface MerchantConfigFile {
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
  /** `probe: {token, deadlineMs}` (src/merchant/probe.ts). */
  probe: ProbeOptions;
}

/** merchant.yaml with its keys and profile loaded: what the server runs with. */
interface MerchantSettings {
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
  /** The probe's token and answer deadline. */
  probe: ProbeOptions;
}

const FIELDS = ['apiKey', 'publicKey', 'privateKey', 'profile', 'store', 'bodyLimit', 'port', 'host', 'tls', 'probe'];
const PROBE_FIELDS = ['token', 'deadlineMs'];
const KEY_FIELDS = ['key', 'notBefore', 'notAfter'];

/**
 * Parses merchant.yaml. Every problem (unknown field, wrong type, missing apiKey) is a ConfigError
 * with one line naming the file and the field.
 *
 * @example parseMerchantConfig('apiKey: k\npublicKey: merchant-public.pem\n', '/srv/merchant.yaml').publicKeyPath // '/srv/merchant-public.pem'
 */
export function parseMerchantConfig(text: string, source: string): MerchantConfigFile {
  const base = dirname(resolve(source));
  const r = new ConfigReader(source, 'bad-merchant-config', (path) => (isAbsolute(path) ? path : resolve(base, path)));
  const doc = r.mapping(parseConfigYaml(text, source, 'bad-merchant-config'), '', FIELDS);
  const profile: MerchantConfigFile['profile'] =
    typeof doc.profile === 'string'
      ? { path: r.path(doc.profile, 'profile') }
      : resolveProfile(doc.profile, `${source}: profile`);
  return {
    source,
    apiKeys: apiKeys(r, doc.apiKey),
    publicKeyPath: r.optionalPath(doc.publicKey, 'publicKey'),
    privateKeyPath: r.optionalPath(doc.privateKey, 'privateKey'),
    profile,
    // A postgres:// URL names a database server (several instances share it), not a file.
    storePath:
      typeof doc.store === 'string' && isPostgresUrl(doc.store)
        ? doc.store
        : (r.optionalPath(doc.store, 'store') ?? resolve(base, 'merchant.sqlite')),
    bodyLimit: r.integer(doc.bodyLimit, 'bodyLimit', DEFAULT_BODY_LIMIT, 1, 64 * 1024 * 1024),
    port: r.integer(doc.port, 'port', 0, 0, 65_535),
    host: r.host(doc.host, 'host', '127.0.0.1'),
    ...(doc.tls === undefined || doc.tls === null ? {} : { tls: doc.tls }),
    probe: probeOptions(r, doc.probe),
  };
}

/** `probe:` — an optional token (a secret, never shown) and the answer deadline in ms. */
function probeOptions(r: ConfigReader, value: unknown): ProbeOptions {
  const doc = r.optionalMapping(value, 'probe', PROBE_FIELDS);
  const token = doc.token === undefined || doc.token === null ? undefined : r.secret(doc.token, 'probe.token');
  return {
    ...(token === undefined ? {} : { token }),
    deadlineMs: r.integer(doc.deadlineMs, 'probe.deadlineMs', PROBE_LIMITS.deadlineMs, 100, 600_000),
  };
}

/** `apiKey:` — one key, or a list of keys and `{ key, notBefore, notAfter }` mappings; a key is never shown in a message. */
function apiKeys(r: ConfigReader, value: unknown): ApiKeyEntry[] {
  if (value === undefined || value === null)
    return r.fail('apiKey', 'is required (the X-API-KEY the service sends, CB-KEY-SAME)');
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return r.fail('apiKey', 'lists no key');
  return list.map((item: unknown, i) => {
    const where = Array.isArray(value) ? `apiKey[${i}]` : 'apiKey';
    if (typeof item === 'string' && item !== '') return { key: item };
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      return r.fail(
        where,
        `must be a string (quote a key that looks like a number) or a mapping of ${KEY_FIELDS.join(', ')}, not ${item === '' ? 'an empty string' : describeType(item)}`,
      );
    }
    const entry = r.mapping(item, where, KEY_FIELDS);
    const key = r.secret(entry.key, `${where}.key`);
    const { notBefore, notAfter } = r.keyWindow(entry, where);
    return {
      key,
      ...(notBefore === undefined ? {} : { notBefore: new Date(notBefore) }),
      ...(notAfter === undefined ? {} : { notAfter: new Date(notAfter) }),
    };
  });
}

/**
 * Loads the keys and profile that merchant.yaml names, with `read` doing the file I/O (the CLI passes
 * its reader, which turns a missing file into one clear line).
 */
export function loadMerchantSettings(
  file: MerchantConfigFile,
  read: (path: string, what: string) => Uint8Array,
): MerchantSettings {
  const profile =
    'path' in file.profile
      ? parseProfileYaml(Buffer.from(read(file.profile.path, 'profile')).toString('utf8'), file.profile.path)
      : file.profile;
  // CB-DECRYPT: the service encrypts callbacks with the private key, so the merchant opens them
  // with the public key; a profile may say otherwise, and then the other half is needed.
  const half = halfFor('callback', 'decrypt', profile);
  const path = half === 'public' ? file.publicKeyPath : file.privateKeyPath;
  if (path === undefined) {
    throw new ConfigError(
      'bad-merchant-config',
      `${file.source}: ${half}Key is required (the profile opens callbacks with the ${half} key)`,
    );
  }
  const callbackKey = parseKey(read(path, `${half} key`), { source: path, expect: half });
  const tls = loadServerTls(file.tls, dirname(resolve(file.source)), file.source);
  return {
    source: file.source,
    apiKeys: file.apiKeys,
    callbackKey,
    profile,
    storePath: file.storePath,
    bodyLimit: file.bodyLimit,
    port: file.port,
    host: file.host,
    ...(tls ? { tls } : {}),
    probe: file.probe,
  };
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
# probe:                          # GET /probe, paged (docs/probe.md)
#   token: "a long random string" # then the probe answers only Authorization: Bearer <token>
#   deadlineMs: 10000             # the whole answer within this, else the connection is cut
`;
}
