import { createHash, randomFillSync } from 'node:crypto';
import type { Padding } from '../core/profile.js';

/**
 * Pure padding codecs over raw RSA blocks (RFC 8017). Node's `privateDecrypt` refuses PKCS#1 v1.5
 * (CVE-2023-46809) and `privateEncrypt` has no OAEP, so the fast path does raw RSA and pads or
 * unpads here; written in the open, each failure can also be *explained* (which padding the block
 * really carries, or none: a wrong key).
 */

/** Outcome of unpadding one raw block. */
export type Unpadded = { ok: true; message: Buffer } | { ok: false; problem: string };

/** PKCS#1 v1.5 block type: 1 for private-key encryption, 2 for public-key encryption. */
type BlockType = 1 | 2;

/** Removes PKCS#1 v1.5 padding of the expected block type (RFC 8017 7.2.2 / 8.2.2 framing). */
export function unpadPkcs1(raw: Uint8Array, type: BlockType): Unpadded {
  if (raw.length < 11) return { ok: false, problem: 'block shorter than 11 bytes' };
  if (raw[0] !== 0x00 || raw[1] !== type) {
    return { ok: false, problem: `block does not start with 00 0${type}` };
  }
  let i = 2;
  if (type === 1) {
    while (i < raw.length && raw[i] === 0xff) i++;
  } else {
    while (i < raw.length && raw[i] !== 0x00) i++;
  }
  if (i >= raw.length || raw[i] !== 0x00) return { ok: false, problem: 'no 00 separator after the padding string' };
  if (i - 2 < 8) return { ok: false, problem: `padding string of ${i - 2} bytes, fewer than 8` };
  return { ok: true, message: Buffer.from(raw.subarray(i + 1)) };
}

function hashName(padding: Padding): 'sha1' | 'sha256' {
  return padding === 'oaep-sha1' ? 'sha1' : 'sha256';
}

function mgf1(seed: Uint8Array, length: number, hash: 'sha1' | 'sha256'): Buffer {
  const out = Buffer.alloc(length);
  const counter = Buffer.alloc(4);
  let offset = 0;
  for (let c = 0; offset < length; c++) {
    counter.writeUInt32BE(c);
    const digest = createHash(hash).update(seed).update(counter).digest();
    offset += digest.copy(out, offset);
  }
  return out;
}

function xorInto(target: Buffer, mask: Uint8Array): void {
  for (let i = 0; i < target.length; i++) target[i] = (target[i] ?? 0) ^ (mask[i] ?? 0);
}

/** EME-OAEP encoding (RFC 8017 7.1.1) with an empty label, MGF1 over the same hash. */
export function padOaep(message: Uint8Array, modulusBytes: number, padding: Padding, random = randomFillSync): Buffer {
  const hash = hashName(padding);
  const h = hash === 'sha1' ? 20 : 32;
  const k = modulusBytes;
  if (message.length > k - 2 * h - 2)
    throw new RangeError(`message of ${message.length} bytes too long for OAEP with a ${k}-byte key`);
  const lHash = createHash(hash).digest();
  const db = Buffer.alloc(k - h - 1);
  lHash.copy(db, 0);
  db[k - message.length - h - 2] = 0x01;
  Buffer.from(message).copy(db, k - message.length - h - 1);
  const seed = random(Buffer.alloc(h));
  xorInto(db, mgf1(seed, db.length, hash));
  xorInto(seed, mgf1(db, h, hash));
  return Buffer.concat([Buffer.alloc(1), seed, db]);
}

/** EME-OAEP decoding (RFC 8017 7.1.2) with an empty label. */
export function unpadOaep(raw: Uint8Array, padding: Padding): Unpadded {
  const hash = hashName(padding);
  const h = hash === 'sha1' ? 20 : 32;
  const k = raw.length;
  if (k < 2 * h + 2) return { ok: false, problem: 'block too short for OAEP' };
  if (raw[0] !== 0x00) return { ok: false, problem: 'OAEP block does not start with 00' };
  const seed = Buffer.from(raw.subarray(1, 1 + h));
  const db = Buffer.from(raw.subarray(1 + h));
  xorInto(seed, mgf1(db, h, hash));
  xorInto(db, mgf1(seed, db.length, hash));
  const lHash = createHash(hash).digest();
  if (!db.subarray(0, h).equals(lHash)) return { ok: false, problem: `OAEP label hash (${hash}) does not match` };
  let i = h;
  while (i < db.length && db[i] === 0x00) i++;
  if (i >= db.length || db[i] !== 0x01) return { ok: false, problem: 'OAEP block has no 01 separator' };
  return { ok: true, message: Buffer.from(db.subarray(i + 1)) };
}

/** Unpads a raw block per the profile's padding; `type` matters only for PKCS#1 v1.5. */
export function unpad(raw: Uint8Array, padding: Padding, type: BlockType): Unpadded {
  return padding === 'pkcs1' ? unpadPkcs1(raw, type) : unpadOaep(raw, padding);
}

/**
 * Names the padding a raw block really carries, when it is not the expected one (or null).
 * Verified paddings come first: an OAEP block proves itself by its label hash, a v1.5 type 1 block
 * by eight or more FF bytes. PKCS#1 v1.5 type 2 framing is weak (about 1 random block in 260 passes
 * it; an OAEP block whose masked seed starts with 02 is one), so it is named last.
 */
export function identifyPadding(raw: Uint8Array): string | null {
  if (unpadPkcs1(raw, 1).ok) return 'PKCS#1 v1.5 block type 1 (private-key encryption)';
  const oaep = identifyOaep(raw);
  if (oaep) return oaep;
  if (unpadPkcs1(raw, 2).ok) return 'PKCS#1 v1.5 block type 2 (public-key encryption)';
  return null;
}

/** Names the OAEP variant a raw block verifiably carries (its label hash matches), or null. */
export function identifyOaep(raw: Uint8Array): string | null {
  if (unpadOaep(raw, 'oaep-sha1').ok) return 'OAEP with SHA-1 (profile padding: oaep-sha1)';
  if (unpadOaep(raw, 'oaep-sha256').ok) return 'OAEP with SHA-256 (profile padding: oaep-sha256)';
  if (unpadOaepMixed(raw))
    return "OAEP with SHA-256 and MGF1-SHA-1: Java's OAEPWithSHA-256AndMGF1Padding default; pass an OAEPParameterSpec with MGF1ParameterSpec.SHA256";
  return null;
}

/** Java's default for "OAEPWithSHA-256AndMGF1Padding": SHA-256 label hash, MGF1 over SHA-1. */
function unpadOaepMixed(raw: Uint8Array): boolean {
  const h = 32;
  if (raw.length < 2 * h + 2 || raw[0] !== 0x00) return false;
  const seed = Buffer.from(raw.subarray(1, 1 + h));
  const db = Buffer.from(raw.subarray(1 + h));
  xorInto(seed, mgf1(db, h, 'sha1'));
  xorInto(db, mgf1(seed, db.length, 'sha1'));
  if (!db.subarray(0, h).equals(createHash('sha256').digest())) return false;
  let i = h;
  while (i < db.length && db[i] === 0x00) i++;
  return i < db.length && db[i] === 0x01;
}
