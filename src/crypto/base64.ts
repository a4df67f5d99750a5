import { CryptoError, type CryptoFailureReason } from './errors.js';

/** The interface's pattern for encrypted data (ENERGY-DATA, ORDER-DATA, CB-RAW-BODY). */
export const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

const ALPHABET = /^[A-Za-z0-9+/]*$/;

/** Standard Base64, padded, no line breaks: the one encoding the interface uses. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** How far a decoder bends: the failure reasons it reads instead of refusing. */
export interface Base64Options {
  /**
   * Reasons read as the bytes they stand for instead of refused: only `missing-padding` (the
   * '=' are added) and `non-canonical-base64` (the unused low bits are dropped) have a reading;
   * any other reason is refused whatever this says. The set of forms a service may accept is
   * decided elsewhere (the service's policy); the default accepts none.
   */
  accept?: ReadonlySet<CryptoFailureReason>;
}

/**
 * Refuses the text of the usual integration bugs, before it is read as Base64: empty, a `data=`
 * prefix, line breaks, a form-decoded '+', other whitespace, percent-encoding, the URL-safe alphabet.
 */
function refuseMangledText(text: string): void {
  if (text.length === 0) {
    throw new CryptoError('empty', 'no data: the Base64 text is empty');
  }
  if (/^data=/.test(text)) {
    throw new CryptoError(
      'data-prefix',
      "the text starts with 'data=': it is a form body, but raw Base64 was expected (CB-RAW-BODY: the callback body is the Base64 text itself)",
    );
  }
  if (/[\r\n]/.test(text)) {
    throw new CryptoError(
      'line-breaks',
      `line breaks in the Base64 text (at offset ${text.search(/[\r\n]/)}): MIME-style wrapping is not allowed; encode without line breaks`,
    );
  }
  if (text.includes(' ')) {
    const repaired = text.replaceAll(' ', '+');
    if (isCanonical(repaired)) {
      throw new CryptoError(
        'plus-as-space',
        "a '+' of the Base64 text arrived as a space: the data went through form decoding (application/x-www-form-urlencoded turns '+' into ' '); read the raw body, or percent-encode the field",
      );
    }
    throw new CryptoError('whitespace', `spaces in the Base64 text (at offset ${text.indexOf(' ')})`);
  }
  if (/[\t\f\v]/.test(text)) {
    throw new CryptoError('whitespace', `whitespace in the Base64 text (at offset ${text.search(/[\t\f\v]/)})`);
  }
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    throw new CryptoError(
      'percent-encoded',
      'the Base64 text is percent-encoded (e.g. %2B, %2F, %3D): decode the form field once, or send the raw text',
    );
  }
  if (/[-_]/.test(text) && ALPHABET.test(text.replace(/=+$/, '').replaceAll('-', '+').replaceAll('_', '/'))) {
    throw new CryptoError(
      'url-safe-alphabet',
      "the text uses the URL-safe Base64 alphabet ('-' and '_'); the interface uses the standard alphabet ('+' and '/')",
    );
  }
}

/** Refuses a character outside the alphabet in `body` (the text without its trailing '='). */
function refuseOutsideAlphabet(body: string): void {
  const bad = body.search(/[^A-Za-z0-9+/]/);
  if (bad >= 0) {
    const ch = body[bad] ?? '';
    if (ch === '=') {
      throw new CryptoError(
        'misplaced-padding',
        `'=' padding inside the text at offset ${bad}: several Base64 strings concatenated? Encode the concatenated ciphertext once`,
      );
    }
    throw new CryptoError(
      'invalid-character',
      `character ${JSON.stringify(ch)} (U+${ch.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}) at offset ${bad} is not in the Base64 alphabet`,
    );
  }
}

/**
 * Decodes standard, padded Base64 strictly. A failure says *why*, in the terms of the usual
 * integration bugs: a form-decoded '+', a `data=` prefix on a raw body, URL-safe text, line breaks.
 * `options.accept` lets a lenient reader take unpadded or non-canonical text, as Java's decoder does.
 *
 * @example decodeBase64Strict('AQID') // <Buffer 01 02 03>
 * @example decodeBase64Strict('AQI', { accept: new Set(['missing-padding']) }) // <Buffer 01 02>
 */
export function decodeBase64Strict(text: string, options: Base64Options = {}): Buffer {
  const accepts = (reason: CryptoFailureReason) => options.accept?.has(reason) === true;
  refuseMangledText(text);
  const body = text.replace(/=+$/, '');
  refuseOutsideAlphabet(body);
  const padding = text.length - body.length;
  if (padding > 2) {
    throw new CryptoError('misplaced-padding', `${padding} '=' characters at the end; Base64 has at most 2`);
  }
  if (text.length % 4 !== 0) {
    if (padding === 0 && body.length % 4 !== 1) {
      if (accepts('missing-padding')) return decodeBase64Strict(text + '='.repeat(4 - (text.length % 4)), options);
      throw new CryptoError(
        'missing-padding',
        `the '=' padding is missing (length ${text.length} is not a multiple of 4); the interface uses padded Base64`,
      );
    }
    throw new CryptoError(
      'bad-base64-length',
      `length ${text.length} is not a multiple of 4: the text is truncated or has extra characters`,
    );
  }
  if (!isCanonical(text)) {
    if (accepts('non-canonical-base64')) return Buffer.from(text, 'base64');
    throw new CryptoError(
      'non-canonical-base64',
      'the Base64 text is not canonical: the unused bits of the last character are not zero (corrupted or truncated data)',
    );
  }
  return Buffer.from(text, 'base64');
}

function isCanonical(text: string): boolean {
  if (text.length % 4 !== 0 || !BASE64_PATTERN.test(text)) return false;
  return Buffer.from(text, 'base64').toString('base64') === text;
}
