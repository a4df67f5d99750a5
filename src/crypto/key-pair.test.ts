import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { generateMerchantKeyPair, KEY_SIZES } from './key-pair.js';
import { parseKey, publicHalf } from './keys.js';

describe('merchant key pair generation', () => {
  it('offers the sizes keys generate accepts, 1024 first (the platform default)', () => {
    expect(KEY_SIZES).toEqual([1024, 2048, 3072, 4096]);
  });

  it('makes a 1024-bit pair with exponent 65537 by default, in all four forms of the same pair', () => {
    const files = generateMerchantKeyPair();
    expect(files.privatePem.startsWith('-----BEGIN PRIVATE KEY-----\n')).toBe(true);
    expect(files.publicPem.startsWith('-----BEGIN PUBLIC KEY-----\n')).toBe(true);
    expect(files.privateBase64).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(files.publicBase64).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const forms = [
      parseKey(files.privatePem, { expect: 'private' }),
      parseKey(files.privateBase64, { expect: 'private' }),
      parseKey(files.publicPem, { expect: 'public' }),
      parseKey(files.publicBase64, { expect: 'public' }),
    ];
    const spki = forms.map((key) =>
      publicHalf(key).keyObject.export({ type: 'spki', format: 'der' }).toString('base64'),
    );
    expect(new Set(spki)).toEqual(new Set([files.publicBase64]));
    expect(forms.map((key) => key.bits)).toEqual([1024, 1024, 1024, 1024]);
    expect(forms[0]!.keyObject.asymmetricKeyDetails?.publicExponent).toBe(65537n);
  });

  it('makes a pair of the size asked for', () => {
    expect(parseKey(generateMerchantKeyPair(2048).publicPem).bits).toBe(2048);
  });

  it.each([512, 1000, 8192])('refuses %i bits with the sizes it accepts', (bits) => {
    expect(() => generateMerchantKeyPair(bits)).toThrow(
      new ConfigError('bad-key-size', `--bits must be one of 1024, 2048, 3072, 4096, not ${bits}`),
    );
    expect(() => generateMerchantKeyPair(bits)).toThrow(ConfigError);
  });
});
