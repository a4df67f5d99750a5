import { generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '../core/errors.js';

/** A merchant key pair in every form the platform and Java merchants use. */
export interface MerchantKeyPairFiles {
  /** PKCS#8 PEM. */
  privatePem: string;
  /** SPKI PEM. */
  publicPem: string;
  /** Bare Base64 of the PKCS#8 DER, one line: how the platform hands a key out. */
  privateBase64: string;
  /** Bare Base64 of the SPKI DER, one line. */
  publicBase64: string;
}

/** Key sizes accepted by `keys generate`: 1024 is the platform default (U-CRYPTO). */
export const KEY_SIZES = [1024, 2048, 3072, 4096] as const;

/**
 * Generates a merchant RSA key pair (e = 65537).
 *
 * @example generateMerchantKeyPair(2048).publicPem.startsWith('-----BEGIN PUBLIC KEY-----')
 */
export function generateMerchantKeyPair(bits = 1024): MerchantKeyPairFiles {
  if (!(KEY_SIZES as readonly number[]).includes(bits)) {
    throw new ConfigError('bad-key-size', `--bits must be one of ${KEY_SIZES.join(', ')}, not ${bits}`);
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateBase64: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    publicBase64: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}
