import { describe, expect, it } from 'vitest';
import { decodeBase64Strict, encodeBase64 } from './base64.js';
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
