import { describe, expect, it } from 'vitest';
import { describeTlsFailure } from './tls-failure.js';
import { proxyAuthorization } from './tunnel.js';

const failure = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('TLS failures are one line naming the cause', () => {
  it.each([
    [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      /signed by an unknown CA \[UNABLE_TO_VERIFY_LEAF_SIGNATURE\]; trust its CA with --ca FILE/,
    ],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /unknown CA \(self-signed\)/],
    ['SELF_SIGNED_CERT_IN_CHAIN', /unknown CA \(self-signed\)/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /does not name that host \(name mismatch\)/],
    ['CERT_HAS_EXPIRED', /is expired \[CERT_HAS_EXPIRED\]/],
    ['CERT_NOT_YET_VALID', /is not yet valid/],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', /requires a client certificate .*--cert FILE --key FILE/],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', /refused the client certificate/],
    ['ERR_SSL_WRONG_VERSION_NUMBER', /does not speak TLS on that port, it answers plain HTTP .*use an http:\/\/ URL/],
  ])('%s', (code, expected) => {
    const line = describeTlsFailure(failure(code), 'wallet.example:443');
    expect(line).toMatch(expected);
    expect(line).not.toContain('\n');
  });

  it("names https:// to a plain port on Node 20 too, where OpenSSL's text comes as EPROTO, without the raw text", () => {
    const line = describeTlsFailure(
      failure(
        'EPROTO',
        'write EPROTO 803C4B02897F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:',
      ),
      '127.0.0.1:4010',
    );
    expect(line).toBe(
      'TLS: 127.0.0.1:4010 does not speak TLS on that port, it answers plain HTTP [ERR_SSL_WRONG_VERSION_NUMBER]: use an http:// URL',
    );
  });

  it('leaves errors that are not about TLS alone', () => {
    expect(describeTlsFailure(failure('ECONNREFUSED'), 'h')).toBeUndefined();
  });

  it('sends Basic proxy credentials decoded from the proxy URL, and nothing without them', () => {
    expect(proxyAuthorization(new URL('http://u%40corp:p%3Aw@proxy:3128'))).toEqual({
      'proxy-authorization': `Basic ${Buffer.from('u@corp:p:w').toString('base64')}`,
    });
    expect(proxyAuthorization(new URL('http://proxy:3128'))).toEqual({});
  });
});
