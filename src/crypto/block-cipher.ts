import type { Padding } from '../core/profile.js';
import { CryptoError } from './errors.js';
import type { RsaKey } from './keys.js';
import { nativeEngine, type RsaEngine } from './rsa-engine.js';

/**
 * Segmented RSA, the Java way: split the plaintext into blocks of at most `blockSize` bytes,
 * encrypt each to exactly k bytes, concatenate. An empty plaintext is one empty block, so the
 * ciphertext is never empty (the interface's Base64 pattern needs at least one character).
 */
export function encryptBlocks(
  plain: Uint8Array,
  key: RsaKey,
  padding: Padding,
  blockSize: number,
  engine: RsaEngine = nativeEngine,
): Buffer {
  const blocks: Buffer[] = [];
  let offset = 0;
  do {
    blocks.push(engine.encryptBlock(plain.subarray(offset, offset + blockSize), key, padding));
    offset += blockSize;
  } while (offset < plain.length);
  return Buffer.concat(blocks);
}

/**
 * Splits a ciphertext into k-byte blocks and decrypts each. Any plaintext block size up to the
 * padding's maximum is accepted (the sender's segmentation is its own business).
 */
export function decryptBlocks(
  cipher: Uint8Array,
  key: RsaKey,
  padding: Padding,
  engine: RsaEngine = nativeEngine,
): Buffer {
  const k = key.modulusBytes;
  if (cipher.length === 0) throw new CryptoError('empty', 'no ciphertext');
  if (cipher.length % k !== 0) {
    throw new CryptoError(
      'ciphertext-length',
      `ciphertext of ${cipher.length} bytes is not a multiple of the ${k}-byte block of this ${key.bits}-bit key: ` +
        `a key of another size encrypted it, or the data was truncated (${cipher.length % k} stray bytes)`,
    );
  }
  const count = cipher.length / k;
  const parts: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const result = engine.decryptBlock(cipher.subarray(i * k, (i + 1) * k), key, padding);
    if (!result.ok) {
      const where = `block ${i + 1} of ${count}`;
      const { kind, detail } = result.failure;
      if (i > 0 && kind === 'wrong-key') {
        // The first block opened, so the key is right: this block was damaged or spliced in.
        throw new CryptoError(
          'corrupted-block',
          `${where} does not decrypt although block 1 did: the ciphertext was altered or blocks of different messages were mixed`,
        );
      }
      throw new CryptoError(kind, `${where}: ${detail}${kind === 'wrong-key' ? otherSizeHint(cipher.length, k) : ''}`);
    }
    parts.push(result.message);
  }
  return Buffer.concat(parts);
}

const COMMON_MODULUS_BYTES = [128, 256, 384, 512];

function otherSizeHint(length: number, k: number): string {
  const fits = COMMON_MODULUS_BYTES.filter((size) => size !== k && length % size === 0);
  return fits.length === 0
    ? ''
    : ` (the length would also fit ${fits.map((size) => `${size * 8}-bit`).join(' or ')} keys: is this the right key?)`;
}
