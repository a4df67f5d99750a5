import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import { DEFAULT_PROFILE, resolveProfile, type CryptoProfile, type Direction } from '../core/profile.js';
import { assertKeyHalf, decodeUtf8, halfFor, openBytes, openJson, sealBytes, sealJson } from './codec.js';
import { CryptoError } from './errors.js';
import { parseKey, type RsaPrivateKey } from './keys.js';
import { forgeEngine, nativeEngine, type RsaEngine } from './rsa-engine.js';

/**
 * The codec's contract case by case, over the committed 1024-bit test key (fast enough for
 * mutation testing); codec.test.ts holds the property-based round trips over fresh keys.
 */
const key = parseKey(
  readFileSync(new URL('../../test/vectors/keys/rsa1024-private.pem', import.meta.url), 'utf8'),
) as RsaPrivateKey;
const inverted: CryptoProfile = resolveProfile({ request: 'private', response: 'public', callback: 'public' });

function failure(run: () => unknown): { type: string; reason: string; message: string } {
  try {
    run();
  } catch (error) {
    const e = error as CryptoError;
    return { type: e.constructor.name, reason: e.reason, message: e.message };
  }
  return { type: 'none', reason: 'accepted', message: '' };
}

/** An engine that counts its calls and delegates to the native one. */
function countingEngine() {
  const calls = { encrypt: 0, decrypt: 0 };
  const engine: RsaEngine = {
    name: 'forge',
    encryptBlock: (block, k, padding) => (calls.encrypt++, nativeEngine.encryptBlock(block, k, padding)),
    decryptBlock: (block, k, padding) => (calls.decrypt++, nativeEngine.decryptBlock(block, k, padding)),
  };
  return { engine, calls };
}

describe('which key half serves each direction', () => {
  it.each([
    ['request', 'encrypt', 'public'],
    ['request', 'decrypt', 'private'],
    ['response', 'encrypt', 'private'],
    ['response', 'decrypt', 'public'],
    ['callback', 'encrypt', 'private'],
    ['callback', 'decrypt', 'public'],
  ] as const)('by default, %s data is %sed with the %s key', (direction, operation, half) => {
    expect(halfFor(direction, operation)).toBe(half);
    expect(halfFor(direction, operation, inverted)).toBe(half === 'public' ? 'private' : 'public');
  });

  it('refuses the half the profile does not use, saying which one it needs', () => {
    expect(failure(() => assertKeyHalf(key.publicKey, 'callback', 'encrypt'))).toEqual({
      type: 'ConfigError',
      reason: 'wrong-key-half',
      message:
        'the profile encrypts callback data with the private key, so encrypting it needs the private key; a public key was given',
    });
    expect(failure(() => assertKeyHalf(key, 'request', 'decrypt', inverted))).toEqual({
      type: 'ConfigError',
      reason: 'wrong-key-half',
      message:
        'the profile encrypts request data with the private key, so decrypting it needs the public key; a private key was given',
    });
  });

  it('accepts the half the profile uses', () => {
    expect(assertKeyHalf(key, 'callback', 'encrypt')).toBeUndefined();
    expect(assertKeyHalf(key.publicKey, 'callback', 'encrypt', inverted)).toBeUndefined();
  });
});

describe('sealing and opening bytes', () => {
  const plain = Buffer.from('x'.repeat(250));

  it.each([
    ['request', key.publicKey, key],
    ['response', key, key.publicKey],
    ['callback', key, key.publicKey],
  ] as const)(
    'round-trips %s data with the default profile in blocks of k-11 bytes',
    (direction, sealWith, openWith) => {
      const sealed = sealBytes(plain, direction as Direction, sealWith);
      expect(Buffer.from(sealed, 'base64').length).toBe(3 * 128);
      expect(openBytes(sealed, direction as Direction, openWith)).toEqual(plain);
    },
  );

  it('uses the profile: its padding, its halves and its block size', () => {
    const profile = resolveProfile({ padding: 'oaep-sha256', callback: 'public', plaintextBlock: 50 });
    const sealed = sealBytes(plain, 'callback', key.publicKey, { profile });
    expect(Buffer.from(sealed, 'base64').length).toBe(5 * 128);
    expect(openBytes(sealed, 'callback', key, { profile })).toEqual(plain);
    expect(
      failure(() => openBytes(sealed, 'callback', key, { profile: { ...profile, padding: 'oaep-sha1' } })).reason,
    ).toBe('padding-mismatch');
  });

  it('refuses a key of the wrong half before any work, sealing and opening', () => {
    expect(failure(() => sealBytes(plain, 'callback', key.publicKey)).reason).toBe('wrong-key-half');
    expect(failure(() => openBytes('AQID', 'callback', key))).toEqual({
      type: 'ConfigError',
      reason: 'wrong-key-half',
      message:
        'the profile encrypts callback data with the private key, so decrypting it needs the public key; a private key was given',
    });
    expect(failure(() => sealBytes(plain, 'callback', key, { profile: inverted })).reason).toBe('wrong-key-half');
  });

  it('refuses a profile block larger than the padding allows', () => {
    expect(
      failure(() => sealBytes(plain, 'callback', key, { profile: resolveProfile({ plaintextBlock: 118 }) })),
    ).toEqual({
      type: 'ConfigError',
      reason: 'plaintext-block-too-large',
      message: 'profile plaintextBlock 118 exceeds the 117-byte maximum of pkcs1 with a 1024-bit key',
    });
  });

  it('uses the engine it is given, and the native one otherwise', () => {
    const { engine, calls } = countingEngine();
    const sealed = sealBytes(plain, 'callback', key, { engine });
    expect(calls).toEqual({ encrypt: 3, decrypt: 0 });
    expect(openBytes(sealed, 'callback', key.publicKey, { engine })).toEqual(plain);
    expect(calls).toEqual({ encrypt: 3, decrypt: 3 });
    expect(sealBytes(plain, 'callback', key)).toBe(sealed); // private-key PKCS#1 is deterministic
    expect(openBytes(sealed, 'callback', key.publicKey, { engine: forgeEngine })).toEqual(plain);
  });

  it('decodes Base64 strictly before decrypting', () => {
    const sealed = sealBytes(plain, 'callback', key);
    expect(sealed).toContain('+'); // the deterministic ciphertext of this key and text has four
    expect(failure(() => openBytes(sealed.replaceAll('+', ' '), 'callback', key.publicKey))).toMatchObject({
      type: 'CryptoError',
      reason: 'plus-as-space',
    });
    expect(failure(() => openBytes(`data=${sealed}`, 'callback', key.publicKey))).toMatchObject({
      type: 'CryptoError',
      reason: 'data-prefix',
    });
  });

  it('names a ciphertext of another length and a block that does not open', () => {
    const bytes = Buffer.from(sealBytes(plain, 'callback', key), 'base64');
    expect(failure(() => openBytes(bytes.subarray(0, 200).toString('base64'), 'callback', key.publicKey)).reason).toBe(
      'ciphertext-length',
    );
    bytes[130] = (bytes[130] ?? 0) ^ 0x01;
    expect(failure(() => openBytes(bytes.toString('base64'), 'callback', key.publicKey)).reason).toBe(
      'corrupted-block',
    );
  });
});

describe('strict UTF-8', () => {
  it('decodes valid UTF-8, multi-byte characters included', () => {
    expect(decodeUtf8(Buffer.from('Zoë-测试-🙂', 'utf8'))).toBe('Zoë-测试-🙂');
  });

  it.each([
    ['a Latin-1 é', [0x7b, 0xe9, 0x7d]],
    ['a truncated multi-byte character', [0xe6, 0xb5]],
    ['a lone continuation byte', [0x80]],
  ])('refuses %s instead of writing U+FFFD', (_label, bytes) => {
    expect(failure(() => decodeUtf8(Uint8Array.from(bytes)))).toEqual({
      type: 'CryptoError',
      reason: 'not-utf8',
      message: 'the decrypted bytes are not valid UTF-8 (wrong character set, or not the expected payload)',
    });
  });
});

describe('sealing and opening JSON', () => {
  it('sends a string as the exact JSON text, spacing and digits included', () => {
    const text = '{ "amount": 12345678901234567890.120, "note": "ü" }';
    const opened = openJson(sealJson(text, 'callback', key), 'callback', key.publicKey);
    expect(opened.text).toBe(text);
    expect(opened.bytes).toEqual(Buffer.from(text, 'utf8'));
    expect(stringifyExact(opened.value)).toBe('{"amount":12345678901234567890.120,"note":"ü"}');
  });

  it('serialises any other value with exact numbers', () => {
    const value = { type: 3, amount: new LosslessNumber('0.10'), txid: 'ab' };
    const opened = openJson(sealJson(value, 'response', key), 'response', key.publicKey);
    expect(opened.text).toBe('{"type":3,"amount":0.10,"txid":"ab"}');
    expect((opened.value as Record<string, unknown>).amount).toEqual(new LosslessNumber('0.10'));
  });

  it('passes the profile and the engine through', () => {
    const { engine, calls } = countingEngine();
    const profile = resolveProfile({ padding: 'oaep-sha1' });
    const sealed = sealJson('{"a":1}', 'request', key.publicKey, { profile, engine });
    expect(openJson(sealed, 'request', key, { profile, engine }).text).toBe('{"a":1}');
    expect(calls).toEqual({ encrypt: 1, decrypt: 1 });
    expect(failure(() => openJson(sealed, 'request', key)).reason).toBe('padding-mismatch');
  });

  it('names decrypted bytes that are not UTF-8', () => {
    expect(
      failure(() => openJson(sealBytes(Buffer.from([0x7b, 0xe9, 0x7d]), 'callback', key), 'callback', key.publicKey))
        .reason,
    ).toBe('not-utf8');
  });

  it('names decrypted text that is not JSON, with the parser’s reason', () => {
    const result = failure(() => openJson(sealJson('{"a":', 'callback', key), 'callback', key.publicKey));
    expect(result.type).toBe('CryptoError');
    expect(result.reason).toBe('not-json');
    expect(result.message.startsWith('the decrypted text is not JSON: ')).toBe(true);
    expect(result.message.length).toBeGreaterThan('the decrypted text is not JSON: '.length);
  });

  it('seals with the default profile when none is given', () => {
    expect(sealJson('{}', 'callback', key)).toBe(sealJson('{}', 'callback', key, { profile: DEFAULT_PROFILE }));
  });

  it('refuses to seal with the wrong key half', () => {
    expect(() => sealJson('{}', 'callback', key.publicKey)).toThrow(ConfigError);
  });
});
