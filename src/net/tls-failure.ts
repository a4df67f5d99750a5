import tls from 'node:tls';

/** Certificate verification codes of OpenSSL (as Node reports them) and what each means for a user. */
const UNKNOWN_CA = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
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
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `TLS: the certificate of ${host} does not name that host (name mismatch) [${code}]: ${error.message}`;
  if (EXPIRED.has(code))
    return `TLS: the certificate of ${host} is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not yet valid'} [${code}]`;
  if (/CERTIFICATE_REQUIRED/.test(code))
    return `TLS: ${host} requires a client certificate [${code}]; give --cert FILE --key FILE`;
  if (/ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|ACCESS_DENIED|DECRYPT_ERROR)/.test(code))
    return `TLS: ${host} refused the client certificate [${code}]`;
  if (/ALERT_HANDSHAKE_FAILURE/.test(code))
    return `TLS: the handshake with ${host} failed [${code}] (does it require a client certificate? --cert FILE --key FILE)`;
  // Node 20 reports OpenSSL's record error as EPROTO with its raw text; later versions as ERR_SSL_*.
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    (code === 'EPROTO' && /wrong version number|packet length too long|http request/i.test(error.message))
  ) {
    return `TLS: ${host} does not speak TLS on that port, it answers plain HTTP [${code === 'EPROTO' ? 'ERR_SSL_WRONG_VERSION_NUMBER' : code}]: use an http:// URL`;
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))
    return `TLS: the connection to ${host} failed [${code}]: ${error.message}`;
  return undefined;
}

/**
 * Does `host:port` speak TLS? One handshake (certificates not judged: only whether TLS answers),
 * bounded by `timeoutMs`. Used when a plain http:// request was reset without an answer, to tell an
 * http:// URL aimed at a TLS port from a target that dropped the connection.
 */
export function speaksTls(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((done) => {
    const socket = tls.connect({
      host,
      port,
      rejectUnauthorized: false,
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    const end = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      done(answer);
    };
    const timer = setTimeout(() => end(false), timeoutMs);
    socket.once('secureConnect', () => end(true));
    socket.once('error', () => end(false));
  });
}

/** The line for an http:// URL aimed at a port that speaks TLS (proven by `speaksTls`). */
export function plainToTlsLine(host: string, code: string): string {
  return `TLS: ${host} speaks TLS on that port, not plain HTTP (the plain request was dropped) [${code}]: use an https:// URL`;
}
