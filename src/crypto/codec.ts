import { ConfigError } from '../core/errors.js';
import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import {
  DEFAULT_PROFILE,
  otherHalf,
  plaintextBlockSize,
  type CryptoProfile,
  type Direction,
  type KeyHalf,
} from '../core/profile.js';
import { decodeBase64Strict, encodeBase64, type Base64Options } from './base64.js';
import { decryptBlocks, encryptBlocks } from './block-cipher.js';
import { CryptoError } from './errors.js';
import type { RsaKey } from './keys.js';
import { nativeEngine, type RsaEngine } from './rsa-engine.js';

/** What a seal or open needs besides the data: the profile and, optionally, another engine. */
interface CodecOptions {
  profile?: CryptoProfile;
  engine?: RsaEngine;
  /** Base64 forms read instead of refused when opening (see decodeBase64Strict); strict by default. */
  base64?: Base64Options;
}

/** An opened payload: the exact bytes, their text and the parsed JSON (numbers kept exact). */
export interface OpenedJson {
  bytes: Buffer;
  text: string;
  value: ExactJson;
}

/** Which half of the key pair encrypts (or decrypts) data travelling in `direction`. */
export function halfFor(
  direction: Direction,
  operation: 'encrypt' | 'decrypt',
  profile: CryptoProfile = DEFAULT_PROFILE,
): KeyHalf {
  return operation === 'encrypt' ? profile[direction] : otherHalf(profile[direction]);
}

/** Refuses a key of the half that the profile does not use for this direction and operation. */
export function assertKeyHalf(
  key: RsaKey,
  direction: Direction,
  operation: 'encrypt' | 'decrypt',
  profile: CryptoProfile = DEFAULT_PROFILE,
): void {
  const needed = halfFor(direction, operation, profile);
  if (key.half !== needed) {
    throw new ConfigError(
      'wrong-key-half',
      `the profile encrypts ${direction} data with the ${profile[direction]} key, so ${operation}ing it needs the ${needed} key; a ${key.half} key was given`,
    );
  }
}

/** Encrypts bytes for `direction` and Base64-encodes the concatenated blocks once. */
export function sealBytes(plain: Uint8Array, direction: Direction, key: RsaKey, options: CodecOptions = {}): string {
  const profile = options.profile ?? DEFAULT_PROFILE;
  assertKeyHalf(key, direction, 'encrypt', profile);
  const blockSize = plaintextBlockSize(profile, key.modulusBytes);
  return encodeBase64(encryptBlocks(plain, key, profile.padding, blockSize, options.engine ?? nativeEngine));
}

/** Strict Base64 decode then segmented decryption; every failure is a CryptoError with a reason. */
export function openBytes(base64: string, direction: Direction, key: RsaKey, options: CodecOptions = {}): Buffer {
  const profile = options.profile ?? DEFAULT_PROFILE;
  assertKeyHalf(key, direction, 'decrypt', profile);
  return decryptBlocks(
    decodeBase64Strict(base64, options.base64),
    key,
    profile.padding,
    options.engine ?? nativeEngine,
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes UTF-8 strictly: invalid sequences are a CryptoError, not U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new CryptoError(
      'not-utf8',
      'the decrypted bytes are not valid UTF-8 (wrong character set, or not the expected payload)',
    );
  }
}

/**
 * Encrypts a JSON payload. A string is taken as the exact JSON text to send; any other value is
 * serialised with exact numbers.
 */
export function sealJson(value: unknown, direction: Direction, key: RsaKey, options: CodecOptions = {}): string {
  const text = typeof value === 'string' ? value : stringifyExact(value);
  return sealBytes(Buffer.from(text, 'utf8'), direction, key, options);
}

/** Decrypts and parses a JSON payload, keeping numbers exact. */
export function openJson(base64: string, direction: Direction, key: RsaKey, options: CodecOptions = {}): OpenedJson {
  const bytes = openBytes(base64, direction, key, options);
  const text = decodeUtf8(bytes);
  try {
    return { bytes, text, value: parseExactJson(text) };
  } catch (error) {
    throw new CryptoError('not-json', `the decrypted text is not JSON: ${(error as Error).message}`);
  }
}
