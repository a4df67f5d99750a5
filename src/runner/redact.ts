import { fingerprint, type SecretKind } from '../secrets/scrub.js';

/**
 * Redacts a credential for reports by its fingerprint (`ak…#3f9c`): a person can tell keys apart,
 * and no character of the key shows. An empty value stays empty (nothing was sent).
 */
export function redact(secret: string, kind: SecretKind = 'ak'): string {
  return secret.length === 0 ? '' : fingerprint(secret, kind);
}
