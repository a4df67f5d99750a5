import { constants, createHash, privateDecrypt, publicEncrypt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseKey, type RsaPrivateKey } from './keys.js';
import { identifyPadding, padOaep, unpad, unpadOaep, unpadPkcs1 } from './padding.js';

const key = parseKey(
  readFileSync(new URL('../../test/vectors/keys/rsa1024-private.pem', import.meta.url), 'utf8'),
) as RsaPrivateKey;

const bytes = (...parts: (number | number[])[]): Buffer => Buffer.from(parts.flat());
const repeat = (byte: number, count: number): number[] => new Array<number>(count).fill(byte);

/** An independent MGF1 (RFC 8017 B.2.1), so that hand-made OAEP blocks do not trust the code under test. */
function mgf1(seed: Buffer, length: number, hash: 'sha1' | 'sha256'): Buffer {
  const chunks: Buffer[] = [];
  for (let counter = 0; Buffer.concat(chunks).length < length; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    chunks.push(createHash(hash).update(seed).update(c).digest());
  }
  return Buffer.concat(chunks).subarray(0, length);
}

/** An OAEP block whose masked seed starts with 02 and whose bytes pass v1.5 type 2 unpadding (about 1 in 260). */
function oaepFittingType2(padding: 'oaep-sha1' | 'oaep-sha256'): Buffer {
  for (let n = 0; ; n++) {
    const block = padOaep(Buffer.from([4]), 128, padding, (buffer) => {
      new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength).setUint32(0, n);
      return buffer;
    });
    if (unpadPkcs1(block, 2).ok) return block;
  }
}

const xor = (a: Buffer, b: Buffer): Buffer => Buffer.from(a.map((byte, i) => byte ^ (b[i] ?? 0)));

/** Masks a hand-made OAEP data block: `first || maskedSeed || maskedDB`, MGF1 over `mgfHash`, an h-byte seed. */
function oaepBlock(db: Buffer, mgfHash: 'sha1' | 'sha256', first = 0x00, h = mgfHash === 'sha1' ? 20 : 32): Buffer {
  const seed = Buffer.alloc(h, 0x5a);
  const maskedDb = xor(db, mgf1(seed, db.length, mgfHash));
  const maskedSeed = xor(seed, mgf1(maskedDb, h, mgfHash));
  return Buffer.concat([Buffer.from([first]), maskedSeed, maskedDb]);
}

/** A data block of `k` bytes: lHash, zeros, the separator, the message. */
function dataBlock(k: number, labelHash: 'sha1' | 'sha256', message: number[], separator = 0x01): Buffer {
  const lHash = createHash(labelHash).digest();
  const h = labelHash === 'sha1' ? 20 : 32;
  const zeros = k - 2 * h - 2 - message.length;
  return Buffer.concat([lHash, Buffer.alloc(zeros), Buffer.from([separator, ...message])]).subarray(0, k - h - 1);
}

/** A random source that fills every seed with `byte` and records the seed lengths asked for. */
function seeded(byte: number, lengths: number[] = []) {
  return <T extends NodeJS.ArrayBufferView>(buffer: T): T => {
    lengths.push(buffer.byteLength);
    new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength).fill(byte);
    return buffer;
  };
}

describe('PKCS#1 v1.5 unpadding', () => {
  it.each([
    ['a block of 10 bytes', bytes(0, 1, repeat(0xff, 8)), 1, 'block shorter than 11 bytes'],
    ['a block that starts with 01', bytes(1, 1, repeat(0xff, 8), 0, 7), 1, 'block does not start with 00 01'],
    ['a type 2 block read as type 1', bytes(0, 2, repeat(0x33, 8), 0, 7), 1, 'block does not start with 00 01'],
    ['a type 1 block read as type 2', bytes(0, 1, repeat(0xff, 8), 0, 7), 2, 'block does not start with 00 02'],
    ['a type 1 block of FF to the end', bytes(0, 1, repeat(0xff, 12)), 1, 'no 00 separator after the padding string'],
    [
      'a type 1 block whose FF run ends in another byte',
      bytes(0, 1, repeat(0xff, 8), 0x05, 0, 7),
      1,
      'no 00 separator after the padding string',
    ],
    [
      'a type 2 block without a zero byte',
      bytes(0, 2, repeat(0x33, 12)),
      2,
      'no 00 separator after the padding string',
    ],
    [
      'a type 1 block with 7 padding bytes',
      bytes(0, 1, repeat(0xff, 7), 0, 7, 8),
      1,
      'padding string of 7 bytes, fewer than 8',
    ],
    [
      'a type 2 block with 7 padding bytes',
      bytes(0, 2, repeat(0x33, 7), 0, 7, 8),
      2,
      'padding string of 7 bytes, fewer than 8',
    ],
    [
      'a type 2 block with an immediate separator',
      bytes(0, 2, 0, repeat(0x33, 10)),
      2,
      'padding string of 0 bytes, fewer than 8',
    ],
  ] as const)('refuses %s', (_label, raw, type, problem) => {
    expect(unpadPkcs1(raw, type)).toEqual({ ok: false, problem });
  });

  it.each([
    ['the shortest type 1 block (11 bytes, empty message)', bytes(0, 1, repeat(0xff, 8), 0), 1, []],
    ['a type 1 block with 8 padding bytes', bytes(0, 1, repeat(0xff, 8), 0, 7, 0, 8), 1, [7, 0, 8]],
    ['a type 2 block with 8 padding bytes', bytes(0, 2, repeat(0x33, 8), 0, 0xff, 0), 2, [0xff, 0]],
    ['a type 2 block with a longer padding string', bytes(0, 2, repeat(0x81, 20), 0, 1, 2), 2, [1, 2]],
  ] as const)('reads the message of %s', (_label, raw, type, message) => {
    expect(unpadPkcs1(raw, type)).toEqual({ ok: true, message: Buffer.from(message) });
  });

  it('copies the message out of the raw block', () => {
    const raw = bytes(0, 1, repeat(0xff, 8), 0, 7);
    const result = unpadPkcs1(raw, 1);
    raw[11] = 9;
    expect(result).toEqual({ ok: true, message: Buffer.from([7]) });
  });
});

describe('OAEP padding', () => {
  it.each(['oaep-sha1', 'oaep-sha256'] as const)('pads so that OpenSSL %s decrypts the exact message', (padding) => {
    const message = Buffer.from('{"txid":"+/="}');
    const padded = padOaep(message, 128, padding);
    expect(padded.length).toBe(128);
    expect(padded[0]).toBe(0);
    const cipher = publicEncrypt({ key: key.publicKey.keyObject, padding: constants.RSA_NO_PADDING }, padded);
    const oaepHash = padding === 'oaep-sha1' ? 'sha1' : 'sha256';
    expect(privateDecrypt({ key: key.keyObject, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, cipher)).toEqual(
      message,
    );
  });

  it.each(['oaep-sha1', 'oaep-sha256'] as const)('unpads what OpenSSL %s encrypted', (padding) => {
    const message = Buffer.from('ü€ and more');
    const oaepHash = padding === 'oaep-sha1' ? 'sha1' : 'sha256';
    const cipher = publicEncrypt(
      { key: key.publicKey.keyObject, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash },
      message,
    );
    const raw = privateDecrypt({ key: key.keyObject, padding: constants.RSA_NO_PADDING }, cipher);
    expect(unpadOaep(raw, padding)).toEqual({ ok: true, message });
  });

  it.each([
    ['oaep-sha1', 20, 86],
    ['oaep-sha256', 32, 62],
  ] as const)(
    '%s takes a seed of %i bytes from the random source and at most %i message bytes with a 128-byte key',
    (padding, h, max) => {
      const seeds: number[] = [];
      const random = seeded(0x42, seeds);
      const longest = Buffer.alloc(max, 0x61);
      expect(unpadOaep(padOaep(longest, 128, padding, random), padding)).toEqual({ ok: true, message: longest });
      expect(seeds).toEqual([h]);
      expect(() => padOaep(Buffer.alloc(max + 1), 128, padding, random)).toThrow(
        new RangeError(`message of ${max + 1} bytes too long for OAEP with a 128-byte key`),
      );
    },
  );

  it('is deterministic for a given seed and differs with another seed', () => {
    const message = Buffer.from('abc');
    expect(padOaep(message, 128, 'oaep-sha256', seeded(1))).toEqual(padOaep(message, 128, 'oaep-sha256', seeded(1)));
    expect(padOaep(message, 128, 'oaep-sha256', seeded(1))).not.toEqual(
      padOaep(message, 128, 'oaep-sha256', seeded(2)),
    );
  });

  it.each([
    ['oaep-sha1', 42],
    ['oaep-sha256', 66],
  ] as const)('%s round-trips the empty message in the smallest block (%i bytes)', (padding, k) => {
    expect(unpadOaep(padOaep(Buffer.alloc(0), k, padding), padding)).toEqual({ ok: true, message: Buffer.alloc(0) });
  });

  it.each([
    ['a block one byte shorter than 2h+2', 'oaep-sha1', Buffer.alloc(41), 'block too short for OAEP'],
    ['a sha-256 block of 65 bytes', 'oaep-sha256', Buffer.alloc(65), 'block too short for OAEP'],
    [
      'a block that does not start with 00',
      'oaep-sha1',
      oaepBlock(dataBlock(128, 'sha1', [1, 2]), 'sha1', 0x01),
      'OAEP block does not start with 00',
    ],
    [
      'a SHA-1 block read as SHA-256',
      'oaep-sha256',
      oaepBlock(dataBlock(128, 'sha1', [1, 2]), 'sha1'),
      'OAEP label hash (sha256) does not match',
    ],
    [
      'a SHA-256 block read as SHA-1',
      'oaep-sha1',
      oaepBlock(dataBlock(128, 'sha256', [1, 2]), 'sha256'),
      'OAEP label hash (sha1) does not match',
    ],
    [
      'a block whose separator is 02',
      'oaep-sha1',
      oaepBlock(dataBlock(128, 'sha1', [1, 2], 0x02), 'sha1'),
      'OAEP block has no 01 separator',
    ],
    [
      'a block of zeros after the label hash',
      'oaep-sha1',
      oaepBlock(Buffer.concat([createHash('sha1').digest(), Buffer.alloc(87)]), 'sha1'),
      'OAEP block has no 01 separator',
    ],
  ] as const)('refuses %s', (_label, padding, raw, problem) => {
    expect(unpadOaep(raw, padding)).toEqual({ ok: false, problem });
  });

  it('reads a hand-made block with zeros before the separator', () => {
    expect(unpadOaep(oaepBlock(dataBlock(128, 'sha256', [9, 8, 7]), 'sha256'), 'oaep-sha256')).toEqual({
      ok: true,
      message: Buffer.from([9, 8, 7]),
    });
  });
});

describe('unpad by profile padding', () => {
  const type1 = bytes(0, 1, repeat(0xff, 8), 0, 4);
  const type2 = bytes(0, 2, repeat(0x44, 8), 0, 4);

  it('reads PKCS#1 v1.5 of the block type asked for', () => {
    expect(unpad(type1, 'pkcs1', 1)).toEqual({ ok: true, message: Buffer.from([4]) });
    expect(unpad(type2, 'pkcs1', 2)).toEqual({ ok: true, message: Buffer.from([4]) });
    expect(unpad(type1, 'pkcs1', 2)).toEqual({ ok: false, problem: 'block does not start with 00 02' });
  });

  it.each(['oaep-sha1', 'oaep-sha256'] as const)('reads %s whatever the block type', (padding) => {
    const raw = padOaep(Buffer.from([4]), 128, padding);
    expect(unpad(raw, padding, 1)).toEqual({ ok: true, message: Buffer.from([4]) });
    expect(unpad(raw, padding, 2)).toEqual({ ok: true, message: Buffer.from([4]) });
  });
});

describe('naming the padding a block really carries', () => {
  const mixed = (db: Buffer, first = 0x00) => oaepBlock(db, 'sha1', first, 32);

  it.each([
    ['a type 1 block', bytes(0, 1, repeat(0xff, 8), 0, 4), 'PKCS#1 v1.5 block type 1 (private-key encryption)'],
    ['a type 2 block', bytes(0, 2, repeat(0x44, 8), 0, 4), 'PKCS#1 v1.5 block type 2 (public-key encryption)'],
    [
      'an OAEP SHA-1 block',
      padOaep(Buffer.from([4]), 128, 'oaep-sha1'),
      'OAEP with SHA-1 (profile padding: oaep-sha1)',
    ],
    [
      'an OAEP SHA-256 block',
      padOaep(Buffer.from([4]), 128, 'oaep-sha256'),
      'OAEP with SHA-256 (profile padding: oaep-sha256)',
    ],
    [
      "Java's SHA-256 label with MGF1-SHA-1",
      mixed(dataBlock(128, 'sha256', [4])),
      "OAEP with SHA-256 and MGF1-SHA-1: Java's OAEPWithSHA-256AndMGF1Padding default; pass an OAEPParameterSpec with MGF1ParameterSpec.SHA256",
    ],
    [
      'the smallest mixed block (66 bytes, empty message)',
      mixed(dataBlock(66, 'sha256', [])),
      "OAEP with SHA-256 and MGF1-SHA-1: Java's OAEPWithSHA-256AndMGF1Padding default; pass an OAEPParameterSpec with MGF1ParameterSpec.SHA256",
    ],
    ['a mixed block that does not start with 00', mixed(dataBlock(128, 'sha256', [4]), 0x01), null],
    ['a mixed block with separator 02', mixed(dataBlock(128, 'sha256', [4], 0x02)), null],
    [
      'a mixed block of zeros after the label hash',
      mixed(Buffer.concat([createHash('sha256').digest(), Buffer.alloc(75)])),
      null,
    ],
    [
      'a mixed-style block whose label is no SHA-256 hash',
      mixed(Buffer.concat([Buffer.alloc(32, 0x77), Buffer.alloc(61), Buffer.from([0x01, 4])])),
      null,
    ],
    [
      'a mixed block with a SHA-1 label',
      oaepBlock(dataBlock(128, 'sha1', [4]).subarray(0, 95), 'sha1', 0x00, 32),
      null,
    ],
    [
      'an OAEP SHA-1 block that also fits v1.5 type 2 framing',
      oaepFittingType2('oaep-sha1'),
      'OAEP with SHA-1 (profile padding: oaep-sha1)',
    ],
    [
      'an OAEP SHA-256 block that also fits v1.5 type 2 framing',
      oaepFittingType2('oaep-sha256'),
      'OAEP with SHA-256 (profile padding: oaep-sha256)',
    ],
    ['a short block of zeros', Buffer.alloc(65), null],
    ['a block of zeros', Buffer.alloc(128), null],
  ])('names %s', (_label, raw, name) => {
    expect(identifyPadding(raw)).toBe(name);
  });
});
