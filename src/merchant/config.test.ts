import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { generateMerchantKeyPair } from '../crypto/key-pair.js';
import { loadMerchantSettings, merchantConfigTemplate, parseMerchantConfig } from './config.js';

describe('merchant.yaml', () => {
  it('resolves paths against the file, defaults the rest, and reads key windows', () => {
    const config = parseMerchantConfig(
      'apiKey:\n  - "k-1"\n  - { key: "k-0", notAfter: "2020-01-01T00:00:00Z" }\npublicKey: keys/pub.pem\nprofile: { padding: oaep-sha256 }\nstore: ":memory:"\n',
      '/srv/merchant/merchant.yaml',
    );
    expect(config).toMatchObject({
      apiKeys: [{ key: 'k-1' }, { key: 'k-0', notAfter: new Date('2020-01-01T00:00:00Z') }],
      publicKeyPath: '/srv/merchant/keys/pub.pem',
      privateKeyPath: undefined,
      profile: { ...DEFAULT_PROFILE, padding: 'oaep-sha256' },
      storePath: ':memory:',
      bodyLimit: 65536,
      port: 0,
      host: '127.0.0.1',
    });
    expect(parseMerchantConfig('apiKey: k\npublicKey: p.pem\nprofile: profile.yaml\n', '/a/m.yaml')).toMatchObject({ profile: { path: '/a/profile.yaml' }, storePath: '/a/merchant.sqlite' });
  });

  it('keeps a postgres:// store URL as a URL, not a path beside the file', () => {
    const url = 'postgres://merchant:pw@db.internal:5432/wallet';
    expect(parseMerchantConfig(`apiKey: k\npublicKey: p.pem\nstore: "${url}"\n`, '/a/m.yaml').storePath).toBe(url);
    expect(parseMerchantConfig('apiKey: k\npublicKey: p.pem\nstore: postgresql://db/w\n', '/a/m.yaml').storePath).toBe('postgresql://db/w');
  });

  it.each([
    ['apiKey: k\npublicKey: p.pem\nstroe: x.sqlite\n', /m\.yaml: unknown field 'stroe' \(known: apiKey, publicKey/],
    ['publicKey: p.pem\n', /apiKey is required/],
    ['apiKey: 12345\npublicKey: p.pem\n', /apiKey must be a string \(quote a key/],
    ['apiKey: [{ key: k, notAfter: soon }]\npublicKey: p.pem\n', /apiKey\[0\]\.notAfter must be an ISO 8601 date-time/],
    ['apiKey: [{ key: k, expires: x }]\npublicKey: p.pem\n', /apiKey\[0\]: unknown field 'expires'/],
    ['apiKey: k\npublicKey: p.pem\nport: 70000\n', /port must be a whole number from 0 to 65535/],
    ['apiKey: k\npublicKey: p.pem\nprofile: { paddding: pkcs1 }\n', /profile: unknown field 'paddding'/],
    ['apiKey: k\n  bad: [\n', /not valid YAML/],
    ['- a\n', /expected a mapping/],
  ])('refuses %j with one clear line', (text, message) => {
    expect(() => parseMerchantConfig(text, '/a/m.yaml')).toThrow(message);
  });

  it('loads the key that opens callbacks: the public half, or the private half when the profile says so', () => {
    const pair = generateMerchantKeyPair(1024);
    const files: Record<string, string> = { '/a/pub.pem': pair.publicPem, '/a/priv.pem': pair.privatePem, '/a/p.yaml': 'callback: public\n' };
    const read = (path: string) => Buffer.from(files[path] ?? '');
    const plain = loadMerchantSettings(parseMerchantConfig('apiKey: k\npublicKey: pub.pem\n', '/a/m.yaml'), read);
    expect(plain.callbackKey.half).toBe('public');
    const flipped = loadMerchantSettings(parseMerchantConfig('apiKey: k\npublicKey: pub.pem\nprivateKey: priv.pem\nprofile: p.yaml\n', '/a/m.yaml'), read);
    expect(flipped.callbackKey.half).toBe('private');
    expect(() => loadMerchantSettings(parseMerchantConfig('apiKey: k\nprofile: p.yaml\n', '/a/m.yaml'), read)).toThrow(/privateKey is required/);
    expect(() => loadMerchantSettings(parseMerchantConfig('apiKey: k\npublicKey: priv.pem\n', '/a/m.yaml'), read)).toThrow(/expected the public key/);
  });

  it('writes a template that parses back', () => {
    const config = parseMerchantConfig(merchantConfigTemplate('00ff'), '/x/merchant.yaml');
    expect(config).toMatchObject({ apiKeys: [{ key: '00ff' }], publicKeyPath: '/x/merchant-public.pem', storePath: '/x/merchant.sqlite', port: 9400 });
  });
});
