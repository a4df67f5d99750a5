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
 * Opens a request's encrypted field with the native engine: the UTF-8 text, or the failure's kind
 * and wording. Plain data in and out, so a worker thread (the emulator's crypto pool) runs it too.
 */
export function openRequest(
  data: string,
  key: RsaKey,
  profile: CryptoProfile,
  accept?: ReadonlySet<CryptoFailureReason>,
): OpenOutcome {
  try {
    return {
      ok: true,
      text: decodeUtf8(openBytes(data, 'request', key, { profile, ...(accept ? { base64: { accept } } : {}) })),
    };
  } catch (error) {
    if (!(error instanceof CryptoError)) throw error;
    return { ok: false, kind: KIND[familyOf(error.reason)], message: describeCryptoFailure(error) };
  }
}

/** Seals a result's exact JSON text for the envelope's data with the native engine. */
export function sealResponse(json: string, key: RsaKey, profile: CryptoProfile): string {
  return sealJson(json, 'response', key, { profile });
}

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
    open: (data, accept) => openRequest(data, requestKey, profile, accept),
    seal: (json) => sealResponse(json, responseKey, profile),
  };
}
