import { generateKeyPairSync } from 'node:crypto';
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
    ['wrapped Base64 with CRLF and padding spaces', `  ${wrap(spkiDer.toString('base64'), 64, '\r\n')}\r\n  `, 'public'],
    ['PEM with CRLF and indentation', publicKey.export({ type: 'spki', format: 'pem' }).toString().replaceAll('\n', '\r\n    '), 'public'],
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
    ['an EC key', generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString(), /ec key; the interface uses RSA/],
    ['a passphrase-protected key', privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'x' }).toString(), /passphrase-protected/],
    ['a truncated PEM', privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().slice(0, 200) + '\n-----END PRIVATE KEY-----', /cannot read/],
  ])('refuses %s with a ConfigError', (_label, text, message) => {
    expect(() => parseKey(text)).toThrow(ConfigError);
    expect(() => parseKey(text)).toThrow(message);
  });

  it('refuses the wrong half when one is expected', () => {
    expect(() => parseKey(spkiDer.toString('base64'), { expect: 'private', source: 'k.b64' })).toThrow(/k.b64: expected the private key/);
  });
});
