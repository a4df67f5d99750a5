import { CryptoError } from '../crypto/errors.js';

/**
 * A failure to open encrypted data as one line: a CryptoError's explanation followed by its reason
 * in brackets (`… is missing [missing-padding]`, the form `reasonInMessage` reads back); any other
 * error by its message.
 */
export function describeCryptoFailure(error: unknown): string {
  if (error instanceof CryptoError) return `${error.message} [${error.reason}]`;
  return error instanceof Error ? error.message : String(error);
}
