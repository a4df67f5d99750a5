/**
 * How a failure to open encrypted data is classified and which rule it breaks: the one table the
 * runner's checks, the emulator, pre-flight and the properties read (CRYPTO-ENVELOPE, CRYPTO-SAME,
 * CB-RAW-BODY, CB-DECRYPT).
 *
 * Three families of `CryptoFailureReason`:
 * - `base64`: the text is not standard, padded Base64 (a form-parsed '+', URL-safe letters, line
 *   breaks, a missing '='). Which of these a reader must refuse is not the same question: see
 *   `leniency` below.
 * - `plaintext`: the bytes opened but are not UTF-8 JSON.
 * - `key`: the RSA layer failed (another key, another padding, a corrupted block, a length that is
 *   not a whole number of blocks).
 */
// Types only: src/service reads LENIENT_BASE64_REASONS and is bundled for the browser, where no
// part of src/crypto may go (the wording of a CryptoError is in crypto-wording.ts).
import type { CryptoFailureReason } from '../crypto/errors.js';

export type CryptoFailureFamily = 'base64' | 'plaintext' | 'key';

const FAMILY: Record<CryptoFailureReason, CryptoFailureFamily> = {
  empty: 'base64',
  'data-prefix': 'base64',
  'plus-as-space': 'base64',
  'percent-encoded': 'base64',
  'url-safe-alphabet': 'base64',
  'line-breaks': 'base64',
  whitespace: 'base64',
  'invalid-character': 'base64',
  'missing-padding': 'base64',
  'bad-base64-length': 'base64',
  'misplaced-padding': 'base64',
  'non-canonical-base64': 'base64',
  'not-utf8': 'plaintext',
  'not-json': 'plaintext',
  'ciphertext-length': 'key',
  'wrong-key': 'key',
  'padding-mismatch': 'key',
  'bad-padding': 'key',
  'corrupted-block': 'key',
  'plaintext-block-too-large': 'key',
};

/** The family of a reason; an unknown text (a reason from another tool) counts as a key failure. */
export function familyOf(reason: string): CryptoFailureFamily {
  return (FAMILY as Record<string, CryptoFailureFamily>)[reason] ?? 'key';
}

/** The reason the codec writes at the end of a CryptoError's message (`… [missing-padding]`). */
export function reasonInMessage(message: string): string {
  return /\[([a-z0-9-]+)\]$/.exec(message)?.[1] ?? '';
}

/** The rule an answer's envelope `data` breaks when it does not open (the service's side). */
export function answerFailureRule(reason: string): 'CRYPTO-ENVELOPE' | 'CRYPTO-SAME' {
  return familyOf(reason) === 'key' ? 'CRYPTO-SAME' : 'CRYPTO-ENVELOPE';
}

/** The rule a callback body breaks when it does not open (the service's side of CB-RAW-BODY/CB-DECRYPT). */
export function callbackFailureRule(reason: string): 'CB-RAW-BODY' | 'CB-DECRYPT' {
  return familyOf(reason) === 'base64' ? 'CB-RAW-BODY' : 'CB-DECRYPT';
}

/**
 * Base64 forms that the pattern `^[A-Za-z0-9+/]+={0,2}$` (ENERGY-DATA, ORDER-DATA) itself allows,
 * or that decode to the same bytes in common decoders, so that no rule obliges a service to refuse
 * a request carrying them: accepting one is a reading of U-CRYPTO (warned, failed only under
 * `--strict`); refusing one is as legal. Everything else outside the pattern must be refused.
 *
 * - `missing-padding`: the pattern's `={0,2}` allows 0 '='; Java's `Base64.getDecoder()` and
 *   Python's `b64decode` (with validate) read it once the length is completed.
 * - `non-canonical-base64`: the unused low bits of the last character are not zero; the pattern
 *   allows it and most decoders ignore them.
 */
export const LENIENT_BASE64_REASONS: ReadonlySet<CryptoFailureReason> = new Set([
  'missing-padding',
  'non-canonical-base64',
]);
