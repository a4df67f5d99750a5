import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { parseKey, publicHalf } from './keys.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const spkiDer = publicKey.export({ type: 'spki', format: 'der' });

function wrap(text: string, width: number, eol: string): string {
  return text.match(new RegExp(`.{1,${width}}`, 'g'))!.join(eol);
}

describe('key loading', () => {
  it.each([
    ['PKCS#8 PEM', privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'private'],
    ['PKCS#1 PEM private', privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), 'private'],
    ['SPKI PEM', publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'public'],
    ['PKCS#1 PEM public', publicKey.export({ type: 'pkcs1', format: 'pem' }).toString(), 'public'],
    ['bare Base64 PKCS#8 DER', privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'), 'private'],
    ['bare Base64 PKCS#1 DER', privateKey.export({ type: 'pkcs1', format: 'der' }).toString('base64'), 'private'],
    ['bare Base64 SPKI DER', spkiDer.toString('base64'), 'public'],
    [
      'wrapped Base64 with CRLF and padding spaces',
      `  ${wrap(spkiDer.toString('base64'), 64, '\r\n')}\r\n  `,
      'public',
    ],
    [
      'PEM with CRLF and indentation',
      publicKey.export({ type: 'spki', format: 'pem' }).toString().replaceAll('\n', '\r\n    '),
      'public',
    ],
  ])('reads a %s', (_label, text, half) => {
    const key = parseKey(text);
    expect(key.half).toBe(half);
    expect(key.bits).toBe(1024);
    expect(key.modulusBytes).toBe(128);
  });

  it('gives a private key its public half', () => {
    const key = parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const pub = publicHalf(key);
    expect(pub.keyObject.export({ type: 'spki', format: 'der' }).equals(spkiDer)).toBe(true);
  });

  it.each([
    ['an empty file', '', /empty/],
    ['text that is not a key', 'hello, world!', /not a PEM key/],
    ['Base64 that is not DER', Buffer.from('not a key at all').toString('base64'), /not a DER RSA key/],
    [
      'an EC key',
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      /ec key; the interface uses RSA/,
    ],
    [
      'a passphrase-protected key',
      privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'x' }).toString(),
      /passphrase-protected/,
    ],
    [
      'a truncated PEM',
      privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().slice(0, 200) + '\n-----END PRIVATE KEY-----',
      /cannot read/,
    ],
  ])('refuses %s with a ConfigError', (_label, text, message) => {
    expect(() => parseKey(text)).toThrow(ConfigError);
    expect(() => parseKey(text)).toThrow(message);
  });

  it('refuses the wrong half when one is expected', () => {
    expect(() => parseKey(spkiDer.toString('base64'), { expect: 'private', source: 'k.b64' })).toThrow(
      /k.b64: expected the private key/,
    );
  });
});

describe('key loading: every refusal names the file and the fix', () => {
  const pkcs8Pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const ecPkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'der' })
    .toString('base64');

  function messageOf(input: string, source?: string): string {
    try {
      parseKey(input, source === undefined ? {} : { source });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return `${(error as ConfigError).reason}: ${(error as ConfigError).message}`;
    }
    return 'accepted';
  }

  it.each([
    ['an empty file', '', 'bad-key: key: the key file is empty'],
    ['a file of whitespace', ' \r\n\t ', 'bad-key: key: the key file is empty'],
    [
      'text with characters outside Base64',
      'AQID!',
      'bad-key: key: not a PEM key and not bare Base64 DER (unexpected characters)',
    ],
    [
      'Base64 with three padding characters',
      'AQ===',
      'bad-key: key: not a PEM key and not bare Base64 DER (unexpected characters)',
    ],
    [
      'Base64 text with a prefix',
      'key:AQID',
      'bad-key: key: not a PEM key and not bare Base64 DER (unexpected characters)',
    ],
    [
      'Base64 that is no DER key',
      'AQIDBA==',
      'bad-key: key: the Base64 text is not a DER RSA key (tried PKCS#8, PKCS#1, SPKI)',
    ],
    ['a bare Base64 EC private key', ecPkcs8, 'bad-key: key: a ec key; the interface uses RSA'],
    [
      'a PEM block of another kind',
      '-----BEGIN X509 CRL-----\nAQID\n-----END X509 CRL-----',
      "bad-key: key: PEM block 'X509 CRL' is not an RSA public or private key",
    ],
    [
      'a PEM marker without a label',
      '-----BEGIN-----\nAQID\n-----END-----',
      "bad-key: key: PEM block '' is not an RSA public or private key",
    ],
    [
      'an encrypted PKCS#8 key',
      privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'x' }).toString(),
      'encrypted-key: key: the private key is passphrase-protected; export it unencrypted (openssl pkey -in KEY -out PLAIN)',
    ],
    [
      'a legacy encrypted PKCS#1 key (Proc-Type header)',
      privateKey.export({ type: 'pkcs1', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'x' }).toString(),
      'encrypted-key: key: the private key is passphrase-protected; export it unencrypted (openssl pkey -in KEY -out PLAIN)',
    ],
  ])('refuses %s with the exact reason', (_label, text, message) => {
    expect(messageOf(text)).toBe(message);
  });

  it('names the source it was given', () => {
    expect(messageOf('', 'merchant-public.b64')).toBe('bad-key: merchant-public.b64: the key file is empty');
  });

  it.each([
    ['PRIVATE KEY', pkcs8Pem.slice(0, 200) + '\n-----END PRIVATE KEY-----'],
    ['PUBLIC KEY', '-----BEGIN PUBLIC KEY-----\nAQID\n-----END PUBLIC KEY-----'],
    ['CERTIFICATE', '-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----'],
  ])('says which %s block it cannot read, with the first line of the cause', (label, text) => {
    const message = messageOf(text, 'k.pem');
    expect(message.startsWith(`bad-key: k.pem: cannot read the ${label} block: `)).toBe(true);
    expect(message.length).toBeGreaterThan(`bad-key: k.pem: cannot read the ${label} block: `.length);
    expect(message).not.toContain('\n');
  });

  it('refuses a public key where the private key is expected, and the reverse', () => {
    expect(() => parseKey(spkiDer.toString('base64'), { expect: 'private' })).toThrow(
      new ConfigError(
        'wrong-key-half',
        'key: expected the private key of the merchant key pair, but this is the public key',
      ),
    );
    expect(() => parseKey(pkcs8Pem, { expect: 'public', source: 'p.pem' })).toThrow(
      'p.pem: expected the public key of the merchant key pair, but this is the private key',
    );
  });

  it('returns the key when it is the half expected', () => {
    expect(parseKey(pkcs8Pem, { expect: 'private' }).half).toBe('private');
    expect(parseKey(spkiDer.toString('base64'), { expect: 'public' }).half).toBe('public');
  });
});

describe('key loading: the forms the platform hands out', () => {
  const pkcs8Pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const spkiOf = (key: { keyObject: { export(o: object): Buffer | string } }) =>
    key.keyObject.export({ type: 'spki', format: 'der' });

  it.each([
    ['a PEM with a byte order mark', `\uFEFF${pkcs8Pem}`, 'private'],
    ['bare Base64 with a byte order mark', `\uFEFF${spkiDer.toString('base64')}`, 'public'],
    ['a PEM with old Mac line ends (CR only)', pkcs8Pem.replaceAll('\n', '\r'), 'private'],
    ['a PEM with blank lines between its lines', pkcs8Pem.replaceAll('\n', '\n\n'), 'private'],
    ['a PEM inside surrounding text', `my key:\n${pkcs8Pem}\nend of mail`, 'private'],
    ['bare Base64 PKCS#1 public DER', publicKey.export({ type: 'pkcs1', format: 'der' }).toString('base64'), 'public'],
  ])('reads %s', (_label, text, half) => {
    const key = parseKey(text);
    expect(key.half).toBe(half);
    expect(spkiOf(publicHalf(key))).toEqual(spkiDer);
  });

  it('reads the bytes of a key file as UTF-8', () => {
    const key = parseKey(Buffer.from(pkcs8Pem, 'utf8'));
    expect(key.half).toBe('private');
    expect(key.bits).toBe(1024);
  });

  it('reads an X.509 certificate as its public key', () => {
    const forgeKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
    cert.serialNumber = '01';
    cert.validity.notBefore = new Date(0);
    cert.validity.notAfter = new Date(86_400_000);
    cert.setSubject([{ name: 'commonName', value: 'merchant' }]);
    cert.setIssuer([{ name: 'commonName', value: 'merchant' }]);
    cert.sign(forgeKey);
    const key = parseKey(forge.pki.certificateToPem(cert));
    expect(key.half).toBe('public');
    expect(spkiOf(key)).toEqual(spkiDer);
  });

  it('gives every key its size in bits and bytes, frozen', () => {
    const priv = parseKey(pkcs8Pem);
    expect([priv.bits, priv.modulusBytes]).toEqual([1024, 128]);
    expect(priv.half === 'private' && [priv.publicKey.bits, priv.publicKey.modulusBytes, priv.publicKey.half]).toEqual([
      1024,
      128,
      'public',
    ]);
    expect(Object.isFrozen(priv)).toBe(true);
    expect(priv.half === 'private' && Object.isFrozen(priv.publicKey)).toBe(true);
  });

  it('rounds a modulus that is not a whole number of bytes up to the next byte', () => {
    const odd = generateKeyPairSync('rsa', { modulusLength: 1025 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const key = parseKey(odd);
    expect([key.bits, key.modulusBytes]).toEqual([1025, 129]);
  });

  it('hands back a public key itself as its public half', () => {
    const pub = parseKey(spkiDer.toString('base64'));
    expect(publicHalf(pub)).toBe(pub);
  });
});
