import { ConfigError } from '../core/errors.js';
import { halfFor } from '../crypto/codec.js';
import { parseKey, publicHalf, type RsaKey, type RsaPrivateKey } from '../crypto/keys.js';
import { nativeCodec } from '../service/native-codec.js';
import type { WalletCodec } from './types.js';

/**
 * The default codec: src/crypto on node:crypto. The service holds the private key, which carries
 * its public half, so every profile (requests under either half) works from the private key alone.
 *
 * @example nodeCodec.forMerchant(privatePem, DEFAULT_PROFILE, 'merchants[0].privateKey').open(data)
 */
export const nodeCodec: WalletCodec = {
  forMerchant(privateKey, profile, source) {
    const given: RsaKey =
      typeof privateKey === 'string' ? parseKey(privateKey, { source, expect: 'private' }) : privateKey;
    if (given.half !== 'private') {
      throw new ConfigError(
        'wrong-key-half',
        `${source}: the handlers play the service, which holds the merchant's private key; a public key was given`,
      );
    }
    const key: RsaPrivateKey = given;
    const half = (direction: 'request' | 'response', operation: 'encrypt' | 'decrypt'): RsaKey =>
      halfFor(direction, operation, profile) === 'private' ? key : publicHalf(key);
    return nativeCodec(half('request', 'decrypt'), half('response', 'encrypt'), profile);
  },
};
