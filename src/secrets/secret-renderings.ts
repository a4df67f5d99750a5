import { createPrivateKey } from 'node:crypto';

/**
 * Every form a secret can take in a text: its spellings (raw, percent-encoded, JSON- and
 * HTML-escaped), its bytes as Base64 at every alignment and as hex, the private parts of a key.
 * The scrubber indexes these once per set of secrets (scrub-index.ts).
 */

/** The Base64 of a key without PEM armour or white space, so PEM and bare DER of one key fingerprint alike. */
export function keyBody(text: string): string {
  return text.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '').replace(/\\[rn]|\s/g, '');
}

function escapeHtml(text: string, apostrophe: string): string {
  if (!/[&<>"']/.test(text)) return text;
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, apostrophe);
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
  const wire = unique([
    secret,
    encoded,
    encoded.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ]);
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
    // The first characters mix in the padding bytes; the last one may be a partial group, whose
    // value depends on what follows the secret. Alone (a JWK field, the Base64 of one key part)
    // nothing follows: that ending is a rendering too, or its last window would go unscrubbed.
    const from = Math.ceil((shift * 4) / 3);
    const full = Math.floor(((shift + bytes.length) * 4) / 3);
    out.push(padded.slice(from, full));
    if (padded.length > full) out.push(padded.slice(from));
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
export function byteRenderings(bytes: Buffer): string[] {
  const base64 = base64Alignments(bytes);
  const urlSafe = base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_'));
  return [...new Set([...base64, ...urlSafe, bytes.toString('hex')])].filter((r) => r.length > 0);
}

/**
 * The private parts of an RSA private key as bytes: the private exponent, the primes and the CRT
 * values (d, p, q, dp, dq, qi). The modulus and the public exponent are public and are not scrubbed.
 */
export function privateParts(text: string): Buffer[] {
  let jwk: Record<string, unknown>;
  try {
    const key = /PRIVATE KEY/.test(text) ? createPrivateKey(text) : createPrivateKeyFromDer(keyBody(text));
    if (!key) return [];
    jwk = key.export({ format: 'jwk' }) as Record<string, unknown>;
  } catch {
    return [];
  }
  return ['d', 'p', 'q', 'dp', 'dq', 'qi'].flatMap((name) =>
    typeof jwk[name] === 'string' ? [Buffer.from(jwk[name], 'base64url')] : [],
  );
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
export const WORDLIKE = /^[A-Za-z]?[a-z]*(?:[-_. /:][a-z]*)*$/;

/** ASCII letters lower-cased, every other character kept: the length never changes (unlike toLowerCase). */
export function foldAscii(text: string): string {
  // An ASCII text folds as toLowerCase does; outside ASCII, toLowerCase would change more than letters A-Z (and lengths).
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u007f]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text.toLowerCase();
}

/** The pieces of a private key that must never show: the whole Base64 body, and each of its PEM lines. */
export function keyPieces(text: string): string[] {
  const body = keyBody(text);
  const lines = text
    .replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '\n')
    .split(/\\r\\n|\\n|\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= 16);
  return [body, ...lines];
}

export function isPrivateKeyDer(base64: string): boolean {
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
