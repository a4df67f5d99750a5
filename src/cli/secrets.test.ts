import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { readSecretFile, scrubOutput, secretSource, settleFlags } from './secrets.js';
import { refusal } from '../../test/support/refusal.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-secrets-'));
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const EMPTY_CONFIG = write('empty.yaml', '');

/** A merchant command with the API key's three forms, settled from argv and an environment. */
function settle(argv: string[], env: NodeJS.ProcessEnv = {}, required = true): Record<string, unknown> {
  const command = new Command()
    .exitOverride()
    .option('--config <file>')
    .option('--api-key <key>')
    .option('--api-key-file <file>')
    .option('--callback-url <url>');
  command.parse(argv.includes('--config') ? argv : ['--config', EMPTY_CONFIG, ...argv], { from: 'user' });
  return settleFlags<Record<string, unknown>>(command, { sections: ['merchant'], secrets: { apiKey: required }, env });
}

describe('a secret, from flag, file flag, environment or config file', () => {
  const file = write('ak.txt', 'ak_from_file_0001\n');
  const config = write('ci.yaml', `merchant:\n  apiKeyFile: ${write('ak-config.txt', 'ak_from_config_0002')}\n`);

  it.each<[string, string[], NodeJS.ProcessEnv, string, string]>([
    [
      'the flag',
      ['--api-key', 'ak_from_flag_0003'],
      { WALLET_API_KEY: 'ak_from_env_0004' },
      'ak_from_flag_0003',
      '--api-key',
    ],
    [
      'the file flag, one trailing newline dropped',
      ['--api-key-file', file],
      { WALLET_API_KEY: 'ak_from_env_0004' },
      'ak_from_file_0001',
      `--api-key-file ${file}`,
    ],
    [
      'the environment over the config file',
      ['--config', config],
      { WALLET_API_KEY: 'ak_from_env_0004' },
      'ak_from_env_0004',
      'env WALLET_API_KEY',
    ],
    [
      'the config file when the variable is empty (CI gives a missing secret as "")',
      ['--config', config],
      { WALLET_API_KEY: '' },
      'ak_from_config_0002',
      `merchant.apiKeyFile in ${config}`,
    ],
  ])('comes from %s, says where from and is scrubbed from output', (_what, argv, env, value, source) => {
    expect(settle(argv, env).apiKey).toBe(value);
    expect(secretSource('apiKey')).toBe(source);
    expect(scrubOutput(`answer: ${value}`)).not.toContain(value);
  });

  it.each<[string, string[], string, string]>([
    [
      'both forms',
      ['--api-key', 'x', '--api-key-file', 'y'],
      'bad-flag',
      'give the API key once: --api-key or --api-key-file, not both',
    ],
    ['an empty flag', ['--api-key', ''], 'empty-secret', '--api-key is empty'],
    [
      'nothing at all',
      [],
      'missing-secret',
      'no API key: give it with --api-key-file FILE, env WALLET_API_KEY, merchant.apiKeyFile in wallet-conformance.yaml, or --api-key VALUE',
    ],
  ])('refuses %s in one line', (_what, argv, reason, message) => {
    expect(refusal(() => settle(argv))).toEqual([reason, message]);
  });

  it('leaves an optional secret out when it is given nowhere', () => {
    expect(settle(['--callback-url', 'http://127.0.0.1:1/cb'], {}, false)).not.toHaveProperty('apiKey');
  });

  it('an unreadable or empty secret file is one line naming the file and where it was named, never its content', () => {
    const missing = join(dir, 'missing.txt');
    expect(refusal(() => settle(['--api-key-file', missing]))).toEqual([
      'unreadable-file',
      `cannot read API key file (--api-key-file) ${missing}: no such file`,
    ]);
    const empty = write('empty.txt', '\n');
    expect(refusal(() => readSecretFile(empty, 'probe token', 'merchant.probeTokenFile in ci.yaml'))).toEqual([
      'empty-secret',
      `the probe token file ${empty} (merchant.probeTokenFile in ci.yaml) is empty`,
    ]);
    expect(readSecretFile(write('crlf.txt', 'tok\r\n\r\n'), 'probe token', '--probe-token-file')).toBe('tok\r\n');
  });
});
