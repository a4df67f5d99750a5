import { createHash, createPrivateKey } from 'node:crypto';
import { createLiteralIndex } from './literal-index.js';

/**
 * Fingerprints and scrubbing of secrets (issue 12): every configured secret is replaced, wherever it
 * appears in a report or a console line and in whatever escaping the text gives it, by a short
 * fingerprint such as `ak…#3f9c`. A fingerprint is a kind prefix and 4 hex digits of the secret's
 * sha256: two runs with the same key show the same fingerprint, and no character of the secret shows.
 */

/**
 * What a secret is: `ak` API key, `ct` control token, `fk` forbidden key, `ek` expired key, `nk` not-yet-valid key,
 * `bt` Pact Broker token, `pt` probe token, `pk` private key material; found without being configured: `pw` a URL's
 * password, `qt` a token in a URL query, `au` an Authorization credential.
 */
export type SecretKind = 'ak' | 'ct' | 'fk' | 'ek' | 'nk' | 'bt' | 'pt' | 'pk' | 'pw' | 'qt' | 'au';

/** One secret to scrub. For `pk`, `value` is the key as PEM or bare Base64 DER. */
export interface Secret {
  kind: SecretKind;
  value: string;
  /** The fingerprint to show instead of the value's own: one key in two encodings shows as one. */
  shownAs?: string;
}

/** Replaces secrets in text and in plain data (objects, arrays, strings). */
export interface Scrubber {
  /** The text with every secret replaced by its fingerprint. */
  text(input: string): string;
  /** A copy of plain data with every string scrubbed; class instances (exact numbers) are kept as they are. */
  value<T>(input: T): T;
}

/** A fingerprint's shape: its kind (two letters), `…#` and four hex digits of its hash. */
const KIND = '[a-z]{2}';
const HASH = '[0-9a-f]{4}';
const SHAPE = `${KIND}…#${HASH}`;

/** A fingerprint standing as a word, its kind and hash captured. */
const FINGERPRINT = new RegExp(`\\b(${KIND})…#(${HASH})\\b`, 'g');

/** A fingerprint already in a text, wherever it stands (a scrubbed secret may sit right against other text). */
const SHOWN = new RegExp(SHAPE, 'g');

/** A text that is one fingerprint and nothing else. */
const ONLY_A_FINGERPRINT = new RegExp(`^${SHAPE}$`);

/**
 * A fingerprint with the last group of a Base64 rendering behind it (one to three characters before
 * `=` padding). That group depends on the bytes after the secret, so neither a spelling nor a window
 * of the secret holds it, and it stayed behind the fingerprint (`pk…#3f9cEw==`).
 */
const PADDED_TAIL = new RegExp(`(${SHOWN.source})[A-Za-z0-9+/_-]{1,3}(?==)`, 'g');

/**
 * Runs `scrub` on the text between the fingerprints already in it. A fingerprint's letters and hash
 * digits are Base64 characters: without this, a Base64 run or a window of a secret beside one took
 * in its kind or its hash, and the fingerprint came out cut (`k…#3f9c`, `…#3f9c`).
 */
function betweenFingerprints(text: string, scrub: (part: string) => string): string {
  if (!text.includes('…#')) return scrub(text);
  let out = '';
  let from = 0;
  for (const match of text.matchAll(SHOWN)) {
    out += scrub(text.slice(from, match.index)) + match[0];
    from = match.index + match[0].length;
  }
  return out + scrub(text.slice(from));
}

/** Fingerprints already computed, by kind and secret: a bounded memo, never output. */
const fingerprints = new Map<string, string>();

/**
 * The fingerprint of a secret: kind, an ellipsis, and the first 4 hex digits of its sha256.
 *
 * @example fingerprint('sk_live_4242', 'ak') // 'ak…#' + 4 hex digits
 */
export function fingerprint(secret: string, kind: SecretKind): string {
  const key = `${kind}:${secret}`;
  let shown = fingerprints.get(key);
  if (shown === undefined) {
    shown = `${kind}…#${createHash('sha256')
      .update(kind === 'pk' ? keyBody(secret) : secret)
      .digest('hex')
      .slice(0, 4)}`;
    // The runner fingerprints the same few keys on every exchange: the memo holds up to 256 (emptied when full).
    if (fingerprints.size >= 256) fingerprints.clear();
    fingerprints.set(key, shown);
  }
  return shown;
}

/** The Base64 of a key without PEM armour or white space, so PEM and bare DER of one key fingerprint alike. */
function keyBody(text: string): string {
  return text.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '').replace(/\\[rn]|\s/g, '');
}

function escapeHtml(text: string, apostrophe: string): string {
  if (!/[&<>"']/.test(text)) return text;
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, apostrophe);
}

function jsonEscaped(text: string): string[] {
  const plain = JSON.stringify(text).slice(1, -1);
  // eslint-disable-next-line no-control-regex
  const ascii = plain.replace(/[^\u0000-\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [plain, plain.replace(/\//g, '\\/'), ascii];
}

/**
 * Every spelling a secret can take in a report or a log line: raw, percent-encoded (upper- and
 * lower-case hex, and as a form value), JSON-escaped once or twice (a JSON body inside report.json),
 * and each of those HTML/XML-escaped.
 */
export function spellings(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  // Each stage drops its repeats (most spellings of Base64 text are alike): the list, in its order, is
  // the same as without, and a PEM key's spellings are not escaped 64 times over.
  const unique = (list: string[]) => [...new Set(list)];
  const wire = unique([secret, encoded, encoded.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), new URLSearchParams({ s: secret }).toString().slice(2)]);
  const json = unique(wire.flatMap((w) => [w, ...jsonEscaped(w)]));
  const twice = unique(json.flatMap((j) => [j, ...jsonEscaped(j)]));
  const all = twice.flatMap((t) => [t, escapeHtml(t, '&#39;'), escapeHtml(t, '&#x27;')]);
  return unique(all).filter((s) => s.length > 0);
}

/** Length of the windows scrubbed by value: any run of this many characters of any rendering of a secret. */
export const WINDOW = 8;

/** Base64 of `bytes` as it shows inside a longer Base64 text at each of the 3 byte alignments (the characters that only depend on `bytes`). */
function base64Alignments(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // The first characters mix in the padding bytes; the last one may be a partial group.
    const from = Math.ceil((shift * 4) / 3);
    const full = Math.floor(((shift + bytes.length) * 4) / 3);
    out.push(padded.slice(from, full));
  }
  return out;
}

/**
 * Every rendering of a secret's bytes that a target can echo: the spellings (raw, percent-encoded,
 * JSON- and HTML-escaped), Base64 at every alignment (standard and URL-safe), and hex. Matching is
 * blind to ASCII letter case, and any {@link WINDOW}-character run of one of them is scrubbed.
 *
 * @example renderings('sk_live_4242').includes(Buffer.from('sk_live_4242').toString('hex')) // true
 */
export function renderings(secret: string | Buffer): string[] {
  return [
    ...new Set([
      ...(typeof secret === 'string' ? spellings(secret) : []),
      ...byteRenderings(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret),
    ]),
  ];
}

/** The renderings of bytes as text: Base64 at every alignment, standard and URL-safe, and hex. */
function byteRenderings(bytes: Buffer): string[] {
  const base64 = base64Alignments(bytes);
  const urlSafe = base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_'));
  return [...new Set([...base64, ...urlSafe, bytes.toString('hex')])].filter((r) => r.length > 0);
}

/**
 * The private parts of an RSA private key as bytes: the private exponent, the primes and the CRT
 * values (d, p, q, dp, dq, qi). The modulus and the public exponent are public and are not scrubbed.
 */
function privateParts(text: string): Buffer[] {
  let jwk: Record<string, unknown>;
  try {
    const key = /PRIVATE KEY/.test(text) ? createPrivateKey(text) : createPrivateKeyFromDer(keyBody(text));
    if (!key) return [];
    jwk = key.export({ format: 'jwk' }) as Record<string, unknown>;
  } catch {
    return [];
  }
  return ['d', 'p', 'q', 'dp', 'dq', 'qi'].flatMap((name) => (typeof jwk[name] === 'string' ? [Buffer.from(jwk[name], 'base64url')] : []));
}

function createPrivateKeyFromDer(base64: string): ReturnType<typeof createPrivateKey> | undefined {
  const der = Buffer.from(base64, 'base64');
  for (const type of ['pkcs8', 'pkcs1'] as const) {
    try {
      return createPrivateKey({ key: der, format: 'der', type });
    } catch {
      // not this encoding
    }
  }
  return undefined;
}

/** A window that reads as text: lower-case letters (one leading capital) and separators, no digit, no other mix of case. */
const WORDLIKE = /^[A-Za-z]?[a-z]*(?:[-_. /:][a-z]*)*$/;

/** ASCII letters lower-cased, every other character kept: the length never changes (unlike toLowerCase). */
function foldAscii(text: string): string {
  // An ASCII text folds as toLowerCase does; outside ASCII, toLowerCase would change more than letters A-Z (and lengths).
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u007f]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text.toLowerCase();
}

/** The pieces of a private key that must never show: the whole Base64 body, and each of its PEM lines. */
function keyPieces(text: string): string[] {
  const body = keyBody(text);
  const lines = text
    .replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '\n')
    .split(/\\r\\n|\\n|\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= 16);
  return [body, ...lines];
}

/** Secrets shorter than this are scrubbed as whole words only. */
const SHORT = 6;
/** How many first characters of a secret, cut short, are still scrubbed. */
const TRUNCATED_MIN = 6;
const PEM_PRIVATE = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
// A private key's DER starts with a SEQUENCE of two-byte length: Base64 "MII", maybe in PEM lines.
const DER_CANDIDATE = /MII[A-Za-z0-9+/]{200,}={0,2}(?:(?:\\r\\n|\\n|\r?\n)[A-Za-z0-9+/]+={0,2})*/g;
// A value that is a fingerprint already is matched first and kept.
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:"'<>]*:)([a-z]{2}…#[0-9a-f]{4}|[^\s/?#@"'<>]+)(@)/gi;
const QUERY_TOKEN = /([?&](?:access_token|token|api[_-]?key|apikey|key|secret|password|signature|sig|auth)=)([a-z]{2}…#[0-9a-f]{4}|[^&\s"'<>#]+)/gi;
const AUTHORIZATION = /(authorization\W{0,12}(?:Bearer|Basic)\s+)([a-z]{2}…#[0-9a-f]{4}|[A-Za-z0-9._~+/-]+=*)/gi;
const BASE64_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;

function isPrivateKeyDer(base64: string): boolean {
  const der = Buffer.from(base64, 'base64');
  for (const type of ['pkcs8', 'pkcs1'] as const) {
    try {
      createPrivateKey({ key: der, format: 'der', type });
      return true;
    } catch {
      // not this encoding
    }
  }
  return false;
}

/**
 * A scrubber for these secrets. Besides them, it always removes what is a secret by its form:
 * private keys (PEM blocks and bare Base64 DER), a URL's password, token-like query parameters,
 * Bearer and Basic credentials, and Base64 text that decodes to a configured secret.
 *
 * @example createScrubber([{ kind: 'ak', value: key }]).text(`x-api-key: ${key}`) // 'x-api-key: ak…#....'
 */
export function createScrubber(secrets: readonly Secret[]): Scrubber {
  const replacement = new Map<string, string>();
  const byHash = new Map<string, SecretKind | null>();
  const raw: Array<{ value: string; shown: string }> = [];
  for (const secret of secrets) {
    if (secret.value.length === 0) continue;
    const shown = secret.shownAs ?? fingerprint(secret.value, secret.kind);
    const hash = shown.slice(-4);
    byHash.set(hash, byHash.has(hash) && byHash.get(hash) !== secret.kind ? null : secret.kind);
    const pieces = secret.kind === 'pk' ? [secret.value.trim(), ...keyPieces(secret.value)] : [secret.value];
    for (const piece of pieces) {
      raw.push({ value: piece, shown });
      for (const spelling of spellings(piece)) if (!replacement.has(spelling)) replacement.set(spelling, shown);
    }
  }
  // Every spelling, found in one pass: leftmost, longest at its position, none overlapping. A short
  // value (a test key such as `k`) is replaced only as a whole word: as a substring it would eat every `k` of the text.
  const known = createLiteralIndex(replacement, SHORT);
  // A message cut short (`slice(0, 200) + '…'`) can end inside a secret: its first characters are found by their head.
  const heads = new Map<string, string[]>();
  for (const spelling of replacement.keys()) {
    if (spelling.length < TRUNCATED_MIN + 2) continue;
    const head = spelling.slice(0, TRUNCATED_MIN);
    heads.set(head, [...(heads.get(head) ?? []), spelling]);
  }
  const truncated = createLiteralIndex(heads, 0);
  const cutShort = (input: string): string => {
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

  // Scrubbing by value: every WINDOW-character run of every rendering (letter case folded) of every
  // secret, indexed once per scrubber (one per run), so a report costs one pass over its text.
  const windows = new Map<string, string>();
  // A rendering met again (a key given as PKCS#8 and as PKCS#1 has the same private parts) adds no window: the first shown wins.
  const indexed = new Set<string>();
  for (const secret of secrets) {
    if (secret.value.length < SHORT) continue;
    const shown = secret.shownAs ?? fingerprint(secret.value, secret.kind);
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
        if (!windows.has(window)) windows.set(window, shown);
      }
    }
  }
  // A filter on each window's first 4 characters (7 bits each, one integer, letter case folded as
  // the text is read), so most positions of a text cost one bit test and no substring: a bit per
  // hashed integer first, then the set itself. Lossy for non-ASCII: a false hit only costs a lookup.
  const code4 = (text: string, at: number) =>
    ((text.charCodeAt(at) & 0x7f) << 21) |
    ((text.charCodeAt(at + 1) & 0x7f) << 14) |
    ((text.charCodeAt(at + 2) & 0x7f) << 7) |
    (text.charCodeAt(at + 3) & 0x7f);
  const heads4 = new Set<number>([...windows.keys()].map((window) => code4(window, 0)));
  const HASH_BITS = 20;
  const bit = (code: number) => Math.imul(code, 0x9e3779b1) >>> (32 - HASH_BITS);
  const headBits = new Uint32Array(1 << (HASH_BITS - 5));
  for (const code of heads4) headBits[bit(code) >>> 5]! |= 1 << (bit(code) & 31);
  /** A character code with ASCII upper-case letters folded to lower case, 7 bits kept. */
  const folded7 = (text: string, at: number) => {
    const c = text.charCodeAt(at);
    return (c >= 65 && c <= 90 ? c | 0x20 : c) & 0x7f;
  };
  const byValue = (input: string): string => {
    if (windows.size === 0 || input.length < WINDOW) return input;
    let out = '';
    let from = 0;
    let runEnd = -1;
    let runStart = -1;
    let runShown = '';
    let code = (folded7(input, 0) << 14) | (folded7(input, 1) << 7) | folded7(input, 2);
    for (let i = 0; i + WINDOW <= input.length; i++) {
      code = ((code << 7) | folded7(input, i + 3)) & 0xfffffff;
      const h = bit(code);
      if ((headBits[h >>> 5]! & (1 << (h & 31))) === 0 || !heads4.has(code)) continue;
      const shown = windows.get(foldAscii(input.slice(i, i + WINDOW)));
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
  };

  // Base64 text decoded is searched for these (the configured values and key pieces of SHORT characters or more).
  const decodable = raw.filter((secret) => secret.value.length >= SHORT);
  const shortestDecodable = Math.min(...decodable.map((secret) => secret.value.length));
  const isFingerprint = (text: string) => ONLY_A_FINGERPRINT.test(text);
  const text = (input: string): string => {
    // Whole PEM blocks first: one fingerprint per key, the same however its lines were joined.
    // Each pattern pass is skipped when the text lacks a literal its pattern cannot match without.
    let out = input.includes('-----BEGIN ') ? input.replace(PEM_PRIVATE, (block) => fingerprint(block, 'pk')) : input;
    out = known.replace(out, (match) => match.value);
    if (out.includes('MII')) out = out.replace(DER_CANDIDATE, (run) => (isPrivateKeyDer(keyBody(run)) ? fingerprint(run, 'pk') : run));
    out = cutShort(out);
    if (out.includes('://'))
      out = out.replace(
        USERINFO,
        (_m, head: string, password: string, at: string) => `${head}${isFingerprint(password) ? password : fingerprint(safeDecode(password), 'pw')}${at}`,
      );
    if (out.includes('='))
      out = out.replace(QUERY_TOKEN, (_m, head: string, token: string) => `${head}${isFingerprint(token) ? token : fingerprint(safeDecode(token), 'qt')}`);
    out = out.replace(
      AUTHORIZATION,
      (_m, head: string, credential: string) => `${head}${isFingerprint(credential) ? credential : fingerprint(credential, 'au')}`,
    );
    if (decodable.length > 0 && out.length >= 12) {
      out = betweenFingerprints(out, (part) =>
        part.replace(BASE64_RUN, (run) => {
          // Too short to hold the shortest secret once decoded: no need to decode it.
          if (Math.floor((run.length * 3) / 4) < shortestDecodable) return run;
          const decoded = Buffer.from(run.includes('-') || run.includes('_') ? run.replace(/-/g, '+').replace(/_/g, '/') : run, 'base64').toString('latin1');
          return decodable.find((secret) => secret.value.length <= decoded.length && decoded.includes(secret.value))?.shown ?? run;
        }),
      );
    }
    out = betweenFingerprints(out, byValue);
    if (out.includes('…#')) out = out.replace(PADDED_TAIL, '$1');
    // The runner's own redaction knows no kinds (every X-API-KEY shows as `ak`): name the configured ones right.
    if (!out.includes('…#')) return out;
    return out.replace(FINGERPRINT, (shown, kind: string, hash: string) => {
      const right = byHash.get(hash);
      return right && right !== kind ? `${right}…#${hash}` : shown;
    });
  };

  // A report repeats its strings (keys, statuses, rule ids, the same request in every case): each
  // distinct string of one value() call is scrubbed once. The memo lives as long as the call.
  const value = <T>(input: T): T => {
    const done = new Map<string, string>();
    const once = (item: string): string => {
      let out = done.get(item);
      if (out === undefined) {
        out = text(item);
        done.set(item, out);
      }
      return out;
    };
    const walk = (item: unknown): unknown => {
      if (typeof item === 'string') return once(item);
      if (Array.isArray(item)) return item.map(walk);
      if (item !== null && typeof item === 'object') {
        const proto = Object.getPrototypeOf(item) as unknown;
        if (proto !== Object.prototype && proto !== null) return item;
        return Object.fromEntries(Object.entries(item).map(([k, v]) => [once(k), walk(v)]));
      }
      return item;
    };
    return walk(input) as T;
  };
  return { text, value };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
