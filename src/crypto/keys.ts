import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import type { KeyHalf } from '../core/profile.js';

/** A merchant RSA public key (the half the merchant holds). */
export interface RsaPublicKey {
  readonly half: 'public';
  readonly keyObject: KeyObject;
  /** k: modulus length in bytes, the size of every ciphertext block. */
  readonly modulusBytes: number;
  readonly bits: number;
}

/** A merchant RSA private key (the half the service holds); carries its public half. */
export interface RsaPrivateKey {
  readonly half: 'private';
  readonly keyObject: KeyObject;
  readonly publicKey: RsaPublicKey;
  readonly modulusBytes: number;
  readonly bits: number;
}

/** Either half of a merchant key pair. */
export type RsaKey = RsaPublicKey | RsaPrivateKey;

type DerAttempt = { half: KeyHalf; type: 'pkcs8' | 'pkcs1' | 'spki' };
const DER_ATTEMPTS: DerAttempt[] = [
  { half: 'private', type: 'pkcs8' },
  { half: 'private', type: 'pkcs1' },
  { half: 'public', type: 'spki' },
  { half: 'public', type: 'pkcs1' },
];

/**
 * Loads an RSA key from PEM (PKCS#1, PKCS#8, SPKI) or from bare Base64 DER, the way the platform
 * hands keys out. Whitespace, CRLF line ends and line wrapping are tolerated.
 *
 * @example parseKey(readFileSync('merchant-public.b64', 'utf8'), { source: 'merchant-public.b64' })
 */
export function parseKey(input: string | Uint8Array, options: { source?: string; expect?: KeyHalf } = {}): RsaKey {
  const source = options.source ?? 'key';
  const text = (typeof input === 'string' ? input : Buffer.from(input).toString('utf8')).replace(/^\uFEFF/, '');
  const key = text.includes('-----BEGIN') ? fromPem(text, source) : fromBareBase64(text, source);
  if (options.expect && key.half !== options.expect) {
    throw new ConfigError(
      'wrong-key-half',
      `${source}: expected the ${options.expect} key of the merchant key pair, but this is the ${key.half} key`,
    );
  }
  return key;
}

/** The public half of any key (a private key carries it). */
export function publicHalf(key: RsaKey): RsaPublicKey {
  return key.half === 'public' ? key : key.publicKey;
}

function fromPem(text: string, source: string): RsaKey {
  const pem = text
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join('\n');
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1] ?? '';
  if (label.includes('ENCRYPTED') || /Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw new ConfigError(
      'encrypted-key',
      `${source}: the private key is passphrase-protected; export it unencrypted (openssl pkey -in KEY -out PLAIN)`,
    );
  }
  try {
    if (label.includes('PRIVATE')) return wrapPrivate(createPrivateKey({ key: pem, format: 'pem' }), source);
    if (label.includes('PUBLIC') || label === 'CERTIFICATE')
      return wrapPublic(createPublicKey({ key: pem, format: 'pem' }), source);
  } catch (error) {
    throw new ConfigError('bad-key', `${source}: cannot read the ${label || 'PEM'} block: ${firstLine(error)}`);
  }
  throw new ConfigError('bad-key', `${source}: PEM block '${label}' is not an RSA public or private key`);
}

function fromBareBase64(text: string, source: string): RsaKey {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0) throw new ConfigError('bad-key', `${source}: the key file is empty`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw new ConfigError('bad-key', `${source}: not a PEM key and not bare Base64 DER (unexpected characters)`);
  }
  const der = Buffer.from(compact, 'base64');
  for (const attempt of DER_ATTEMPTS) {
    try {
      const keyObject =
        attempt.half === 'private'
          ? createPrivateKey({ key: der, format: 'der', type: attempt.type as 'pkcs8' | 'pkcs1' })
          : createPublicKey({ key: der, format: 'der', type: attempt.type as 'spki' | 'pkcs1' });
      return attempt.half === 'private' ? wrapPrivate(keyObject, source) : wrapPublic(keyObject, source);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      // Not this encoding: try the next one.
    }
  }
  throw new ConfigError('bad-key', `${source}: the Base64 text is not a DER RSA key (tried PKCS#8, PKCS#1, SPKI)`);
}

function wrapPublic(keyObject: KeyObject, source: string): RsaPublicKey {
  const bits = rsaBits(keyObject, source);
  return Object.freeze({ half: 'public', keyObject, bits, modulusBytes: Math.ceil(bits / 8) });
}

function wrapPrivate(keyObject: KeyObject, source: string): RsaPrivateKey {
  const bits = rsaBits(keyObject, source);
  const publicKey = wrapPublic(createPublicKey(keyObject), source);
  return Object.freeze({ half: 'private', keyObject, publicKey, bits, modulusBytes: Math.ceil(bits / 8) });
}

function rsaBits(keyObject: KeyObject, source: string): number {
  if (keyObject.asymmetricKeyType !== 'rsa') {
    throw new ConfigError(
      'bad-key',
      `${source}: a ${keyObject.asymmetricKeyType ?? 'non-asymmetric'} key; the interface uses RSA`,
    );
  }
  const bits = keyObject.asymmetricKeyDetails?.modulusLength;
  if (!bits) throw new ConfigError('bad-key', `${source}: cannot read the RSA modulus length`);
  return bits;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
