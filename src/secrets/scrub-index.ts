import { createLiteralIndex } from './literal-index.js';
import {
  byteRenderings,
  foldAscii,
  keyPieces,
  privateParts,
  spellings,
  WINDOW,
  WORDLIKE,
} from './secret-renderings.js';

/**
 * The indexes a scrubber builds once for its secrets, each a replacement over a text: the
 * spellings (leftmost-longest literal match), the heads of spellings cut short, and the
 * {@link WINDOW}-character runs of every rendering. scrub.ts runs them in order.
 */

/** A configured secret with the fingerprint it shows as. */
interface ShownSecret {
  kind: string;
  value: string;
  shown: string;
}

/** Secrets shorter than this are scrubbed as whole words only. */
export const SHORT = 6;
/** How many first characters of a secret, cut short, are still scrubbed. */
const TRUNCATED_MIN = 6;

/** Every spelling of every secret (a private key's pieces too) and the fingerprint that replaces it; the first secret wins a spelling. */
export function spellingReplacements(secrets: readonly ShownSecret[]): {
  replacement: Map<string, string>;
  raw: Array<{ value: string; shown: string }>;
} {
  const replacement = new Map<string, string>();
  const raw: Array<{ value: string; shown: string }> = [];
  for (const secret of secrets) {
    const pieces = secret.kind === 'pk' ? [secret.value.trim(), ...keyPieces(secret.value)] : [secret.value];
    for (const piece of pieces) {
      raw.push({ value: piece, shown: secret.shown });
      for (const spelling of spellings(piece)) if (!replacement.has(spelling)) replacement.set(spelling, secret.shown);
    }
  }
  return { replacement, raw };
}

/**
 * A message cut short (`slice(0, 200) + '…'`) can end inside a secret: its first characters are
 * found by their head and replaced when the text stops there.
 */
export function truncationScrubber(replacement: ReadonlyMap<string, string>): (input: string) => string {
  const heads = new Map<string, string[]>();
  for (const spelling of replacement.keys()) {
    if (spelling.length < TRUNCATED_MIN + 2) continue;
    const head = spelling.slice(0, TRUNCATED_MIN);
    heads.set(head, [...(heads.get(head) ?? []), spelling]);
  }
  const truncated = createLiteralIndex(heads, 0);
  return (input: string): string => {
    if (truncated.size === 0) return input;
    let out = '';
    let from = 0;
    for (let at = 0; at < input.length;) {
      const head = truncated.at(input, at);
      if (head === undefined) {
        at++;
        continue;
      }
      let best = '';
      for (const spelling of head.value) {
        let k = TRUNCATED_MIN;
        while (k < spelling.length && input[at + k] === spelling[k]) k++;
        if (k > best.length) best = spelling.slice(0, k);
      }
      // Cut short means the text stops there: a word going on (`forbidden-key` beside the key `forbidden-8f3a…`) is not the secret.
      const next = input[at + best.length];
      if (next !== undefined && /[A-Za-z0-9]/.test(next)) {
        at++;
        continue;
      }
      out += input.slice(from, at) + (replacement.get(head.value.find((s) => s.startsWith(best))!) ?? '');
      from = at + best.length;
      at = from;
    }
    return out + input.slice(from);
  };
}

/**
 * Every WINDOW-character run of every rendering (letter case folded) of every secret, and the
 * fingerprint it stands for: indexed once per scrubber (one per run), so a report costs one pass.
 */
function indexWindows(secrets: readonly ShownSecret[]): Map<string, string> {
  const windows = new Map<string, string>();
  // A rendering met again (a key given as PKCS#8 and as PKCS#1 has the same private parts) adds no window: the first shown wins.
  const indexed = new Set<string>();
  for (const secret of secrets) {
    if (secret.value.length < SHORT) continue;
    const sources =
      secret.kind === 'pk'
        ? privateParts(secret.value).flatMap((part) => byteRenderings(part).map((text) => ({ text, wordy: false })))
        : [
            ...spellings(secret.value).map((text) => ({ text, wordy: true })),
            ...byteRenderings(Buffer.from(secret.value, 'utf8')).map((text) => ({ text, wordy: false })),
          ];
    for (const { text: rendering, wordy } of sources) {
      if (indexed.has(`${wordy ? 'w' : 'b'}${rendering}`)) continue;
      indexed.add(`${wordy ? 'w' : 'b'}${rendering}`);
      const folded = foldAscii(rendering);
      for (let i = 0; i + WINDOW <= folded.length; i++) {
        // A window of the secret's text that reads as a word (the readable prefix of a key such as
        // `forbidden-8f3a…`) would scrub that word everywhere: only its random-looking windows are
        // indexed. Encoded bytes (hex, Base64) are indexed whole: `deadbeef` is a window of hex.
        if (wordy && WORDLIKE.test(rendering.slice(i, i + WINDOW))) continue;
        const window = folded.slice(i, i + WINDOW);
        if (!windows.has(window)) windows.set(window, secret.shown);
      }
    }
  }
  return windows;
}

/** Bits of the hash that picks a window head's bit in the filter. */
const HASH_BITS = 20;

/** A window's first 4 characters as one integer, 7 bits each. */
function code4(text: string, at: number): number {
  return (
    ((text.charCodeAt(at) & 0x7f) << 21) |
    ((text.charCodeAt(at + 1) & 0x7f) << 14) |
    ((text.charCodeAt(at + 2) & 0x7f) << 7) |
    (text.charCodeAt(at + 3) & 0x7f)
  );
}

/** A character code with ASCII upper-case letters folded to lower case, 7 bits kept. */
function folded7(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return (c >= 65 && c <= 90 ? c | 0x20 : c) & 0x7f;
}

const bit = (code: number) => Math.imul(code, 0x9e3779b1) >>> (32 - HASH_BITS);

/**
 * Scrubbing by value: replaces every run of overlapping windows of a secret's renderings by the
 * fingerprint of the first. A filter on each window's first 4 characters (letter case folded as
 * the text is read) makes most positions of a text cost one bit test and no substring: a bit per
 * hashed integer first, then the set itself. Lossy for non-ASCII: a false hit only costs a lookup.
 */
export class WindowIndex {
  readonly #windows: Map<string, string>;
  readonly #heads: Set<number>;
  readonly #headBits = new Uint32Array(1 << (HASH_BITS - 5));

  constructor(secrets: readonly ShownSecret[]) {
    this.#windows = indexWindows(secrets);
    this.#heads = new Set<number>([...this.#windows.keys()].map((window) => code4(window, 0)));
    for (const code of this.#heads) this.#headBits[bit(code) >>> 5]! |= 1 << (bit(code) & 31);
  }

  /** The fingerprint of the window of `input` at `i`, when it is one of a secret; `code` holds its first 4 characters. */
  #at(input: string, i: number, code: number): string | undefined {
    const h = bit(code);
    if ((this.#headBits[h >>> 5]! & (1 << (h & 31))) === 0 || !this.#heads.has(code)) return undefined;
    return this.#windows.get(foldAscii(input.slice(i, i + WINDOW)));
  }

  /** The text with each run of secret windows replaced by one fingerprint. */
  replace(input: string): string {
    if (this.#windows.size === 0 || input.length < WINDOW) return input;
    let out = '';
    let from = 0;
    let runEnd = -1;
    let runStart = -1;
    let runShown = '';
    let code = (folded7(input, 0) << 14) | (folded7(input, 1) << 7) | folded7(input, 2);
    for (let i = 0; i + WINDOW <= input.length; i++) {
      code = ((code << 7) | folded7(input, i + 3)) & 0xfffffff;
      const shown = this.#at(input, i, code);
      if (shown === undefined) continue;
      if (i <= runEnd) runEnd = i + WINDOW;
      else {
        if (runStart >= 0) {
          out += input.slice(from, runStart) + runShown;
          from = runEnd;
        }
        runStart = i;
        runEnd = i + WINDOW;
        runShown = shown;
      }
    }
    if (runStart < 0) return input;
    return out + input.slice(from, runStart) + runShown + input.slice(runEnd);
  }
}
