import { describe, expect, it } from 'vitest';
import { encodeBase64 } from '../crypto/base64.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';
import { base64Reason, nonCanonical } from './crypto-mangled.js';

describe('which Base64 mangles a service may read (U-CRYPTO) and which it must refuse', () => {
  const oneEq = encodeBase64(Buffer.from([0xfb, 0xff, 0x01, 0x02, 0x03])); // ends with one '='
  const twoEq = encodeBase64(Buffer.from([0xfb, 0xff, 0x01, 0x02])); // ends with '=='

  it('non-canonical bits: another text, the same bytes to a lenient decoder, inside the pattern', () => {
    for (const text of [oneEq, twoEq]) {
      const changed = nonCanonical(text);
      expect(changed).not.toBe(text);
      expect(changed).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
      expect(Buffer.from(changed, 'base64')).toEqual(Buffer.from(text, 'base64'));
      expect(base64Reason(changed)).toBe('non-canonical-base64');
    }
    // No '=': no unused bits to set.
    expect(nonCanonical('AQID')).toBe('AQID');
  });

  it('classifies by the strict decoder: only what matches the pattern is lenient', () => {
    const lenient = (text: string) => LENIENT_BASE64_REASONS.has(base64Reason(text)!);
    expect(base64Reason(oneEq)).toBeUndefined();
    expect(lenient(oneEq.replace(/=+$/, ''))).toBe(true);
    expect(lenient(nonCanonical(twoEq))).toBe(true);
    expect(lenient(oneEq.replaceAll('+', '-').replaceAll('/', '_'))).toBe(false);
    expect(lenient(`${oneEq.slice(0, 4)}\r\n${oneEq.slice(4)}`)).toBe(false);
    expect(lenient(`${oneEq.slice(0, 4)} ${oneEq.slice(4)}`)).toBe(false);
    expect(lenient(oneEq.replaceAll('+', ' '))).toBe(false);
  });
});
