import { constants, privateDecrypt, privateEncrypt, publicDecrypt, publicEncrypt } from 'node:crypto';
import { createRequire } from 'node:module';
import type forge from 'node-forge';
import type { Padding } from '../core/profile.js';
import type { RsaKey } from './keys.js';
import { identifyOaep, identifyPadding, padOaep, unpad, type Unpadded } from './padding.js';

/** What went wrong with one block, before the block cipher adds where it was. */
export interface BlockFailure {
  kind: 'wrong-key' | 'padding-mismatch' | 'bad-padding';
  detail: string;
}

/** The outcome of decrypting one block. */
export type BlockResult = { ok: true; message: Buffer } | { ok: false; failure: BlockFailure };

/**
 * One RSA block operation at a time. Two engines implement it: `native` (node:crypto, the hot
 * path) and `forge` (node-forge, pure JavaScript, an independent second opinion). They agree byte
 * for byte where padding is deterministic (private-key PKCS#1 type 1), which the tests prove.
 */
export interface RsaEngine {
  readonly name: 'native' | 'forge';
  /** Encrypts at most one block's worth of plaintext with either half into exactly k bytes. */
  encryptBlock(block: Uint8Array, key: RsaKey, padding: Padding): Buffer;
  /** Decrypts one k-byte block with either half; a failure is data, not an exception. */
  decryptBlock(block: Uint8Array, key: RsaKey, padding: Padding): BlockResult;
}

const OAEP_HASH = { 'oaep-sha1': 'sha1', 'oaep-sha256': 'sha256' } as const;

/** A block that carries another padding than the profile's: `carried` names it; `type` is the v1.5 block type this half opens. */
function mismatch(carried: string, expected: Padding, type: 1 | 2): BlockFailure {
  const name =
    expected === 'pkcs1'
      ? `pkcs1 (PKCS#1 v1.5 block type ${type}, ${type === 1 ? 'private' : 'public'}-key encryption)`
      : expected;
  return { kind: 'padding-mismatch', detail: `the block carries ${carried}, but the profile expects ${name}` };
}

function diagnose(raw: Uint8Array, expected: Padding, type: 1 | 2, unpadded: Unpadded & { ok: false }): BlockFailure {
  const actual = identifyPadding(raw);
  if (actual) return mismatch(actual, expected, type);
  if (raw[0] === 0x00 && (raw[1] === 0x01 || raw[1] === 0x02) && expected === 'pkcs1') {
    return { kind: 'bad-padding', detail: `malformed PKCS#1 v1.5 padding: ${unpadded.problem}` };
  }
  return {
    kind: 'wrong-key',
    detail:
      'no known padding after decryption: the data was encrypted under another key pair, with the other half of this pair, or altered',
  };
}

/** node:crypto: native speed; raw RSA plus our own unpadding wherever Node lacks an operation. */
export const nativeEngine: RsaEngine = {
  name: 'native',
  encryptBlock(block, key, padding) {
    if (key.half === 'public') {
      return padding === 'pkcs1'
        ? publicEncrypt({ key: key.keyObject, padding: constants.RSA_PKCS1_PADDING }, block)
        : publicEncrypt(
            { key: key.keyObject, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: OAEP_HASH[padding] },
            block,
          );
    }
    return padding === 'pkcs1'
      ? privateEncrypt({ key: key.keyObject, padding: constants.RSA_PKCS1_PADDING }, block)
      : privateEncrypt(
          { key: key.keyObject, padding: constants.RSA_NO_PADDING },
          padOaep(block, key.modulusBytes, padding),
        );
  },
  decryptBlock(block, key, padding) {
    let raw: Buffer;
    try {
      raw =
        key.half === 'public'
          ? publicDecrypt({ key: key.keyObject, padding: constants.RSA_NO_PADDING }, block)
          : privateDecrypt({ key: key.keyObject, padding: constants.RSA_NO_PADDING }, block);
    } catch {
      // OpenSSL refuses a block whose integer is not below this key's modulus.
      return {
        ok: false,
        failure: {
          kind: 'wrong-key',
          detail: "the block's value exceeds this key's modulus: it was encrypted under another key pair",
        },
      };
    }
    const type = key.half === 'public' ? 1 : 2;
    const unpadded = unpad(raw, padding, type);
    if (!unpadded.ok) return { ok: false, failure: diagnose(raw, padding, type, unpadded) };
    if (padding === 'pkcs1' && type === 2) {
      // v1.5 type 2 framing also fits about 1 OAEP block in 260. An OAEP label hash that matches
      // cannot be chance (2^-160), so such a block was sealed with OAEP, not with v1.5 padding.
      const oaep = identifyOaep(raw);
      if (oaep) return { ok: false, failure: mismatch(oaep, padding, type) };
    }
    return unpadded;
  },
};

// node-forge's raw RSA and OAEP helpers exist at run time but not in @types/node-forge.
interface ForgeRsaInternals {
  encrypt(m: string, key: unknown, bt: 0x01 | 0x02 | boolean): string;
  decrypt(ed: string, key: unknown, pub: boolean, ml?: boolean): string;
}
interface ForgePkcs1 {
  encode_rsa_oaep(key: unknown, message: string, options: object): string;
  decode_rsa_oaep(key: unknown, em: string, options: object): string;
}

// node-forge (about 1 MB of JavaScript) loads on the forge engine's first use, not with every CLI
// command: the native engine is the hot path.
const requireModule = createRequire(import.meta.url);
let forgeModule: typeof forge | undefined;
const forgeLib = (): typeof forge => (forgeModule ??= requireModule('node-forge') as typeof forge);
const forgeRsa = (): ForgeRsaInternals => (forgeLib().pki as unknown as { rsa: ForgeRsaInternals }).rsa;
const forgePkcs1 = (): ForgePkcs1 => (forgeLib() as unknown as { pkcs1: ForgePkcs1 }).pkcs1;

type ForgeKey = forge.pki.rsa.PrivateKey | forge.pki.rsa.PublicKey;
const forgeKeys = new WeakMap<RsaKey, ForgeKey>();

function forgeKey(key: RsaKey): ForgeKey {
  let converted = forgeKeys.get(key);
  if (!converted) {
    converted =
      key.half === 'private'
        ? forgeLib().pki.privateKeyFromPem(key.keyObject.export({ type: 'pkcs1', format: 'pem' }).toString())
        : forgeLib().pki.publicKeyFromPem(key.keyObject.export({ type: 'spki', format: 'pem' }).toString());
    forgeKeys.set(key, converted);
  }
  return converted;
}

function oaepOptions(padding: Padding): object {
  const md = () => (padding === 'oaep-sha1' ? forgeLib().md.sha1.create() : forgeLib().md.sha256.create());
  return { md: md(), mgf1: { md: md() } };
}

const toBinary = (bytes: Uint8Array): string => Buffer.from(bytes).toString('binary');
const fromBinary = (text: string): Buffer => Buffer.from(text, 'binary');

/** node-forge: pure JavaScript with its own padding code; ~80x slower, kept off hot paths. */
export const forgeEngine: RsaEngine = {
  name: 'forge',
  encryptBlock(block, key, padding) {
    const fk = forgeKey(key);
    const m = toBinary(block);
    if (key.half === 'public') {
      const pub = fk as forge.pki.rsa.PublicKey;
      return fromBinary(
        padding === 'pkcs1' ? pub.encrypt(m, 'RSAES-PKCS1-V1_5') : pub.encrypt(m, 'RSA-OAEP', oaepOptions(padding)),
      );
    }
    if (padding === 'pkcs1') return fromBinary(forgeRsa().encrypt(m, fk, 0x01));
    return fromBinary(forgeRsa().encrypt(forgePkcs1().encode_rsa_oaep(fk, m, oaepOptions(padding)), fk, false));
  },
  decryptBlock(block, key, padding) {
    const fk = forgeKey(key);
    const ed = toBinary(block);
    try {
      if (key.half === 'private') {
        const priv = fk as forge.pki.rsa.PrivateKey;
        const m =
          padding === 'pkcs1'
            ? priv.decrypt(ed, 'RSAES-PKCS1-V1_5')
            : priv.decrypt(ed, 'RSA-OAEP', oaepOptions(padding));
        return { ok: true, message: fromBinary(m) };
      }
      const m =
        padding === 'pkcs1'
          ? forgeRsa().decrypt(ed, fk, true)
          : forgePkcs1().decode_rsa_oaep(fk, forgeRsa().decrypt(ed, fk, true, false), oaepOptions(padding));
      return { ok: true, message: fromBinary(m) };
    } catch (error) {
      return { ok: false, failure: { kind: 'bad-padding', detail: `node-forge: ${(error as Error).message}` } };
    }
  },
};
