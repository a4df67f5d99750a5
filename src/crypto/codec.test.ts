import { constants, generateKeyPairSync, privateDecrypt, publicEncrypt } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { maxPlaintextBlock, PADDINGS, resolveProfile, type Direction, type Padding } from '../core/profile.js';
import { openBytes, openJson, sealBytes, sealJson } from './codec.js';
import { CryptoError } from './errors.js';
import { parseKey, type RsaPrivateKey } from './keys.js';
import { padOaep, unpadOaep } from './padding.js';
import { forgeEngine, nativeEngine, type RsaEngine } from './rsa-engine.js';

function keyPair(bits: number): RsaPrivateKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) as RsaPrivateKey;
}

const keys = { 1024: keyPair(1024), 2048: keyPair(2048), 4096: keyPair(4096) } as const;
const other1024 = keyPair(1024);

/** The sizes the issue names: 0, 1, block-1, block, block+1 and 64 KiB. */
function edgeSizes(block: number): number[] {
  return [0, 1, block - 1, block, block + 1, 64 * 1024];
}

function roundTrip(
  plain: Uint8Array,
  bits: 1024 | 2048 | 4096,
  padding: Padding,
  direction: Direction,
  enc: RsaEngine,
  dec: RsaEngine,
): Buffer {
  const priv = keys[bits];
  const profile = resolveProfile({ padding, request: 'public', response: 'private', callback: 'private' });
  const encryptKey = profile[direction] === 'private' ? priv : priv.publicKey;
  const decryptKey = profile[direction] === 'private' ? priv.publicKey : priv;
  const sealed = sealBytes(plain, direction, encryptKey, { profile, engine: enc });
  const blocks = Math.max(1, Math.ceil(plain.length / maxPlaintextBlock(padding, priv.modulusBytes)));
  expect(Buffer.from(sealed, 'base64').length).toBe(blocks * priv.modulusBytes);
  return openBytes(sealed, direction, decryptKey, { profile, engine: dec });
}

describe('segmented RSA round trips (property-based)', () => {
  for (const bits of [1024, 2048, 4096] as const) {
    for (const padding of PADDINGS) {
      const block = maxPlaintextBlock(padding, bits / 8);
      it(`restores every payload of the edge sizes with ${bits}-bit keys and ${padding}, in every direction`, () => {
        fc.assert(
          fc.property(
            fc.constantFrom(...edgeSizes(block)).chain((size) => fc.uint8Array({ minLength: size, maxLength: size })),
            fc.constantFrom<Direction>('request', 'response', 'callback'),
            (plain, direction) => {
              expect(
                roundTrip(plain, bits, padding, direction, nativeEngine, nativeEngine).equals(Buffer.from(plain)),
              ).toBe(true);
            },
          ),
          { numRuns: bits === 4096 ? 12 : 30 },
        );
      });
    }
  }

  it('interoperates between the native and the node-forge engine in both directions', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 600 }),
        fc.constantFrom(...PADDINGS),
        fc.constantFrom<Direction>('request', 'callback'),
        fc.boolean(),
        (plain, padding, direction, nativeFirst) => {
          const [enc, dec] = nativeFirst ? [nativeEngine, forgeEngine] : [forgeEngine, nativeEngine];
          expect(roundTrip(plain, 1024, padding, direction, enc, dec).equals(Buffer.from(plain))).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('produces byte-identical private-key PKCS#1 ciphertext on both engines (type 1 is deterministic)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 1000 }),
        fc.constantFrom(1024, 2048) as fc.Arbitrary<1024 | 2048>,
        (plain, bits) => {
          const native = sealBytes(plain, 'callback', keys[bits], { engine: nativeEngine });
          const forged = sealBytes(plain, 'callback', keys[bits], { engine: forgeEngine });
          expect(forged).toBe(native);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('accepts any sender block size up to the maximum', () => {
    const plain = Buffer.from('x'.repeat(500));
    const sealed = sealBytes(plain, 'callback', keys[1024], { profile: resolveProfile({ plaintextBlock: 50 }) });
    expect(Buffer.from(sealed, 'base64').length).toBe(10 * 128);
    expect(openBytes(sealed, 'callback', keys[1024].publicKey).equals(plain)).toBe(true);
  });
});

describe('OAEP encoding', () => {
  it.each(['oaep-sha1', 'oaep-sha256'] as const)('matches OpenSSL %s in both directions', (padding) => {
    const key = keys[2048];
    const oaepHash = padding === 'oaep-sha1' ? 'sha1' : 'sha256';
    const message = Buffer.from('{"id":"+/="}');
    const ours = publicEncrypt(
      { key: key.publicKey.keyObject, padding: constants.RSA_NO_PADDING },
      padOaep(message, 256, padding),
    );
    expect(
      privateDecrypt({ key: key.keyObject, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, ours).equals(message),
    ).toBe(true);
    const theirs = publicEncrypt(
      { key: key.publicKey.keyObject, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash },
      message,
    );
    const raw = privateDecrypt({ key: key.keyObject, padding: constants.RSA_NO_PADDING }, theirs);
    expect(unpadOaep(raw, padding)).toEqual({ ok: true, message });
  });
});

describe('explained failures', () => {
  const payload = JSON.stringify({ type: 3, txid: 'ab'.repeat(32), note: 'ü€'.repeat(100) });
  const callback = sealJson(payload, 'callback', keys[1024]);

  function failure(run: () => unknown): CryptoError {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(CryptoError);
      return error as CryptoError;
    }
    throw new Error('expected a CryptoError');
  }

  it('opens JSON with its exact text', () => {
    expect(openJson(callback, 'callback', keys[1024].publicKey).text).toBe(payload);
  });

  it('names a wrong key', () => {
    expect(failure(() => openJson(callback, 'callback', other1024.publicKey)).reason).toBe('wrong-key');
  });

  it('names a key of another size by the ciphertext length', () => {
    const threeBlocks = sealJson('x'.repeat(300), 'callback', keys[1024]);
    const error = failure(() => openBytes(threeBlocks, 'callback', keys[2048].publicKey));
    expect(error.reason).toBe('ciphertext-length');
    expect(error.message).toMatch(/not a multiple of the 256-byte block/);
  });

  it('hints at another key size when the length fits one', () => {
    const fourBlocks = sealJson('x'.repeat(400), 'callback', keys[1024]);
    const error = failure(() => openBytes(fourBlocks, 'callback', keys[2048].publicKey));
    expect(error.reason).toBe('wrong-key');
    expect(error.message).toMatch(/would also fit 1024-bit/);
  });

  it('names the padding the block really carries', () => {
    const oaep = sealJson(payload, 'callback', keys[1024], { profile: resolveProfile({ padding: 'oaep-sha1' }) });
    const error = failure(() => openJson(oaep, 'callback', keys[1024].publicKey));
    expect(error.reason).toBe('padding-mismatch');
    expect(error.message).toMatch(/OAEP with SHA-1/);
  });

  it('names a damaged block after a good one', () => {
    const bytes = Buffer.from(callback, 'base64');
    bytes[128 + 5] = (bytes[128 + 5] ?? 0) ^ 0xff;
    const error = failure(() => openJson(bytes.toString('base64'), 'callback', keys[1024].publicKey));
    expect(error.reason).toBe('corrupted-block');
    expect(error.message).toMatch(/block 2 of/);
  });

  it('names bytes that are not UTF-8 and text that is not JSON', () => {
    const latin1 = sealBytes(Buffer.from([0x7b, 0xe9, 0x7d]), 'callback', keys[1024]);
    expect(failure(() => openJson(latin1, 'callback', keys[1024].publicKey)).reason).toBe('not-utf8');
    const notJson = sealJson('{"a":', 'callback', keys[1024]);
    expect(failure(() => openJson(notJson, 'callback', keys[1024].publicKey)).reason).toBe('not-json');
  });

  it('refuses the key half the profile does not use for a direction', () => {
    expect(() => sealJson('{}', 'callback', keys[1024].publicKey)).toThrow(ConfigError);
    expect(() => openJson(callback, 'callback', keys[1024])).toThrow(/decrypting it needs the public key/);
  });
});
