import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { applyConfigFile, configKeyOf, configValues, parseConfigFile, requireOption } from './config-file.js';
import { refusal } from '../../test/support/refusal.js';

const FILE = '/ci/wallet-conformance.yaml';

describe('the config file', () => {
  it('reads the top level and the sections, paths resolved against its folder, numbers kept as flag text', () => {
    const config = parseConfigFile(
      [
        'reports: out',
        'strict: true',
        'suites: [extra, /abs/more]',
        'maxBody: 4096',
        'timeout: 2.5',
        'service:',
        '  baseUrl: https://wallet.example/',
        '  apiKeyFile: keys/ak.txt',
        '  userId: 7',
        'merchant:',
        '  callbackUrl: http://127.0.0.1:8080/cb',
        '',
      ].join('\n'),
      FILE,
      'wallet-conformance.yaml',
    );
    expect(config).toEqual({
      path: 'wallet-conformance.yaml',
      shared: { reports: '/ci/out', strict: true, suites: ['/ci/extra', '/abs/more'], maxBody: '4096', timeout: '2.5' },
      sections: {
        service: { baseUrl: 'https://wallet.example/', apiKeyFile: '/ci/keys/ak.txt', userId: '7' },
        merchant: { callbackUrl: 'http://127.0.0.1:8080/cb' },
      },
    });
  });

  it('an empty file holds nothing', () => {
    expect(parseConfigFile('', FILE)).toEqual({ path: FILE, shared: {}, sections: {} });
  });

  it.each<[string, string, string]>([
    [
      'apiKey: sk_live_123\n',
      'secret-in-config',
      `${FILE}: apiKey would put a secret in a file that gets committed; give it as apiKeyFile, WALLET_API_KEY or --api-key-file`,
    ],
    [
      'pact:\n  brokerToken: abc\n',
      'secret-in-config',
      `${FILE}: pact.brokerToken would put a secret in a file that gets committed; give it as brokerTokenFile, PACT_BROKER_TOKEN or --broker-token-file`,
    ],
    [
      'baseUrl: https://x/\n',
      'bad-config',
      `${FILE}: unknown key baseUrl (known: reports, strict, suite, shard, verbose, profile, suites, baseline, failOnSkip, ca, cert, key, insecure, maxBody, timeout, tls, service, merchant, pact)`,
    ],
    [
      'merchant:\n  baseUrl: https://x/\n',
      'bad-config',
      `${FILE}: unknown key merchant.baseUrl (known in merchant: reports, strict, suite, shard, verbose, profile, suites, baseline, failOnSkip, ca, cert, key, insecure, maxBody, timeout, tls, callbackUrl, privateKey, probeUrl, probeCmd, restart, apiKeyFile, expiredKeyFile, futureKeyFile, probeTokenFile)`,
    ],
    ['strict: yes please\n', 'bad-config', `${FILE}: strict must be true or false, not a string`],
    ['maxBody: -1\n', 'bad-config', `${FILE}: maxBody must be a whole number, not a number`],
    ['maxBody: 1.5\n', 'bad-config', `${FILE}: maxBody must be a whole number, not a number`],
    ['timeout: 0\n', 'bad-config', `${FILE}: timeout must be a positive number, not a number`],
    ['suites: []\n', 'bad-config', `${FILE}: suites must be a path or a list of paths, not a list`],
    ['service:\n  baseUrl: ""\n', 'bad-config', `${FILE}: service.baseUrl must be a non-empty string, not a string`],
    [
      'service:\n  publicKey: [a]\n',
      'bad-config',
      `${FILE}: service.publicKey must be a file or folder path, not a list`,
    ],
    ['service: 3\n', 'bad-config', `${FILE}: service must be a mapping of option names to values, not a number`],
    ['- a\n- b\n', 'bad-config', `${FILE}: the file must be a mapping of option names to values, not a list`],
  ])('refuses %j in one line', (text, reason, message) => {
    expect(refusal(() => parseConfigFile(text, FILE))).toEqual([reason, message]);
  });

  it('names a value of the wrong type by its type, never by its value (it may be a pasted secret)', () => {
    const [, message] = refusal(() => parseConfigFile('service:\n  apiKeyFile: [sk_live_4242424242]\n', FILE))!;
    expect(message).toBe(`${FILE}: service.apiKeyFile must be a file or folder path, not a list`);
  });

  it('says where YAML it cannot read went wrong, in one line', () => {
    const [reason, message] = refusal(() => parseConfigFile('service:\n  baseUrl: [unclosed\n', FILE))!;
    expect(reason).toBe('bad-config');
    expect(message).toMatch(new RegExp(`^${FILE}: not valid YAML: [^\\n]+$`));
  });
});

describe("a command's values", () => {
  const config = parseConfigFile(
    'reports: top\nservice:\n  reports: svc\n  baseUrl: https://s/\npact:\n  reports: pact\n  privateKey: k.pem\n',
    FILE,
  );

  it('come from the top level, then each section in order (later wins)', () => {
    expect(configValues(config, ['service'])).toEqual({ reports: '/ci/svc', baseUrl: 'https://s/' });
    expect(configValues(config, ['service', 'pact'])).toEqual({
      reports: '/ci/pact',
      baseUrl: 'https://s/',
      privateKey: '/ci/k.pem',
    });
    expect(configValues(config, ['merchant'])).toEqual({ reports: '/ci/top' });
    expect(configValues(undefined, ['service'])).toEqual({});
  });

  it.each<[string, string[], string]>([
    ['baseUrl', ['service'], 'service.baseUrl'],
    ['privateKey', ['merchant', 'pact'], 'merchant.privateKey'],
    ['brokerTokenFile', ['service', 'pact'], 'pact.brokerTokenFile'],
    ['reports', ['service'], 'reports'],
  ])('%s of %j lives at %s', (name, sections, key) => {
    expect(configKeyOf(name, sections as never)).toBe(key);
  });

  it('a missing required option is one line naming the flag and the key', () => {
    expect(refusal(() => requireOption({ flags: {}, values: {} }, 'baseUrl', 'service.baseUrl'))).toEqual([
      'missing-option',
      '--base-url is required (or service.baseUrl in wallet-conformance.yaml)',
    ]);
    expect(
      refusal(() =>
        requireOption(
          { flags: { callbackUrl: '' }, values: {}, file: 'ci.yaml' },
          'callbackUrl',
          'merchant.callbackUrl',
        ),
      ),
    ).toEqual(['missing-option', '--callback-url is required (or merchant.callbackUrl in ci.yaml)']);
    expect(requireOption({ flags: { baseUrl: 'https://s/' }, values: {} }, 'baseUrl', 'service.baseUrl')).toBe(
      'https://s/',
    );
  });
});

describe('filling a command from --config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-config-file-'));
  const file = join(dir, 'ci.yaml');
  writeFileSync(
    file,
    'reports: from-file\nstrict: true\nmerchant:\n  callbackUrl: http://file/cb\n  apiKeyFile: ak.txt\n',
  );
  const command = () =>
    new Command()
      .exitOverride()
      .option('--config <file>')
      .option('--reports <dir>', '', 'reports')
      .option('--strict')
      .option('--url <url>')
      .option('--api-key-file <file>');

  it('fills what no flag gave, keeps what a flag gave, renames by alias and leaves secret files to the secrets', () => {
    const cmd = command().parse(['--config', file, '--reports', 'from-flag'], { from: 'user' });
    const applied = applyConfigFile(cmd, ['merchant'], { callbackUrl: 'url' });
    expect(applied.flags).toEqual({ config: file, reports: 'from-flag', strict: true, url: 'http://file/cb' });
    expect(applied.values.apiKeyFile).toBe(join(dir, 'ak.txt'));
    expect(applied.file).toBe(file);
    expect(cmd.getOptionValueSource('strict')).toBe('config');
  });

  it('a --config file that is not there is one line', () => {
    const missing = join(dir, 'nope.yaml');
    expect(
      refusal(() => applyConfigFile(command().parse(['--config', missing], { from: 'user' }), ['merchant'])),
    ).toEqual(['unreadable-file', `cannot read config file ${missing}: no such file`]);
  });
});
