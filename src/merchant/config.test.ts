import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
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
    expect(parseMerchantConfig('apiKey: k\npublicKey: p.pem\nprofile: profile.yaml\n', '/a/m.yaml')).toMatchObject({
      profile: { path: '/a/profile.yaml' },
      storePath: '/a/merchant.sqlite',
    });
  });

  it('keeps a postgres:// store URL as a URL, not a path beside the file', () => {
    const url = 'postgres://merchant:pw@db.internal:5432/wallet';
    expect(parseMerchantConfig(`apiKey: k\npublicKey: p.pem\nstore: "${url}"\n`, '/a/m.yaml').storePath).toBe(url);
    expect(parseMerchantConfig('apiKey: k\npublicKey: p.pem\nstore: postgresql://db/w\n', '/a/m.yaml').storePath).toBe(
      'postgresql://db/w',
    );
  });

  it.each([
    [
      'apiKey: k\npublicKey: p.pem\nstroe: x.sqlite\n',
      "/a/m.yaml: unknown field 'stroe' (known: apiKey, publicKey, privateKey, profile, store, bodyLimit, port, host, tls, probe)",
    ],
    ['publicKey: p.pem\n', '/a/m.yaml: apiKey: is required (the X-API-KEY the service sends, CB-KEY-SAME)'],
    ['apiKey: []\npublicKey: p.pem\n', '/a/m.yaml: apiKey: lists no key'],
    [
      'apiKey: 12345\npublicKey: p.pem\n',
      '/a/m.yaml: apiKey: must be a string (quote a key that looks like a number) or a mapping of key, notBefore, notAfter, not a number',
    ],
    [
      'apiKey: [k, 12345]\npublicKey: p.pem\n',
      '/a/m.yaml: apiKey[1]: must be a string (quote a key that looks like a number) or a mapping of key, notBefore, notAfter, not a number',
    ],
    [
      'apiKey: [{ key: 12345 }]\npublicKey: p.pem\n',
      '/a/m.yaml: apiKey[0].key: must be a non-empty string, not a number',
    ],
    [
      'apiKey: [{ key: k, notAfter: soon }]\npublicKey: p.pem\n',
      '/a/m.yaml: apiKey[0].notAfter: must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not "soon"',
    ],
    [
      'apiKey: [{ key: k, expires: x }]\npublicKey: p.pem\n',
      "/a/m.yaml: apiKey[0]: unknown field 'expires' (known: key, notBefore, notAfter)",
    ],
    ['apiKey: k\npublicKey: 5\n', '/a/m.yaml: publicKey: must be a file path, not 5'],
    [
      'apiKey: k\npublicKey: p.pem\nport: 70000\n',
      '/a/m.yaml: port: must be a whole number from 0 to 65535, not 70000',
    ],
    [
      'apiKey: k\npublicKey: p.pem\nhost: ""\n',
      '/a/m.yaml: host: must be a host name or address (e.g. 127.0.0.1), not ""',
    ],
    [
      'apiKey: k\npublicKey: p.pem\nprobe: { tokn: x }\n',
      "/a/m.yaml: probe: unknown field 'tokn' (known: token, deadlineMs)",
    ],
    [
      'apiKey: k\npublicKey: p.pem\nprobe: { token: 12345 }\n',
      '/a/m.yaml: probe.token: must be a non-empty string, not a number',
    ],
    [
      'apiKey: k\npublicKey: p.pem\nprobe: { deadlineMs: 5 }\n',
      '/a/m.yaml: probe.deadlineMs: must be a whole number from 100 to 600000, not 5',
    ],
    [
      '- a\n',
      '/a/m.yaml: expected a mapping of apiKey, publicKey, privateKey, profile, store, bodyLimit, port, host, tls, probe',
    ],
  ])('refuses %j with one clear line', (text, message) => {
    expect(() => parseMerchantConfig(text, '/a/m.yaml')).toThrow(new ConfigError('bad-merchant-config', message));
  });

  it('reads probe: its token (a secret) and its answer deadline, 10 s by default', () => {
    expect(parseMerchantConfig('apiKey: k\npublicKey: p.pem\n', '/a/m.yaml').probe).toEqual({ deadlineMs: 10_000 });
    expect(
      parseMerchantConfig(
        'apiKey: k\npublicKey: p.pem\nprobe: { token: "t0ken-of-the-probe", deadlineMs: 2000 }\n',
        '/a/m.yaml',
      ).probe,
    ).toEqual({
      token: 't0ken-of-the-probe',
      deadlineMs: 2000,
    });
  });

  it('leaves an inline profile to the profile reader (its reason, the file and field named)', () => {
    expect(() =>
      parseMerchantConfig('apiKey: k\npublicKey: p.pem\nprofile: { paddding: pkcs1 }\n', '/a/m.yaml'),
    ).toThrow(
      new ConfigError(
        'bad-profile',
        "/a/m.yaml: profile: unknown field 'paddding' (known: padding, request, response, callback, plaintextBlock)",
      ),
    );
  });

  it('refuses YAML that does not parse with one line', () => {
    expect(() => parseMerchantConfig('apiKey: k\n  bad: [\n', '/a/m.yaml')).toThrow(
      /^\/a\/m\.yaml: not valid YAML: [^\n]+$/,
    );
  });

  it('loads the key that opens callbacks: the public half, or the private half when the profile says so', () => {
    const pair = generateMerchantKeyPair(1024);
    const files: Record<string, string> = {
      '/a/pub.pem': pair.publicPem,
      '/a/priv.pem': pair.privatePem,
      '/a/p.yaml': 'callback: public\n',
    };
    const read = (path: string) => Buffer.from(files[path] ?? '');
    const plain = loadMerchantSettings(parseMerchantConfig('apiKey: k\npublicKey: pub.pem\n', '/a/m.yaml'), read);
    expect(plain.callbackKey.half).toBe('public');
    const flipped = loadMerchantSettings(
      parseMerchantConfig('apiKey: k\npublicKey: pub.pem\nprivateKey: priv.pem\nprofile: p.yaml\n', '/a/m.yaml'),
      read,
    );
    expect(flipped.callbackKey.half).toBe('private');
    expect(() => loadMerchantSettings(parseMerchantConfig('apiKey: k\nprofile: p.yaml\n', '/a/m.yaml'), read)).toThrow(
      /privateKey is required/,
    );
    expect(() =>
      loadMerchantSettings(parseMerchantConfig('apiKey: k\npublicKey: priv.pem\n', '/a/m.yaml'), read),
    ).toThrow(/expected the public key/);
  });

  it('writes a template that parses back', () => {
    const config = parseMerchantConfig(merchantConfigTemplate('00ff'), '/x/merchant.yaml');
    expect(config).toMatchObject({
      apiKeys: [{ key: '00ff' }],
      publicKeyPath: '/x/merchant-public.pem',
      storePath: '/x/merchant.sqlite',
      port: 9400,
    });
  });
});
