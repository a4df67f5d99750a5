import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { runCliAsync } from './support/cli.js';

/**
 * Secrets never need argv (issue 12): the API key comes from --api-key-file, WALLET_API_KEY or the
 * config file's service.apiKeyFile; a flag beats the environment, which beats the file. The
 * emulator tells which key arrived: a wrong one stops the run at the pre-flight (exit 2).
 */
describe('where verify takes the API key from', () => {
  let embedded: Embedded;
  const cwd = mkdtempSync(join(tmpdir(), 'wc-precedence-'));
  const NO_SECRETS = {
    WALLET_API_KEY: undefined,
    WALLET_CONTROL_TOKEN: undefined,
    WALLET_FORBIDDEN_KEY: undefined,
    WALLET_EXPIRED_KEY: undefined,
    WALLET_FUTURE_KEY: undefined,
  };
  const wrongKey = 'wrong-key-0000000000';

  beforeAll(async () => {
    embedded = await startEmbedded();
    const s = embedded.service;
    writeFileSync(join(cwd, 'public.pem'), s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
    // Keys as editors and `echo` write them: with a line end, which is not part of the key.
    writeFileSync(join(cwd, 'right-key'), `${s.apiKey}\n`);
    writeFileSync(join(cwd, 'wrong-key'), `${wrongKey}\r\n`);
    writeFileSync(join(cwd, 'empty-key'), '\n');
    const config = (keyFile: string) =>
      `reports: out\nsuite: service/energy\nservice:\n  baseUrl: ${s.baseUrl}\n  publicKey: public.pem\n  userId: ${s.userId}\n  apiKeyFile: ${keyFile}\n`;
    writeFileSync(join(cwd, 'wrong.yaml'), config('wrong-key'));
    writeFileSync(join(cwd, 'right.yaml'), config('right-key'));
  });
  afterAll(() => embedded.close());

  const verify = (args: string[], env: Record<string, string | undefined> = {}) =>
    runCliAsync(['verify', 'service', ...args], { cwd, env: { ...NO_SECRETS, ...env } });

  it('takes the key from the config file when neither a flag nor the environment gives one', async () => {
    const run = await verify(['--config', 'right.yaml']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 60_000);

  it('prefers the environment to the config file', async () => {
    const run = await verify(['--config', 'wrong.yaml'], { WALLET_API_KEY: embedded.service.apiKey });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 60_000);

  it('prefers --api-key-file to the environment', async () => {
    const run = await verify(['--config', 'wrong.yaml', '--api-key-file', 'right-key'], { WALLET_API_KEY: wrongKey });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 60_000);

  it('prefers --api-key to the environment, and never shows the refused key', async () => {
    const run = await verify(['--config', 'right.yaml', '--api-key', wrongKey], {
      WALLET_API_KEY: embedded.service.apiKey,
    });
    // The emulator refuses the wrong key: the pre-flight stops the run (2) or the checks fail (1).
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/401|not accepted/);
    expect(run.stdout + run.stderr).not.toContain(wrongKey);
  }, 60_000);

  it('counts an empty WALLET_API_KEY (how CI passes a missing secret) as not given', async () => {
    const run = await verify(['--config', 'right.yaml'], { WALLET_API_KEY: '' });
    expect(run.status).toBe(0);
  }, 60_000);

  it('names every way to give a missing key in one line (exit 2)', async () => {
    const run = await verify(['--base-url', embedded.service.baseUrl, '--public-key', 'public.pem']);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'wallet-conformance: no API key: give it with --api-key-file FILE, env WALLET_API_KEY, service.apiKeyFile in wallet-conformance.yaml, or --api-key VALUE\n',
    );
  });

  it('refuses a key given twice on the command line, and an empty key file', async () => {
    const twice = await verify(['--config', 'right.yaml', '--api-key', 'x', '--api-key-file', 'right-key']);
    expect(twice.status).toBe(2);
    expect(twice.stderr).toBe('wallet-conformance: give the API key once: --api-key or --api-key-file, not both\n');
    const empty = await verify(['--config', 'right.yaml', '--api-key-file', 'empty-key']);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toBe('wallet-conformance: the API key file empty-key (--api-key-file) is empty\n');
  });

  it('reads the control token from WALLET_CONTROL_TOKEN and the Pact Broker token from --broker-token-file', async () => {
    const withToken = await verify(['--config', 'right.yaml', '--suite', 'service/card'], {
      WALLET_CONTROL_TOKEN: embedded.service.controlToken,
    });
    expect(withToken.status).toBe(0);
    expect(withToken.stdout).not.toContain(embedded.service.controlToken!);
    const missing = await runCliAsync(
      [
        'pact',
        'verify',
        '--base-url',
        embedded.service.baseUrl,
        '--api-key-file',
        'right-key',
        '--public-key',
        'public.pem',
        '--broker-token-file',
        'no-such-token',
      ],
      { cwd, env: NO_SECRETS },
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      'wallet-conformance: cannot read Pact Broker token file (--broker-token-file) no-such-token: no such file\n',
    );
  }, 60_000);
});
