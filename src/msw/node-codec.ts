import { ConfigError } from '../core/errors.js';
import { halfFor, openBytes, decodeUtf8, sealJson } from '../crypto/codec.js';
import { CryptoError } from '../crypto/errors.js';
import { parseKey, publicHalf, type RsaKey, type RsaPrivateKey } from '../crypto/keys.js';
import { familyOf, type CryptoFailureFamily } from '../wire/crypto-failure.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import type { OpenFailureKind, WalletCodec } from './types.js';

/**
 * The codec's kind of a failure by the family of its reason (src/wire/crypto-failure.ts): the
 * Base64 text itself (the emulator's badBase64 code), bytes that are not UTF-8 JSON, or the RSA layer.
 */
const KIND: Record<CryptoFailureFamily, OpenFailureKind> = { base64: 'base64', plaintext: 'text', key: 'decrypt' };

/**
 * The default codec: src/crypto on node:crypto. The service holds the private key, which carries
 * its public half, so every profile (requests under either half) works from the private key alone.
 *
 * @example nodeCodec.forMerchant(privatePem, DEFAULT_PROFILE, 'merchants[0].privateKey').open(data)
 */
export const nodeCodec: WalletCodec = {
  forMerchant(privateKey, profile, source) {
    const given: RsaKey = typeof privateKey === 'string' ? parseKey(privateKey, { source, expect: 'private' }) : privateKey;
    if (given.half !== 'private') {
      throw new ConfigError('wrong-key-half', `${source}: the handlers play the service, which holds the merchant's private key; a public key was given`);
    }
    const key: RsaPrivateKey = given;
    const half = (direction: 'request' | 'response', operation: 'encrypt' | 'decrypt'): RsaKey =>
      halfFor(direction, operation, profile) === 'private' ? key : publicHalf(key);
    const requestKey = half('request', 'decrypt');
    const responseKey = half('response', 'encrypt');
    return {
      open(data, accept) {
        try {
          return { ok: true, text: decodeUtf8(openBytes(data, 'request', requestKey, { profile, ...(accept ? { base64: { accept } } : {}) })) };
        } catch (error) {
          if (!(error instanceof CryptoError)) throw error;
          return { ok: false, kind: KIND[familyOf(error.reason)], message: describeCryptoFailure(error) };
        }
      },
      seal: (json) => sealJson(json, 'response', responseKey, { profile }),
    };
  },
};
