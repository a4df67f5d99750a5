import { ConfigError } from '../core/errors.js';
import { halfFor, openBytes, decodeUtf8, sealJson } from '../crypto/codec.js';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import { parseKey, publicHalf, type RsaKey, type RsaPrivateKey } from '../crypto/keys.js';
import type { OpenFailureKind, WalletCodec } from './types.js';

/** Failures of the Base64 text itself (the emulator's badBase64 code), as opposed to the RSA layer. */
const BASE64_REASONS: ReadonlySet<CryptoFailureReason> = new Set([
  'empty', 'data-prefix', 'plus-as-space', 'percent-encoded', 'url-safe-alphabet', 'line-breaks', 'whitespace',
  'invalid-character', 'missing-padding', 'bad-base64-length', 'misplaced-padding', 'non-canonical-base64',
]);

function kindOf(reason: CryptoFailureReason): OpenFailureKind {
  if (BASE64_REASONS.has(reason)) return 'base64';
  return reason === 'not-utf8' ? 'text' : 'decrypt';
}

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
      open(data) {
        try {
          return { ok: true, text: decodeUtf8(openBytes(data, 'request', requestKey, { profile })) };
        } catch (error) {
          if (!(error instanceof CryptoError)) throw error;
          return { ok: false, kind: kindOf(error.reason), message: `${error.message} [${error.reason}]` };
        }
      },
      seal: (json) => sealJson(json, 'response', responseKey, { profile }),
    };
  },
};
