import { describe, expect, it } from 'vitest';
import { decryptBlocks, encryptBlocks } from './block-cipher.js';
import { CryptoError } from './errors.js';
import type { RsaKey } from './keys.js';
import type { BlockFailure, BlockResult, RsaEngine } from './rsa-engine.js';

/** A 1024-bit key as the block cipher sees it: only its sizes matter here. */
const key = { half: 'public', bits: 1024, modulusBytes: 128 } as unknown as RsaKey;
const key2048 = { half: 'public', bits: 2048, modulusBytes: 256 } as unknown as RsaKey;

/**
 * A recording engine: "encrypts" a block to k bytes (its length, then its bytes, zero-filled) and
 * "decrypts" by reading that back, or fails with the failure planned for a block index.
 */
function fakeEngine(failures: Record<number, BlockFailure> = {}) {
  const seen: number[][] = [];
  let decrypted = 0;
  const engine: RsaEngine = {
    name: 'native',
    encryptBlock(block, k) {
      seen.push([...block]);
      const out = Buffer.alloc(k.modulusBytes);
      out[0] = block.length;
      out.set(block, 1);
      return out;
    },
    decryptBlock(block): BlockResult {
      const index = decrypted++;
      seen.push([...block.subarray(0, 4)]);
      const failure = failures[index];
      if (failure) return { ok: false, failure };
      return { ok: true, message: Buffer.from(block.subarray(1, 1 + (block[0] ?? 0))) };
    },
  };
  return { engine, seen };
}

function failure(run: () => unknown): { reason: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CryptoError);
    return { reason: (error as CryptoError).reason, message: (error as CryptoError).message };
  }
  throw new Error('expected a CryptoError');
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('segmented encryption', () => {
  it.each([
    ['an empty plaintext as one empty block', 0, 4, [[]]],
    ['a plaintext shorter than a block as one block', 3, 4, [[0, 1, 2]]],
    ['a plaintext of exactly one block as one block', 4, 4, [[0, 1, 2, 3]]],
    ['a plaintext one byte over a block as two', 5, 4, [[0, 1, 2, 3], [4]]],
    [
      'a plaintext of exactly two blocks as two',
      8,
      4,
      [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ],
    ],
    [
      'ten bytes in blocks of four as 4 + 4 + 2',
      10,
      4,
      [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
      ],
    ],
  ])('encrypts %s', (_label, length, blockSize, blocks) => {
    const { engine, seen } = fakeEngine();
    const cipher = encryptBlocks(Uint8Array.from(range(length)), key, 'pkcs1', blockSize, engine);
    expect(seen).toEqual(blocks);
    expect(cipher.length).toBe(blocks.length * 128);
  });

  it('concatenates the blocks in order', () => {
    const { engine } = fakeEngine();
    const cipher = encryptBlocks(Uint8Array.from([1, 2, 3]), key, 'pkcs1', 2, engine);
    expect([...cipher.subarray(0, 3)]).toEqual([2, 1, 2]);
    expect([...cipher.subarray(128, 131)]).toEqual([1, 3, 0]);
  });

  it('round-trips through the decryption of the same engine', () => {
    const { engine } = fakeEngine();
    const plain = Uint8Array.from(range(300).map((i) => i % 256));
    expect([...decryptBlocks(encryptBlocks(plain, key, 'pkcs1', 117, engine), key, 'pkcs1', engine)]).toEqual([
      ...plain,
    ]);
  });
});

describe('segmented decryption', () => {
  const blocks = (count: number, k = 128): Buffer =>
    Buffer.concat(range(count).map((i) => Buffer.concat([Buffer.from([1, i + 10]), Buffer.alloc(k - 2)])));
  const wrongKey: BlockFailure = { kind: 'wrong-key', detail: 'no known padding' };

  it('decrypts every k-byte block, in order, and concatenates the messages', () => {
    const { engine, seen } = fakeEngine();
    expect([...decryptBlocks(blocks(3), key, 'pkcs1', engine)]).toEqual([10, 11, 12]);
    expect(seen).toEqual([
      [1, 10, 0, 0],
      [1, 11, 0, 0],
      [1, 12, 0, 0],
    ]);
  });

  it('refuses an empty ciphertext', () => {
    expect(failure(() => decryptBlocks(new Uint8Array(0), key, 'pkcs1', fakeEngine().engine))).toEqual({
      reason: 'empty',
      message: 'no ciphertext',
    });
  });

  it.each([
    [
      127,
      'ciphertext of 127 bytes is not a multiple of the 128-byte block of this 1024-bit key: a key of another size encrypted it, or the data was truncated (127 stray bytes)',
    ],
    [
      129,
      'ciphertext of 129 bytes is not a multiple of the 128-byte block of this 1024-bit key: a key of another size encrypted it, or the data was truncated (1 stray bytes)',
    ],
    [
      300,
      'ciphertext of 300 bytes is not a multiple of the 128-byte block of this 1024-bit key: a key of another size encrypted it, or the data was truncated (44 stray bytes)',
    ],
  ])('refuses a ciphertext of %i bytes with a 128-byte key by its length', (length, message) => {
    expect(failure(() => decryptBlocks(new Uint8Array(length), key, 'pkcs1', fakeEngine().engine))).toEqual({
      reason: 'ciphertext-length',
      message,
    });
  });

  it.each([
    ['one 128-byte block under a 1024-bit key', key, blocks(1), 'block 1 of 1: no known padding'],
    [
      'two 128-byte blocks under a 1024-bit key',
      key,
      blocks(2),
      'block 1 of 2: no known padding (the length would also fit 2048-bit keys: is this the right key?)',
    ],
    [
      'three 256-byte blocks under a 2048-bit key',
      key2048,
      blocks(3, 256),
      'block 1 of 3: no known padding (the length would also fit 1024-bit or 3072-bit keys: is this the right key?)',
    ],
    [
      'four 128-byte blocks under a 1024-bit key',
      key,
      blocks(4),
      'block 1 of 4: no known padding (the length would also fit 2048-bit or 4096-bit keys: is this the right key?)',
    ],
  ])('names a wrong key on the first block of %s, with the key sizes the length fits', (_label, k, cipher, message) => {
    expect(failure(() => decryptBlocks(cipher, k, 'pkcs1', fakeEngine({ 0: wrongKey }).engine))).toEqual({
      reason: 'wrong-key',
      message,
    });
  });

  it('calls a later block that fails although the first opened a corrupted block', () => {
    expect(failure(() => decryptBlocks(blocks(3), key, 'pkcs1', fakeEngine({ 1: wrongKey }).engine))).toEqual({
      reason: 'corrupted-block',
      message:
        'block 2 of 3 does not decrypt although block 1 did: the ciphertext was altered or blocks of different messages were mixed',
    });
  });

  it.each([
    ['padding-mismatch', 0, 'block 1 of 2: the block carries OAEP'],
    ['padding-mismatch', 1, 'block 2 of 2: the block carries OAEP'],
    ['bad-padding', 0, 'block 1 of 2: the block carries OAEP'],
    ['bad-padding', 1, 'block 2 of 2: the block carries OAEP'],
  ] as const)('keeps a %s failure of block index %i as it is, without a key size hint', (kind, index, message) => {
    const engine = fakeEngine({ [index]: { kind, detail: 'the block carries OAEP' } }).engine;
    expect(failure(() => decryptBlocks(blocks(2), key, 'pkcs1', engine))).toEqual({ reason: kind, message });
  });

  it('stops at the first failing block', () => {
    const { engine, seen } = fakeEngine({ 0: wrongKey });
    failure(() => decryptBlocks(blocks(3), key, 'pkcs1', engine));
    expect(seen).toHaveLength(1);
  });
});
