import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { DEFAULT_PROFILE, maxPlaintextBlock, parseProfileYaml, plaintextBlockSize, resolveProfile } from './profile.js';

describe('crypto profile', () => {
  it('defaults to the platform documentation: pkcs1, public request, private response and callback', () => {
    expect(resolveProfile(undefined)).toEqual({
      padding: 'pkcs1',
      request: 'public',
      response: 'private',
      callback: 'private',
      plaintextBlock: 'auto',
    });
    expect(parseProfileYaml('')).toEqual(DEFAULT_PROFILE);
  });

  it('overrides only the fields given', () => {
    expect(parseProfileYaml('padding: oaep-sha256\nrequest: private\n')).toMatchObject({
      padding: 'oaep-sha256',
      request: 'private',
      response: 'private',
    });
  });

  it('computes k-11 and k-2h-2 block sizes', () => {
    expect(maxPlaintextBlock('pkcs1', 128)).toBe(117);
    expect(maxPlaintextBlock('pkcs1', 256)).toBe(245);
    expect(maxPlaintextBlock('oaep-sha1', 128)).toBe(86);
    expect(maxPlaintextBlock('oaep-sha256', 256)).toBe(190);
    expect(plaintextBlockSize({ ...DEFAULT_PROFILE, plaintextBlock: 100 }, 128)).toBe(100);
  });

  it.each([
    ['paddding: pkcs1', /unknown field 'paddding'/],
    ['padding: rsa', /padding must be one of/],
    ['callback: both', /callback must be public or private/],
    ['plaintextBlock: 0', /plaintextBlock must be auto or a positive integer/],
    ['plaintextBlock: 1.5', /plaintextBlock must be auto/],
    ['[1, 2]', /a profile is a mapping/],
    ['padding: [', /not valid YAML/],
  ])('refuses %j', (yaml, message) => {
    expect(() => parseProfileYaml(yaml, 'p.yaml')).toThrow(ConfigError);
    expect(() => parseProfileYaml(yaml, 'p.yaml')).toThrow(message);
  });

  it('refuses a block larger than the padding allows for the key', () => {
    expect(() => plaintextBlockSize({ ...DEFAULT_PROFILE, plaintextBlock: 118 }, 128)).toThrow(
      /exceeds the 117-byte maximum/,
    );
  });
});
