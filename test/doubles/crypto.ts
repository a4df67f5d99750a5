/**
 * Segmented RSA of the default crypto profile (docs/crypto-profiles.md), written from the contract alone (no code of
 * src/): PKCS#1 v1.5, plaintext blocks of k-11 bytes, each block encrypted to k bytes, the
 * concatenation Base64-encoded once (standard alphabet, padded, no line breaks).
 *
 * Directions of the default profile: a request is encrypted with the PUBLIC key (the service
 * decrypts with the private key), a response and a callback with the PRIVATE key (the merchant
 * decrypts with the public key).
 */
import {
  constants,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  privateEncrypt,
  publicDecrypt,
  publicEncrypt,
  type KeyObject,
} from 'node:crypto';
import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/** A double's own error: why a ciphertext or text could not be opened. */
export class DoubleCryptoError extends Error {}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Strict Base64: standard alphabet, padded, length a multiple of 4, canonical (re-encodes to itself). */
export function strictBase64(text: string): Buffer {
  if (!BASE64.test(text) || text.length % 4 !== 0) throw new DoubleCryptoError('not strict padded standard Base64');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) throw new DoubleCryptoError('non-canonical Base64');
  return bytes;
}

/** A private key from PEM text or a KeyObject. */
export function privateKeyOf(key: string | KeyObject): KeyObject {
  return typeof key === 'string' ? createPrivateKey(key) : key;
}

/** A public key from PEM text, a KeyObject, or derived from a private key. */
export function publicKeyOf(key: string | KeyObject): KeyObject {
  return typeof key === 'string' ? createPublicKey(key) : key.type === 'private' ? createPublicKey(key) : key;
}

function modulusBytes(key: KeyObject): number {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (!bits) throw new DoubleCryptoError('not an RSA key');
  return Math.ceil(bits / 8);
}

function segments(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  if (out.length === 0) out.push(Buffer.alloc(0));
  return out;
}

/** Removes PKCS#1 v1.5 type-2 padding: 00 02 PS(>= 8 non-zero bytes) 00 M. */
function unpadType2(block: Buffer): Buffer {
  if (block[0] !== 0x00 || block[1] !== 0x02)
    throw new DoubleCryptoError('not a PKCS#1 v1.5 encryption block (wrong key?)');
  const separator = block.indexOf(0x00, 2);
  if (separator < 0 || separator < 10) throw new DoubleCryptoError('malformed PKCS#1 v1.5 padding');
  return block.subarray(separator + 1);
}

/** Request direction: encrypts with the public key (the merchant's side of an order call). */
export function encryptWithPublic(plain: Buffer, key: KeyObject): string {
  const k = modulusBytes(key);
  const blocks = segments(plain, k - 11).map((block) =>
    publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, block),
  );
  return Buffer.concat(blocks).toString('base64');
}

/**
 * Request direction, service side: decrypts with the private key. Node refuses PKCS#1 v1.5 private
 * decryption, so each block is opened raw and unpadded here.
 */
export function decryptWithPrivate(text: string, key: KeyObject): Buffer {
  const k = modulusBytes(key);
  const bytes = strictBase64(text);
  if (bytes.length === 0 || bytes.length % k !== 0)
    throw new DoubleCryptoError(`ciphertext is ${bytes.length} bytes, not a multiple of ${k}`);
  const out: Buffer[] = [];
  for (const block of segments(bytes, k)) {
    let raw: Buffer;
    try {
      raw = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, block);
    } catch {
      throw new DoubleCryptoError('RSA decryption failed');
    }
    out.push(unpadType2(raw));
  }
  return Buffer.concat(out);
}

/** Response and callback direction: encrypts with the private key (PKCS#1 v1.5 type 1). */
export function encryptWithPrivate(plain: Buffer, key: KeyObject): string {
  const k = modulusBytes(key);
  const blocks = segments(plain, k - 11).map((block) =>
    privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, block),
  );
  return Buffer.concat(blocks).toString('base64');
}

/** Response and callback direction, merchant side: decrypts with the public key. */
export function decryptWithPublic(text: string, key: KeyObject): Buffer {
  const k = modulusBytes(key);
  const bytes = strictBase64(text);
  if (bytes.length === 0 || bytes.length % k !== 0)
    throw new DoubleCryptoError(`ciphertext is ${bytes.length} bytes, not a multiple of ${k}`);
  return Buffer.concat(
    segments(bytes, k).map((block) => {
      try {
        return publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, block);
      } catch {
        throw new DoubleCryptoError('RSA decryption failed (wrong key or padding)');
      }
    }),
  );
}

/** UTF-8 text, strictly (an invalid sequence is an error, never a replacement character). */
export function strictUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DoubleCryptoError('plaintext is not UTF-8');
  }
}

/** JSON with every number kept as its literal text (LosslessNumber). */
export function parseExact(text: string): unknown {
  try {
    return parse(text);
  } catch (error) {
    throw new DoubleCryptoError(`not JSON: ${(error as Error).message}`);
  }
}

/** JSON text of a value holding LosslessNumbers, digits unchanged. */
export function stringifyExact(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new DoubleCryptoError('value has no JSON form');
  return text;
}

/** The literal digits of a JSON number, or undefined when the value is not a number. */
export function numberText(value: unknown): string | undefined {
  if (isLosslessNumber(value)) return (value as LosslessNumber).value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

export { LosslessNumber };
