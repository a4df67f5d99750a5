import fc, { type Arbitrary } from 'fast-check';
import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { maxPlaintextBlock, plaintextBlockSize, type Padding } from '../core/profile.js';
import { decodeBase64Strict, encodeBase64 } from '../crypto/base64.js';
import { encryptBlocks } from '../crypto/block-cipher.js';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import type { RsaPublicKey } from '../crypto/keys.js';
import { makeStrangerKeys } from '../runner/api.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';
import type { Property, Verdict } from './property.js';
import {
  asSent,
  judgeRefused,
  judgeValidAnswer,
  readEnvelope,
  sendData,
  validCases,
  type ServiceCase,
  type ServiceEnv,
} from './service-exchange.js';

/** One way to mangle a valid request's ciphertext or its Base64 text. */
type Mangle =
  | { op: 'bit-flip'; block: number; byte: number; bit: number }
  | { op: 'truncate'; bytes: number }
  | { op: 'swap-blocks'; a: number; b: number }
  | { op: 'duplicate-block'; a: number }
  | { op: 'other-padding' }
  | { op: 'other-key-size' }
  | { op: 'wrong-key' }
  | { op: 'base64'; variant: Base64Variant };

/** The Base64 variants: the first five lie outside the pattern; `missing-padding` and `non-canonical` match it (U-CRYPTO). */
type Base64Variant = 'url-safe' | 'line-breaks' | 'missing-padding' | 'whitespace' | 'plus-as-space' | 'non-canonical';

/** A valid case and how its encrypted form is mangled. */
interface MangledCase {
  base: ServiceCase;
  mangle: Mangle;
}

/** Every mangling, with small indexes that shrink toward the first block and byte. */
const MANGLES: Arbitrary<Mangle> = fc.oneof(
  fc.record({ op: fc.constant('bit-flip' as const), block: fc.nat(7), byte: fc.nat(511), bit: fc.nat(7) }),
  fc.record({ op: fc.constant('truncate' as const), bytes: fc.integer({ min: 1, max: 511 }) }),
  fc.record({ op: fc.constant('swap-blocks' as const), a: fc.nat(7), b: fc.nat(7) }),
  fc.record({ op: fc.constant('duplicate-block' as const), a: fc.nat(7) }),
  fc.constant({ op: 'other-padding' as const }),
  fc.constant({ op: 'other-key-size' as const }),
  fc.constant({ op: 'wrong-key' as const }),
  fc.record({
    op: fc.constant('base64' as const),
    variant: fc.constantFrom<Base64Variant>(
      'url-safe',
      'line-breaks',
      'missing-padding',
      'whitespace',
      'plus-as-space',
      'non-canonical',
    ),
  }),
);

interface Sealed {
  data: string;
  /** The plaintext the service would read if it decrypted the mangled data as the profile says (block moves only). */
  readable?: string;
  /**
   * The mangled data is one that no rule obliges the service to refuse (another padding; Base64
   * that matches the pattern, LENIENT_BASE64_REASONS): refusing it passes, accepting it is a
   * reading of U-CRYPTO (a warning). Says why, for the message.
   */
  open?: string;
}

/** Why a strict reader refuses this text (the codec's reason), or undefined when it reads it. */
export function base64Reason(text: string): CryptoFailureReason | undefined {
  try {
    decodeBase64Strict(text);
    return undefined;
  } catch (error) {
    if (error instanceof CryptoError) return error.reason;
    throw error;
  }
}

/** The text with the unused low bits of its last Base64 character set (the same bytes to a lenient decoder), or the text itself when no bit is unused. */
export function nonCanonical(text: string): string {
  const pad = /=*$/.exec(text)![0].length;
  if (pad === 0) return text;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const at = text.length - pad - 1;
  // One '=': the last character carries 2 unused bits; two: 4.
  const value = alphabet.indexOf(text[at]!) | 1;
  return text.slice(0, at) + alphabet[value]! + text.slice(at + 1);
}

/** Stranger keys of the other size, made once per process (a 2048-bit pair costs about 0.1 s of CPU): any pair not the target's will do. */
const OTHER_SIZE = new Map<number, RsaPublicKey>();

function otherSizeStranger(bits: number): RsaPublicKey {
  let key = OTHER_SIZE.get(bits);
  if (!key) OTHER_SIZE.set(bits, (key = makeStrangerKeys(bits).publicKey));
  return key;
}

type BlockMove = Extract<Mangle, { op: 'swap-blocks' | 'duplicate-block' }>;

/** Ciphertext blocks swapped or one duplicated; `readable` is the plaintext the service then reads. */
function moveBlocks(bytes: Buffer, plain: Buffer, blockBytes: number, plainBlock: number, mangle: BlockMove): Sealed {
  const count = bytes.length / blockBytes;
  const chunks = Array.from({ length: count }, (_, i) => ({
    cipher: bytes.subarray(i * blockBytes, (i + 1) * blockBytes),
    plain: plain.subarray(i * plainBlock, (i + 1) * plainBlock),
  }));
  const one = mangle.a % count;
  const other = mangle.op === 'swap-blocks' ? mangle.b % count : one;
  if (mangle.op === 'swap-blocks' && one !== other) [chunks[one], chunks[other]] = [chunks[other]!, chunks[one]!];
  else chunks.splice(one, 0, chunks[one]!);
  return {
    data: encodeBase64(Buffer.concat(chunks.map((chunk) => chunk.cipher))),
    readable: Buffer.concat(chunks.map((chunk) => chunk.plain)).toString('utf8'),
  };
}

/** The Base64 of a valid ciphertext spelt as `variant`; `open` when no rule obliges a refusal of it. */
function base64Variant(text: string, variant: Extract<Mangle, { op: 'base64' }>['variant']): Sealed {
  const variants: Record<typeof variant, string> = {
    'url-safe': text.replaceAll('+', '-').replaceAll('/', '_'),
    'line-breaks': text.replace(/(.{76})/g, '$1\r\n'),
    'missing-padding': text.replace(/=+$/, ''),
    whitespace: `${text.slice(0, 8)} ${text.slice(8)}`,
    'plus-as-space': text.replaceAll('+', ' '),
    'non-canonical': nonCanonical(text),
  };
  // A variant that changes nothing here (no '+' to replace) becomes inner whitespace, which always does.
  const data = variants[variant] === text ? variants.whitespace : variants[variant];
  // The one classification of Base64 failures says whether a rule obliges the service to refuse it.
  const reason = base64Reason(data);
  return reason && LENIENT_BASE64_REASONS.has(reason)
    ? { data, open: `Base64 matching the pattern (${reason})` }
    : { data };
}

/** The envelope data of `plainText` sealed for the target, then mangled. */
function mangledData(env: ServiceEnv, plainText: string, mangle: Mangle): Sealed {
  const { target } = env;
  const plain = Buffer.from(plainText, 'utf8');
  const key = target.publicKey;
  const padding = target.profile.padding;
  const size = plaintextBlockSize(target.profile, key.modulusBytes);
  const blockBytes = key.modulusBytes;
  const cipher = () => encryptBlocks(plain, key, padding, size);
  switch (mangle.op) {
    case 'bit-flip': {
      const bytes = cipher();
      const blocks = bytes.length / blockBytes;
      const at = (mangle.block % blocks) * blockBytes + (mangle.byte % blockBytes);
      bytes[at]! ^= 1 << mangle.bit;
      return { data: encodeBase64(bytes) };
    }
    case 'truncate': {
      const bytes = cipher();
      return { data: encodeBase64(bytes.subarray(0, Math.max(1, bytes.length - (mangle.bytes % blockBytes || 1)))) };
    }
    case 'swap-blocks':
    case 'duplicate-block':
      return moveBlocks(cipher(), plain, blockBytes, size, mangle);
    case 'other-padding': {
      const other: Padding = padding === 'pkcs1' ? 'oaep-sha1' : 'pkcs1';
      return {
        data: encodeBase64(encryptBlocks(plain, key, other, maxPlaintextBlock(other, blockBytes))),
        open: `another padding (${other})`,
      };
    }
    case 'other-key-size': {
      const stranger = otherSizeStranger(key.bits === 1024 ? 2048 : 1024);
      return {
        data: encodeBase64(encryptBlocks(plain, stranger, padding, maxPlaintextBlock(padding, stranger.modulusBytes))),
      };
    }
    case 'wrong-key':
      return { data: encodeBase64(encryptBlocks(plain, env.stranger.publicKey, padding, size)) };
    case 'base64':
      return base64Variant(encodeBase64(cipher()), mangle.variant);
  }
}

/**
 * Property 3: a valid plaintext, then its ciphertext mangled (a bit flipped in one block,
 * truncated, blocks swapped or duplicated, another padding, another key or key size, Base64
 * variants) is refused cleanly: never a success, never 5xx, always an answer.
 */
export function cryptoMangled(env: ServiceEnv): Property<MangledCase> {
  return {
    id: 'crypto-mangled',
    title: 'A valid plaintext with its ciphertext or Base64 mangled is refused cleanly',
    rules: ['ENERGY-DATA', 'ORDER-DATA', 'CRYPTO-ENVELOPE', 'ENV-CODE'],
    arbitrary: fc.record({ base: validCases(env.target), mangle: MANGLES }),
    async judge({ base, mangle }): Promise<Verdict> {
      const sent = asSent(env, base);
      const text = stringifyExact(sent);
      const result = mangledData(env, text, mangle);
      const exchange = await sendData(env, base.endpoint, result.data, text);
      const rules = [base.endpoint === 'energy' ? 'ENERGY-DATA' : 'ORDER-DATA', 'CRYPTO-ENVELOPE'];
      if (result.readable !== undefined && isJson(result.readable)) {
        // Blocks moved inside a string: the service reads another valid plaintext; only an answer is owed.
        const read = readEnvelope(exchange, rules);
        return 'ok' in read ? read : { ok: true, tag: 'still valid JSON' };
      }
      if (result.open !== undefined)
        return judgeOpen(exchange, base, sent, rules, `${describe(mangle)}: ${result.open}`);
      return judgeRefused(exchange, rules, `after ${describe(mangle)}`);
    },
  };
}

/**
 * Data no rule obliges the service to refuse: a refusal passes; an acceptance is a reading of
 * U-CRYPTO (a warning), provided the service then answers as any valid request demands (it read
 * the same plaintext). No answer, a 5xx or a broken success still fails.
 */
function judgeOpen(
  exchange: Parameters<typeof readEnvelope>[0],
  base: ServiceCase,
  sent: Record<string, ExactJson>,
  rules: string[],
  what: string,
): Verdict {
  const read = readEnvelope(exchange, rules);
  if ('ok' in read) return read;
  if ('refusedHttp' in read || read.code !== '0') return judgeRefused(exchange, rules, `after ${what}`);
  const valid = judgeValidAnswer(exchange, base, sent);
  if (!valid.ok) return { ...valid, message: `${valid.message} [after ${what}]` };
  return {
    ok: true,
    tag: 'accepted (U-CRYPTO)',
    warning: {
      message: `accepted ${what}: no rule obliges a service to refuse it (a strict reader does)`,
      rules: ['U-CRYPTO'],
      evidence: { exchanges: [{ request: exchange.request, response: exchange.response ?? null }] },
    },
  };
}

function isJson(text: string): boolean {
  try {
    parseExactJson(text);
    return true;
  } catch {
    return false;
  }
}

/** The mangling in words, for a message. */
function describe(mangle: Mangle): string {
  switch (mangle.op) {
    case 'bit-flip':
      return `a bit flip (block ${mangle.block}, byte ${mangle.byte}, bit ${mangle.bit})`;
    case 'truncate':
      return `truncation by ${mangle.bytes} bytes`;
    case 'swap-blocks':
      return `swapping blocks ${mangle.a} and ${mangle.b}`;
    case 'duplicate-block':
      return `duplicating block ${mangle.a}`;
    case 'base64':
      return `Base64 variant ${mangle.variant}`;
    default:
      return mangle.op;
  }
}
