import { WalletConformanceError } from '../core/errors.js';

/**
 * Why encrypted data could not be opened. Each reason names one way real integrations break,
 * so a report (or a merchant's log line) can say what to fix rather than "decryption failed".
 */
export type CryptoFailureReason =
  | 'empty'
  | 'data-prefix'
  | 'plus-as-space'
  | 'percent-encoded'
  | 'url-safe-alphabet'
  | 'line-breaks'
  | 'whitespace'
  | 'invalid-character'
  | 'missing-padding'
  | 'bad-base64-length'
  | 'misplaced-padding'
  | 'non-canonical-base64'
  | 'ciphertext-length'
  | 'wrong-key'
  | 'padding-mismatch'
  | 'bad-padding'
  | 'corrupted-block'
  | 'not-utf8'
  | 'not-json'
  | 'plaintext-block-too-large';

/** Encrypted input that cannot be opened: a typed, explained failure, never a crash. */
export class CryptoError extends WalletConformanceError {
  declare readonly reason: CryptoFailureReason;

  constructor(reason: CryptoFailureReason, message: string, options?: { cause?: unknown }) {
    super(reason, message, options);
  }
}
