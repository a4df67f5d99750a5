import { createHash } from 'node:crypto';
import { createLiteralIndex } from './literal-index.js';
import { spellingReplacements, SHORT, truncationScrubber, WindowIndex } from './scrub-index.js';
import { isPrivateKeyDer, keyBody } from './secret-renderings.js';

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

// A private key in a text: a PEM block, or bare DER, which starts with a SEQUENCE of two-byte length (Base64 "MII"), maybe in PEM lines.
const PEM_PRIVATE = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
const DER_CANDIDATE = /MII[A-Za-z0-9+/]{200,}={0,2}(?:(?:\\r\\n|\\n|\r?\n)[A-Za-z0-9+/]+={0,2})*/g;
// A value that is a fingerprint already is matched first and kept.
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:"'<>]*:)([a-z]{2}…#[0-9a-f]{4}|[^\s/?#@"'<>]+)(@)/gi;
const QUERY_TOKEN =
  /([?&](?:access_token|token|api[_-]?key|apikey|key|secret|password|signature|sig|auth)=)([a-z]{2}…#[0-9a-f]{4}|[^&\s"'<>#]+)/gi;
const AUTHORIZATION = /(authorization\W{0,12}(?:Bearer|Basic)\s+)([a-z]{2}…#[0-9a-f]{4}|[A-Za-z0-9._~+/-]+=*)/gi;
const BASE64_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;

/**
 * A scrubber for these secrets. Besides them, it always removes what is a secret by its form:
 * private keys (PEM blocks and bare Base64 DER), a URL's password, token-like query parameters,
 * Bearer and Basic credentials, and Base64 text that decodes to a configured secret.
 *
 * @example createScrubber([{ kind: 'ak', value: key }]).text(`x-api-key: ${key}`) // 'x-api-key: ak…#....'
 */
export function createScrubber(secrets: readonly Secret[]): Scrubber {
  const shown = secrets
    .filter((secret) => secret.value.length > 0)
    .map((secret) => ({
      kind: secret.kind,
      value: secret.value,
      shown: secret.shownAs ?? fingerprint(secret.value, secret.kind),
    }));
  const byHash = new Map<string, SecretKind | null>();
  for (const secret of shown) {
    const hash = secret.shown.slice(-4);
    byHash.set(hash, byHash.has(hash) && byHash.get(hash) !== secret.kind ? null : secret.kind);
  }
  const { replacement, raw } = spellingReplacements(shown);
  // Base64 text decoded is searched for these (the configured values and key pieces of SHORT characters or more).
  const decodable = raw.filter((secret) => secret.value.length >= SHORT);
  const steps: TextSteps = {
    known: createLiteralIndex(replacement, SHORT),
    cutShort: truncationScrubber(replacement),
    windows: new WindowIndex(shown),
    decodable,
    shortestDecodable: Math.min(...decodable.map((secret) => secret.value.length)),
    byHash,
  };
  const text = (input: string) => scrubText(input, steps);
  return { text, value: valueScrubber(text) };
}

/** What scrubText runs, built once per scrubber. */
interface TextSteps {
  known: ReturnType<typeof createLiteralIndex<string>>;
  cutShort: (input: string) => string;
  windows: WindowIndex;
  decodable: Array<{ value: string; shown: string }>;
  shortestDecodable: number;
  byHash: ReadonlyMap<string, SecretKind | null>;
}

const isFingerprint = (text: string) => ONLY_A_FINGERPRINT.test(text);

/** Secrets by their form: a URL's password, a token in a query, an Authorization credential. */
function byForm(input: string): string {
  let out = input;
  if (out.includes('://'))
    out = out.replace(
      USERINFO,
      (_m, head: string, password: string, at: string) =>
        `${head}${isFingerprint(password) ? password : fingerprint(safeDecode(password), 'pw')}${at}`,
    );
  if (out.includes('='))
    out = out.replace(
      QUERY_TOKEN,
      (_m, head: string, token: string) =>
        `${head}${isFingerprint(token) ? token : fingerprint(safeDecode(token), 'qt')}`,
    );
  return out.replace(
    AUTHORIZATION,
    (_m, head: string, credential: string) =>
      `${head}${isFingerprint(credential) ? credential : fingerprint(credential, 'au')}`,
  );
}

/** Base64 runs that decode to text holding a configured secret. */
function byDecoding(input: string, { decodable, shortestDecodable: shortest }: TextSteps): string {
  if (decodable.length === 0 || input.length < 12) return input;
  return betweenFingerprints(input, (part) =>
    part.replace(BASE64_RUN, (run) => {
      // Too short to hold the shortest secret once decoded: no need to decode it.
      if (Math.floor((run.length * 3) / 4) < shortest) return run;
      const decoded = Buffer.from(
        run.includes('-') || run.includes('_') ? run.replace(/-/g, '+').replace(/_/g, '/') : run,
        'base64',
      ).toString('latin1');
      return (
        decodable.find((secret) => secret.value.length <= decoded.length && decoded.includes(secret.value))?.shown ??
        run
      );
    }),
  );
}

/** One text scrubbed: private keys, spellings, cut-short heads, secrets by form, decoded Base64, windows, then the kinds named right. */
function scrubText(input: string, steps: TextSteps): string {
  // Whole PEM blocks first: one fingerprint per key, the same however its lines were joined.
  // Each pattern pass is skipped when the text lacks a literal its pattern cannot match without.
  let out = input.includes('-----BEGIN ') ? input.replace(PEM_PRIVATE, (block) => fingerprint(block, 'pk')) : input;
  out = steps.known.replace(out, (match) => match.value);
  if (out.includes('MII'))
    out = out.replace(DER_CANDIDATE, (run) => (isPrivateKeyDer(keyBody(run)) ? fingerprint(run, 'pk') : run));
  out = byDecoding(byForm(steps.cutShort(out)), steps);
  out = betweenFingerprints(out, (part) => steps.windows.replace(part));
  if (out.includes('…#')) out = out.replace(PADDED_TAIL, '$1');
  // The runner's own redaction knows no kinds (every X-API-KEY shows as `ak`): name the configured ones right.
  if (!out.includes('…#')) return out;
  return out.replace(FINGERPRINT, (shown, kind: string, hash: string) => {
    const right = steps.byHash.get(hash);
    return right && right !== kind ? `${right}…#${hash}` : shown;
  });
}

/**
 * A report repeats its strings (keys, statuses, rule ids, the same request in every case): each
 * distinct string of one value() call is scrubbed once. The memo lives as long as the call.
 */
function valueScrubber(text: (input: string) => string): <T>(input: T) => T {
  return <T>(input: T): T => {
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
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
