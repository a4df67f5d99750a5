import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfigYaml } from '../core/config-reader.js';
import { ConfigError } from '../core/errors.js';
import { fingerprint } from '../secrets/scrub.js';
import { resolveEmulatorConfig } from './config-load.js';
import { emulatorSetupFiles } from './init-files.js';
import { emulatorYaml } from './init-template.js';

const KEYS_DIR = fileURLToPath(new URL('../../test/vectors/keys/', import.meta.url));
const MERCHANT = { userId: 7, apiKey: 'main', privateKey: 'rsa1024-private.pem', publicKey: 'rsa1024-public.pem' };
/** emulator.yaml with one merchant, `top` and `merchant` laid over it. */
const load =
  (top: Record<string, unknown> = {}, merchant: Record<string, unknown> = {}) =>
  () =>
    resolveEmulatorConfig(
      { control: { token: 't' }, merchants: [{ ...MERCHANT, ...merchant }], ...top },
      KEYS_DIR,
      'x.yaml',
    );

describe('emulator.yaml through the core config reader', () => {
  it('resolves paths against the folder, keeps :memory:, and treats an empty host as the default', () => {
    const config = load({ store: 'state/emu.sqlite', host: null })();
    expect([config.store, config.host, config.merchants[0]!.privateKey]).toEqual([
      `${KEYS_DIR}state/emu.sqlite`,
      '127.0.0.1',
      `${KEYS_DIR}rsa1024-private.pem`,
    ]);
    expect(load({ store: ':memory:' })().store).toBe(':memory:');
  });

  it.each([
    [
      'a key of the wrong type, named by its type only',
      {},
      { apiKey: 123456789 },
      'x.yaml: merchants[0].apiKey: must be a non-empty string, not a number',
    ],
    [
      'an extra key of the wrong type',
      {},
      { apiKeys: [{ key: 987654321, permissions: [] }] },
      'x.yaml: merchants[0].apiKeys[0].key: must be a non-empty string, not a number',
    ],
    [
      'a control token of the wrong type',
      { control: { token: 424242 } },
      {},
      'x.yaml: control.token: must be a non-empty string, not a number',
    ],
    [
      'a key used twice, named by its fingerprint',
      {},
      { apiKeys: [{ key: 'main', permissions: [] }] },
      `x.yaml: merchants[0]: API key ${fingerprint('main', 'ak')} appears twice (every key must be unique across merchants)`,
    ],
    ['a blank host', { host: '' }, {}, 'x.yaml: host: must be a host name or address (e.g. 127.0.0.1), not ""'],
    ['a path of the wrong type', { store: 5 }, {}, 'x.yaml: store: must be a file path, not 5'],
    ['a blank key path', {}, { privateKey: ' ' }, 'x.yaml: merchants[0].privateKey: must be a file path, not " "'],
    [
      'an extra key window bound',
      {},
      { apiKeys: [{ key: 'k2', notBefore: 'later' }] },
      'x.yaml: merchants[0].apiKeys[0].notBefore: must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not "later"',
    ],
  ])('refuses %s', (_label, top, merchant, message) => {
    expect(load(top, merchant)).toThrow(new ConfigError('bad-emulator-config', message));
  });

  it('reads an extra key with its window', () => {
    const config = load(
      {},
      { apiKeys: [{ key: 'k2', permissions: ['closeCard'], notAfter: '2020-01-01T00:00:00Z' }] },
    )();
    expect(config.merchants[0]!.apiKeys).toEqual([
      { key: 'k2', permissions: ['closeCard'], notAfter: '2020-01-01T00:00:00Z' },
    ]);
  });

  it('--init writes the main key window as apiKeyNotBefore/apiKeyNotAfter, never the older names', () => {
    const yaml = emulatorSetupFiles({ bits: 1024 }).find((file) => file.name === 'emulator.yaml')!.contents;
    expect(yaml).toMatch(/^ {4}apiKeyNotBefore: '2020-01-01T00:00:00Z'/m);
    expect(yaml).toMatch(/^ {4}apiKeyNotAfter: '2099-12-31T23:59:59Z'/m);
    expect(yaml).not.toMatch(/^ {4}apiKeyValid(From|Until):/m);
  });

  it('fills the template of emulator init with the values it is given, and the result resolves', () => {
    const yaml = emulatorYaml({
      controlToken: 'tok-1',
      apiKey: 'ak-1',
      forbiddenKey: 'fb-1',
      expiredKey: 'ex-1',
      store: ':memory:',
      port: 0,
      callbackUrl: 'http://127.0.0.1:1/cb',
    });
    const doc = parseConfigYaml(
      yaml.replace('merchant-private.pem', 'rsa1024-private.pem').replace('merchant-public.pem', 'rsa1024-public.pem'),
      'x.yaml',
      'bad-emulator-config',
    );
    const config = resolveEmulatorConfig(doc, KEYS_DIR, 'x.yaml');
    expect([config.control.token, config.store, config.port, config.merchants[0]?.callbackUrl]).toEqual([
      'tok-1',
      ':memory:',
      0,
      'http://127.0.0.1:1/cb',
    ]);
    expect(config.merchants[0]?.apiKey).toBe('ak-1');
    expect(config.merchants[0]?.apiKeys.map((key) => [key.key, key.permissions.length])).toEqual([
      ['fb-1', 0],
      ['ex-1', 3],
    ]);
  });
});
