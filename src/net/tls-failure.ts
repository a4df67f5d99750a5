/** Certificate verification codes of OpenSSL (as Node reports them) and what each means for a user. */
const UNKNOWN_CA = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/**
 * One line naming why a TLS connection failed (unknown CA or self-signed, name mismatch, expired,
 * client certificate required or refused, plain HTTP on the port), or undefined for a non-TLS error.
 */
export function describeTlsFailure(error: NodeJS.ErrnoException, host: string): string | undefined {
  const code = error.code ?? '';
  if (UNKNOWN_CA.has(code)) {
    const self = code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN' ? ' (self-signed)' : '';
    return `TLS: the certificate of ${host} is signed by an unknown CA${self} [${code}]; trust its CA with --ca FILE or NODE_EXTRA_CA_CERTS`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the certificate of ${host} does not name that host (name mismatch) [${code}]: ${error.message}`;
  if (EXPIRED.has(code)) return `TLS: the certificate of ${host} is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not yet valid'} [${code}]`;
  if (/CERTIFICATE_REQUIRED/.test(code)) return `TLS: ${host} requires a client certificate [${code}]; give --cert FILE --key FILE`;
  if (/ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|ACCESS_DENIED|DECRYPT_ERROR)/.test(code)) return `TLS: ${host} refused the client certificate [${code}]`;
  if (/ALERT_HANDSHAKE_FAILURE/.test(code)) return `TLS: the handshake with ${host} failed [${code}] (does it require a client certificate? --cert FILE --key FILE)`;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return `TLS: ${host} does not speak TLS on that port [${code}] (an http:// URL?)`;
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) return `TLS: the connection to ${host} failed [${code}]: ${error.message}`;
  return undefined;
}

/** Was this a TLS failure in the handshake (as opposed to a refused or reset connection)? */
export function isTlsFailure(error: NodeJS.ErrnoException): boolean {
  return describeTlsFailure(error, '') !== undefined;
}
