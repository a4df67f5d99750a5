import { parseConfigYaml } from './config-reader.js';
import { ConfigError } from './errors.js';

/** Padding schemes a profile may name (U-CRYPTO: the interface leaves padding open). */
export const PADDINGS = ['pkcs1', 'oaep-sha1', 'oaep-sha256'] as const;
/** RSA padding of every block. */
export type Padding = (typeof PADDINGS)[number];

/** Which half of the merchant key pair performs an operation. */
export type KeyHalf = 'public' | 'private';

// The directions live apart (no YAML reader behind them) so that the CLI's help can name them.
import { DIRECTIONS } from './directions.js';
export { type Direction } from './directions.js';

/** The crypto profile (docs/crypto-profiles.md): every field optional in YAML, resolved here once. */
export interface CryptoProfile {
  padding: Padding;
  /** Which half encrypts a request's form field `data`. */
  request: KeyHalf;
  /** Which half encrypts the envelope's `data`. */
  response: KeyHalf;
  /** Which half encrypts a callback body (CB-DECRYPT: the service uses the private key). */
  callback: KeyHalf;
  /** Plaintext bytes per block before encryption; `auto` is the maximum the padding allows. */
  plaintextBlock: 'auto' | number;
}

/**
 * The defaults follow the real service's public documentation: 1024-bit merchant keys,
 * `RSA/ECB/PKCS1Padding`, Java-style segmentation (k-11 byte blocks).
 */
export const DEFAULT_PROFILE: Readonly<CryptoProfile> = Object.freeze({
  padding: 'pkcs1',
  request: 'public',
  response: 'private',
  callback: 'private',
  plaintextBlock: 'auto',
});

const PROFILE_FIELDS = ['padding', 'request', 'response', 'callback', 'plaintextBlock'] as const;

/** Hash output length in bytes for an OAEP padding, 0 for PKCS#1 v1.5. */
function oaepHashBytes(padding: Padding): number {
  return padding === 'oaep-sha1' ? 20 : padding === 'oaep-sha256' ? 32 : 0;
}

/** The largest plaintext block a padding allows for a k-byte modulus: k-11 or k-2h-2. */
export function maxPlaintextBlock(padding: Padding, modulusBytes: number): number {
  const h = oaepHashBytes(padding);
  return h === 0 ? modulusBytes - 11 : modulusBytes - 2 * h - 2;
}

/** The plaintext block size a profile uses with a key of `modulusBytes` bytes. */
export function plaintextBlockSize(profile: CryptoProfile, modulusBytes: number): number {
  const max = maxPlaintextBlock(profile.padding, modulusBytes);
  if (max < 1) {
    throw new ConfigError('key-too-small', `a ${modulusBytes * 8}-bit key is too small for ${profile.padding} padding`);
  }
  if (profile.plaintextBlock === 'auto') return max;
  if (profile.plaintextBlock > max) {
    throw new ConfigError(
      'plaintext-block-too-large',
      `profile plaintextBlock ${profile.plaintextBlock} exceeds the ${max}-byte maximum of ${profile.padding} with a ${modulusBytes * 8}-bit key`,
    );
  }
  return profile.plaintextBlock;
}

/** The half of the key pair that undoes what `half` encrypted. */
export function otherHalf(half: KeyHalf): KeyHalf {
  return half === 'public' ? 'private' : 'public';
}

/**
 * Resolves a profile from parsed YAML/JSON: unknown fields and bad values are a ConfigError
 * (a typo such as `paddding` must not silently fall back to the default).
 *
 * @example resolveProfile({ padding: 'oaep-sha256' }).request === 'public'
 */
export function resolveProfile(input: unknown, source = 'profile'): CryptoProfile {
  if (input === undefined || input === null) return { ...DEFAULT_PROFILE };
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new ConfigError(
      'bad-profile',
      `${source}: a profile is a mapping of padding, request, response, callback, plaintextBlock`,
    );
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!(PROFILE_FIELDS as readonly string[]).includes(key)) {
      throw new ConfigError('bad-profile', `${source}: unknown field '${key}' (known: ${PROFILE_FIELDS.join(', ')})`);
    }
  }
  const profile: CryptoProfile = { ...DEFAULT_PROFILE };
  if (raw.padding !== undefined) {
    if (!(PADDINGS as readonly unknown[]).includes(raw.padding)) {
      throw new ConfigError(
        'bad-profile',
        `${source}: padding must be one of ${PADDINGS.join(', ')}, not ${JSON.stringify(raw.padding)}`,
      );
    }
    profile.padding = raw.padding as Padding;
  }
  for (const direction of DIRECTIONS) {
    const value = raw[direction];
    if (value === undefined) continue;
    if (value !== 'public' && value !== 'private') {
      throw new ConfigError(
        'bad-profile',
        `${source}: ${direction} must be public or private, not ${JSON.stringify(value)}`,
      );
    }
    profile[direction] = value;
  }
  const block = raw.plaintextBlock;
  if (block !== undefined && block !== 'auto') {
    if (typeof block !== 'number' || !Number.isInteger(block) || block < 1) {
      throw new ConfigError(
        'bad-profile',
        `${source}: plaintextBlock must be auto or a positive integer, not ${JSON.stringify(block)}`,
      );
    }
    profile.plaintextBlock = block;
  }
  return profile;
}

/** Parses a profile YAML file's text (see {@link resolveProfile}). */
export function parseProfileYaml(text: string, source = 'profile'): CryptoProfile {
  return resolveProfile(parseConfigYaml(text, source, 'bad-profile'), source);
}
