import type { CryptoProfile } from '../core/profile.js';
import { decodeUtf8, openBytes, sealJson } from '../crypto/codec.js';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import type { RsaKey } from '../crypto/keys.js';
import { familyOf, type CryptoFailureFamily } from '../wire/crypto-failure.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import type { OpenFailureKind, OpenOutcome } from './pipeline.js';

/**
 * The codec's kind of a failure by the family of its reason (src/wire/crypto-failure.ts): the
 * Base64 text itself (badBase64), bytes that are not UTF-8 JSON, or the RSA layer.
 */
const KIND: Record<CryptoFailureFamily, OpenFailureKind> = { base64: 'base64', plaintext: 'text', key: 'decrypt' };

/**
 * The pipeline's codec (`PipelineCodec`) on src/crypto's native engine (node:crypto, synchronous):
 * requests opened with `requestKey`, results sealed with `responseKey`, the halves the profile names
 * (CRYPTO-SAME). The emulator and the MSW handlers' Node codec both use it; the pipeline itself
 * imports no engine, so a browser bundle never loads this file.
 */
export function nativeCodec(
  requestKey: RsaKey,
  responseKey: RsaKey,
  profile: CryptoProfile,
): { open(data: string, accept?: ReadonlySet<CryptoFailureReason>): OpenOutcome; seal(json: string): string } {
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
}
