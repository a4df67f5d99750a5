import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configValues, parseConfigFile } from '../src/cli/config-file.js';
import { ConfigError } from '../src/core/errors.js';
import { runCliAsync } from './support/cli.js';

function refusal(text: string, path = '/ci/wallet-conformance.yaml'): string {
  try {
    parseConfigFile(text, path);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('parseConfigFile', () => {
  it('reads the top level and the sections, resolving paths against the file’s folder', () => {
    const config = parseConfigFile(
      'reports: out\nstrict: true\nservice:\n  baseUrl: https://wallet.example/api\n  publicKey: keys/public.pem\n  userId: 1001\n  apiKeyFile: secrets/api-key\nmerchant:\n  reports: merchant-out\n',
      '/ci/wallet-conformance.yaml',
    );
    expect(configValues(config, ['service'])).toEqual({
      reports: '/ci/out',
      strict: true,
      baseUrl: 'https://wallet.example/api',
      publicKey: '/ci/keys/public.pem',
      userId: '1001',
      apiKeyFile: '/ci/secrets/api-key',
    });
    expect(configValues(config, ['merchant'])).toEqual({ reports: '/ci/merchant-out', strict: true });
  });

  it('accepts an empty file', () => {
    expect(configValues(parseConfigFile('', '/ci/wallet-conformance.yaml'), ['service'])).toEqual({});
  });

  it('refuses an unknown key, naming it with its section and the file', () => {
    expect(refusal('service:\n  baseURL: https://wallet.example/\n')).toMatch(
      /^\/ci\/wallet-conformance\.yaml: unknown key service\.baseURL \(known in service: .*baseUrl/,
    );
    expect(refusal('report: out\n')).toMatch(/unknown key report \(known: reports,/);
  });

  it('refuses a value of the wrong type, naming the key and the type but never quoting the value', () => {
    expect(refusal('service:\n  userId: seven\n')).toBe(
      '/ci/wallet-conformance.yaml: service.userId must be a whole number, not a string',
    );
    expect(refusal('strict: "yes"\n')).toBe('/ci/wallet-conformance.yaml: strict must be true or false, not a string');
    expect(refusal('service: [1, 2]\n')).toMatch(/service must be a mapping/);
  });

  it('refuses a secret written into the file and names the ways to give it', () => {
    expect(refusal('service:\n  apiKey: sk_live_123\n')).toBe(
      '/ci/wallet-conformance.yaml: service.apiKey would put a secret in a file that gets committed; give it as apiKeyFile, WALLET_API_KEY or --api-key-file',
    );
    expect(refusal('sk_live_123')).toBe(
      '/ci/wallet-conformance.yaml: the file must be a mapping of option names to values, not a string',
    );
    expect(refusal('service:\n  userId: sk_live_123\n')).not.toContain('sk_live_123');
  });

  it('refuses text that is not YAML in one line', () => {
    const message = refusal('service: [unclosed\n');
    expect(message).toMatch(/^\/ci\/wallet-conformance\.yaml: not valid YAML: /);
    expect(message).not.toContain('\n');
  });
});

describe('the config file on the command line (exit 2, one line)', () => {
  it('names the unknown key and the file found in the working directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'wc-config-'));
    writeFileSync(join(cwd, 'wallet-conformance.yaml'), 'service:\n  base-url: http://127.0.0.1:9/\n');
    const run = await runCliAsync(['verify', 'service'], { cwd });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^wallet-conformance: wallet-conformance\.yaml: unknown key service\.base-url \(known in service: /,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('says which required option is missing and where the file would give it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'wc-config-'));
    const run = await runCliAsync(['verify', 'merchant', '--api-key', 'k'], { cwd });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'wallet-conformance: --callback-url is required (or merchant.callbackUrl in wallet-conformance.yaml)\n',
    );
  });

  it('refuses a --config file that does not exist', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'wc-config-'));
    const run = await runCliAsync(['run', '--config', 'ci.yaml'], { cwd });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^wallet-conformance: cannot read config file .*ci\.yaml: no such file\n$/);
  });

  it('keeps the emulator’s own --config (its YAML, not this file)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'wc-config-'));
    writeFileSync(join(cwd, 'emulator.yaml'), 'this: is not an emulator config\n');
    const run = await runCliAsync(['emulator', '--config', 'emulator.yaml'], { cwd });
    expect(run.status).toBe(2);
    expect(run.stderr).not.toMatch(/unknown key this \(known: reports/);
  });
});
