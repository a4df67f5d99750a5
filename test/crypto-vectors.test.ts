import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveProfile, type Padding } from '../src/core/profile.js';
import { openBytes, sealBytes } from '../src/crypto/codec.js';
import { CryptoError } from '../src/crypto/errors.js';
import { parseKey, type RsaPrivateKey, type RsaPublicKey } from '../src/crypto/keys.js';
import { forgeEngine, nativeEngine } from '../src/crypto/rsa-engine.js';
import { ROOT } from './support/cli.js';

/** One interop vector made by OpenSSL or by a Java program (test/vectors/make-vectors.sh). */
interface Vector {
  id: string;
  source: 'openssl' | 'java';
  bits: number;
  padding: Padding | 'oaep-sha256-mgf1sha1';
  encryptedWith: 'private' | 'public';
  plaintextBlock: number;
  plaintext: string;
  privateKey: string;
  publicKey: string;
  ciphertext: string;
  deterministic: boolean;
}

const dir = join(ROOT, 'test', 'vectors');
const vectors = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as Vector[];
const read = (file: string) => readFileSync(join(dir, file));
const standard = vectors.filter((v) => v.padding !== 'oaep-sha256-mgf1sha1');

describe('independent interop vectors (OpenSSL and Java)', () => {
  it('cover OpenSSL and Java, every padding, both key halves and 1024/2048/4096-bit keys', () => {
    expect(new Set(vectors.map((v) => v.source))).toEqual(new Set(['openssl', 'java']));
    expect(new Set(standard.map((v) => v.padding))).toEqual(new Set(['pkcs1', 'oaep-sha1', 'oaep-sha256']));
    expect(new Set(vectors.map((v) => v.encryptedWith))).toEqual(new Set(['private', 'public']));
    expect(new Set(vectors.map((v) => v.bits))).toEqual(new Set([1024, 2048, 4096]));
  });

  for (const vector of standard) {
    // A vector encrypted with the private key travels like a callback; with the public key, like a request.
    const direction = vector.encryptedWith === 'private' ? 'callback' : 'request';
    const profile = resolveProfile({ padding: vector.padding, callback: 'private', request: 'public' });

    it(`${vector.id}: decrypts to the exact plaintext on both engines`, () => {
      const key =
        vector.encryptedWith === 'private' ? parseKey(read(vector.publicKey)) : parseKey(read(vector.privateKey));
      const plain = read(vector.plaintext);
      // Every vector on both engines, none left out: forge's 4096-bit private-key operation costs
      // about half a second per block, five blocks in all.
      const decrypted = [nativeEngine, forgeEngine].map((engine) =>
        openBytes(vector.ciphertext, direction, key, { profile, engine }).toString('hex'),
      );
      expect(decrypted).toEqual([plain.toString('hex'), plain.toString('hex')]);
    });

    if (vector.deterministic) {
      it(`${vector.id}: is reproduced byte for byte`, () => {
        const priv = parseKey(read(vector.privateKey)) as RsaPrivateKey;
        const sized = resolveProfile({ padding: vector.padding, plaintextBlock: vector.plaintextBlock });
        expect(sealBytes(read(vector.plaintext), 'callback', priv, { profile: sized })).toBe(vector.ciphertext);
      });
    }
  }

  it("explains Java's OAEP default (MGF1-SHA-1 with a SHA-256 label hash) instead of a bare failure", () => {
    const vector = vectors.find((v) => v.padding === 'oaep-sha256-mgf1sha1');
    expect(vector && { source: vector.source, encryptedWith: vector.encryptedWith }).toEqual({
      source: 'java',
      encryptedWith: 'public',
    });
    const priv = parseKey(read(vector!.privateKey)) as RsaPrivateKey;
    const attempt = () =>
      openBytes(vector!.ciphertext, 'request', priv, { profile: resolveProfile({ padding: 'oaep-sha256' }) });
    expect(attempt).toThrow(CryptoError);
    expect(attempt).toThrow(/MGF1-SHA-1.*OAEPParameterSpec/);
  });

  it('reads the same key from every committed encoding', () => {
    const spki = (key: RsaPublicKey) => key.keyObject.export({ type: 'spki', format: 'der' }).toString('base64');
    const pem = parseKey(read('keys/rsa1024-public.pem')) as RsaPublicKey;
    for (const file of [
      'keys/rsa1024-public.b64',
      'keys/rsa1024-public-pkcs1.pem',
      'keys/rsa1024-public-wrapped.b64',
    ]) {
      expect(spki(parseKey(read(file)) as RsaPublicKey)).toBe(spki(pem));
    }
    for (const file of ['keys/rsa1024-private.b64', 'keys/rsa1024-private-pkcs1.pem']) {
      expect(spki((parseKey(read(file)) as RsaPrivateKey).publicKey)).toBe(spki(pem));
    }
  });
});
