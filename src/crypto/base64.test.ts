import { describe, expect, it } from 'vitest';
import { BASE64_PATTERN, decodeBase64Strict, encodeBase64 } from './base64.js';
import { CryptoError } from './errors.js';

const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x01, 0x02]); // standard text '+/+/AQI=' has '+', '/' and '='

function reasonOf(text: string): string {
  try {
    decodeBase64Strict(text);
  } catch (error) {
    expect(error).toBeInstanceOf(CryptoError);
    return (error as CryptoError).reason;
  }
  return 'accepted';
}

describe('strict Base64', () => {
  it('round-trips standard padded Base64 with +, / and =', () => {
    const text = encodeBase64(bytes);
    expect(text).toBe('+/+/AQI=');
    expect(decodeBase64Strict(text).equals(bytes)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['data=+/+/AQI=', 'data-prefix'],
    [' / /AQI=', 'plus-as-space'],
    ['+/+/\nAQI=', 'line-breaks'],
    ['+/+/\r\nAQI=', 'line-breaks'],
    ['-_-_AQI=', 'url-safe-alphabet'],
    ['%2B%2F%2B%2FAQI%3D', 'percent-encoded'],
    ['+/+/AQI', 'missing-padding'],
    ['+/+/A', 'bad-base64-length'],
    ['+/+/AQI=AQI=', 'misplaced-padding'],
    ['+/+/AQI===', 'misplaced-padding'],
    ['+/+/AQ*=', 'invalid-character'],
    ['+/+/AQJ=', 'non-canonical-base64'],
    ['ab cd', 'whitespace'],
    ['+/+/\tAQI=', 'whitespace'],
  ])('explains why %j is refused (%s)', (text, reason) => {
    expect(reasonOf(text)).toBe(reason);
  });

  it('says in its message what to do about a form-decoded plus', () => {
    expect(() => decodeBase64Strict(' / /AQI=')).toThrow(/form decoding/);
  });
});

function messageOf(text: string): string {
  try {
    decodeBase64Strict(text);
  } catch (error) {
    return (error as CryptoError).message;
  }
  return 'accepted';
}

describe('strict Base64: each refusal explains itself exactly', () => {
  const formBody =
    "the text starts with 'data=': it is a form body, but raw Base64 was expected (CB-RAW-BODY: the callback body is the Base64 text itself)";
  const plusAsSpace =
    "a '+' of the Base64 text arrived as a space: the data went through form decoding (application/x-www-form-urlencoded turns '+' into ' '); read the raw body, or percent-encode the field";
  const percent =
    'the Base64 text is percent-encoded (e.g. %2B, %2F, %3D): decode the form field once, or send the raw text';
  const urlSafe =
    "the text uses the URL-safe Base64 alphabet ('-' and '_'); the interface uses the standard alphabet ('+' and '/')";
  const concatenated = (at: number) =>
    `'=' padding inside the text at offset ${at}: several Base64 strings concatenated? Encode the concatenated ciphertext once`;
  const nonCanonical =
    'the Base64 text is not canonical: the unused bits of the last character are not zero (corrupted or truncated data)';

  it.each([
    ['', 'empty', 'no data: the Base64 text is empty'],
    ['data=AQID', 'data-prefix', formBody],
    ['xdata=AQID', 'misplaced-padding', concatenated(5)],
    [
      'AQ\nID',
      'line-breaks',
      'line breaks in the Base64 text (at offset 2): MIME-style wrapping is not allowed; encode without line breaks',
    ],
    [
      'AQI\r',
      'line-breaks',
      'line breaks in the Base64 text (at offset 3): MIME-style wrapping is not allowed; encode without line breaks',
    ],
    ['AQ I', 'plus-as-space', plusAsSpace],
    ['ab cd', 'whitespace', 'spaces in the Base64 text (at offset 2)'],
    ['AQ= ', 'whitespace', 'spaces in the Base64 text (at offset 3)'],
    ['AQ\tI', 'whitespace', 'whitespace in the Base64 text (at offset 2)'],
    ['AQI\f', 'whitespace', 'whitespace in the Base64 text (at offset 3)'],
    ['A\vQI', 'whitespace', 'whitespace in the Base64 text (at offset 1)'],
    ['AQ%2fCD', 'percent-encoded', percent],
    ['%3D', 'percent-encoded', percent],
    ['AQ%G1', 'invalid-character', 'character "%" (U+0025) at offset 2 is not in the Base64 alphabet'],
    ['AQ%2G', 'invalid-character', 'character "%" (U+0025) at offset 2 is not in the Base64 alphabet'],
    ['A=-B', 'misplaced-padding', concatenated(1)],
    ['*AQI', 'invalid-character', 'character "*" (U+002A) at offset 0 is not in the Base64 alphabet'],
    ['AB-D', 'url-safe-alphabet', urlSafe],
    ['AB_D', 'url-safe-alphabet', urlSafe],
    ['AB-_CD==', 'url-safe-alphabet', urlSafe],
    ['A-B*', 'invalid-character', 'character "-" (U+002D) at offset 1 is not in the Base64 alphabet'],
    ['AQ==AQ==', 'misplaced-padding', concatenated(2)],
    ['AQ*=', 'invalid-character', 'character "*" (U+002A) at offset 2 is not in the Base64 alphabet'],
    ['AQé=', 'invalid-character', 'character "é" (U+00E9) at offset 2 is not in the Base64 alphabet'],
    ['AQ===', 'misplaced-padding', "3 '=' characters at the end; Base64 has at most 2"],
    [
      'AQ',
      'missing-padding',
      "the '=' padding is missing (length 2 is not a multiple of 4); the interface uses padded Base64",
    ],
    [
      'AQI',
      'missing-padding',
      "the '=' padding is missing (length 3 is not a multiple of 4); the interface uses padded Base64",
    ],
    [
      'AQIDAQ',
      'missing-padding',
      "the '=' padding is missing (length 6 is not a multiple of 4); the interface uses padded Base64",
    ],
    ['A', 'bad-base64-length', 'length 1 is not a multiple of 4: the text is truncated or has extra characters'],
    ['AQ=', 'bad-base64-length', 'length 3 is not a multiple of 4: the text is truncated or has extra characters'],
    ['AQIDA', 'bad-base64-length', 'length 5 is not a multiple of 4: the text is truncated or has extra characters'],
    ['AQJ=', 'non-canonical-base64', nonCanonical],
    ['AR==', 'non-canonical-base64', nonCanonical],
  ])('refuses %j as %s with its exact explanation', (text, reason, message) => {
    expect(reasonOf(text)).toBe(reason);
    expect(messageOf(text)).toBe(message);
  });

  it.each([
    ['AQ==', [0x01]],
    ['AQI=', [0x01, 0x02]],
    ['AQID', [0x01, 0x02, 0x03]],
    ['+/+/AQI=', [0xfb, 0xff, 0xbf, 0x01, 0x02]],
  ])('accepts %j with up to two padding characters', (text, expected) => {
    expect([...decodeBase64Strict(text)]).toEqual(expected);
  });
});

describe('a lenient reading of Base64 (a service policy, U-CRYPTO)', () => {
  const lenient = { accept: new Set(['missing-padding', 'non-canonical-base64'] as const) };
  const padOnly = { accept: new Set(['missing-padding'] as const) };
  const reasonWith = (text: string, options: Parameters<typeof decodeBase64Strict>[1]) => {
    try {
      return [...decodeBase64Strict(text, options)];
    } catch (error) {
      return (error as CryptoError).reason;
    }
  };

  it.each([
    ['AQ', [0x01]],
    ['AQI', [0x01, 0x02]],
    ['AQIDAQ', [0x01, 0x02, 0x03, 0x01]],
    ['+/+/AQI', [0xfb, 0xff, 0xbf, 0x01, 0x02]],
    ['AQJ=', [0x01, 0x02]],
    ['AR==', [0x01]],
    ['AQJ', [0x01, 0x02]],
  ])("reads %j as the bytes Java's decoder gives", (text, expected) => {
    expect(reasonWith(text, lenient)).toEqual(expected);
  });

  it('accepts only the reasons it is given: unpadded yes, non-canonical still refused', () => {
    expect(reasonWith('AQI', padOnly)).toEqual([0x01, 0x02]);
    expect(reasonWith('AQJ', padOnly)).toBe('non-canonical-base64');
    expect(reasonWith('AQJ=', padOnly)).toBe('non-canonical-base64');
  });

  it.each([
    ['AB-D', 'url-safe-alphabet'],
    ['A', 'bad-base64-length'],
    ['AQ=', 'bad-base64-length'],
    ['AQ==AQ==', 'misplaced-padding'],
    ['AQ ID', 'whitespace'],
    ['AQ\r\nID', 'line-breaks'],
    ['', 'empty'],
  ])('still refuses %j (%s): no reading of the pattern allows it', (text, reason) => {
    expect(reasonWith(text, lenient)).toBe(reason);
  });
});

describe('Base64 encoding and the interface pattern', () => {
  it('encodes only the viewed bytes of a subarray', () => {
    const whole = Uint8Array.from([0xff, 0x01, 0x02, 0x03, 0xff]);
    expect(encodeBase64(whole.subarray(1, 4))).toBe('AQID');
  });

  it('encodes no bytes as the empty text', () => {
    expect(encodeBase64(new Uint8Array(0))).toBe('');
  });

  it.each([
    ['AQID', true],
    ['AQ==', true],
    ['AQI=', true],
    ['+/+/', true],
    ['', false],
    ['==', false],
    ['AQ===', false],
    ['AQ=I', false],
    [' AQID', false],
    ['AQID ', false],
    ['data=AQID', false],
    ['-_==', false],
  ])('BASE64_PATTERN judges %j as %s', (text, matches) => {
    expect(BASE64_PATTERN.test(text)).toBe(matches);
  });
});
