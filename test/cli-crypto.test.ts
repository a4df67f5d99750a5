import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sealBytes } from '../src/crypto/codec.js';
import { parseKey } from '../src/crypto/keys.js';
import { runCli } from './support/cli.js';
import { runCliInProcess, type InProcessRun } from './support/cli-in-process.js';

const payload = '{"type":3,"requestUUID":"r-1","trackingId":"t+/=","amount":12345678901234567890.123,"note":"ü€ zzz"}';
let dir: string;

/** Expects the CLI's own error shape: exit 2, one line, no stack trace. */
function expectToolkitError(run: ReturnType<typeof runCli> | InProcessRun, message: RegExp): void {
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(message);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

describe('wallet-conformance keys and crypto commands', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wc-cli-'));
    const run = runCli(['keys', 'generate', '--out', dir]);
    expect(run.status, run.stderr).toBe(0);
  });

  it('keys generate writes PKCS#8 and SPKI PEM plus bare Base64 DER, the private halves readable only by the owner', () => {
    expect(readFileSync(join(dir, 'merchant-private.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(readFileSync(join(dir, 'merchant-public.pem'), 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(readFileSync(join(dir, 'merchant-public.b64'), 'utf8')).toMatch(
      /^MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ[A-Za-z0-9+/]+={0,2}\n$/,
    );
    expect(statSync(join(dir, 'merchant-private.pem')).mode & 0o077).toBe(0);
    expect(statSync(join(dir, 'merchant-private.b64')).mode & 0o077).toBe(0);
  });

  // Refusals that end in the argument checks run the built CLI's main in-process (test/support/cli-in-process.ts).
  it('keys generate refuses to overwrite a key pair and refuses odd sizes', async () => {
    expectToolkitError(await runCliInProcess(['keys', 'generate', '--out', dir]), /exists already \(use --force/);
    expectToolkitError(
      await runCliInProcess(['keys', 'generate', '--out', join(dir, 'x'), '--bits', '1000']),
      /--bits must be one of 1024, 2048, 3072, 4096/,
    );
  });

  it('crypto encrypt then decrypt gives back the exact bytes in every direction', () => {
    for (const [direction, encKey, decKey] of [
      ['callback', '--private-key', '--public-key'],
      ['response', '--private-key', '--public-key'],
      ['request', '--public-key', '--private-key'],
    ] as const) {
      const keyFile = (flag: string) =>
        join(dir, flag === '--private-key' ? 'merchant-private.pem' : 'merchant-public.b64');
      const sealed = runCli(['crypto', 'encrypt', '--direction', direction, encKey, keyFile(encKey)], payload);
      expect(sealed.status, sealed.stderr).toBe(0);
      expect(sealed.stdout.trim()).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
      const opened = runCli(['crypto', 'decrypt', '--direction', direction, decKey, keyFile(decKey)], sealed.stdout);
      expect(opened.status, opened.stderr).toBe(0);
      expect(opened.stdoutBytes.equals(Buffer.from(payload))).toBe(true);
    }
  });

  it('crypto decrypt --pretty formats JSON without rounding amounts', () => {
    // Sealed here (crypto encrypt is proven above): what is under test is decrypt's --pretty.
    const sealed = sealBytes(
      Buffer.from(payload),
      'callback',
      parseKey(readFileSync(join(dir, 'merchant-private.pem'), 'utf8')),
    );
    const pretty = runCli(
      ['crypto', 'decrypt', '--direction', 'callback', '--public-key', join(dir, 'merchant-public.pem'), '--pretty'],
      sealed,
    );
    expect(pretty.stdout).toContain('"amount": 12345678901234567890.123');
  });

  it('crypto honours a profile file', () => {
    writeFileSync(join(dir, 'oaep.yaml'), 'padding: oaep-sha256\ncallback: private\n');
    const sealed = runCli(
      [
        'crypto',
        'encrypt',
        '--direction',
        'callback',
        '--private-key',
        join(dir, 'merchant-private.pem'),
        '--profile',
        join(dir, 'oaep.yaml'),
      ],
      payload,
    );
    expect(sealed.status, sealed.stderr).toBe(0);
    const wrongProfile = runCli(
      ['crypto', 'decrypt', '--direction', 'callback', '--public-key', join(dir, 'merchant-public.pem')],
      sealed.stdout,
    );
    expectToolkitError(wrongProfile, /OAEP with SHA-256.*\[padding-mismatch\]/);
    const opened = runCli(
      [
        'crypto',
        'decrypt',
        '--direction',
        'callback',
        '--public-key',
        join(dir, 'merchant-public.pem'),
        '--profile',
        join(dir, 'oaep.yaml'),
      ],
      sealed.stdout,
    );
    expect(opened.stdout).toBe(payload);
  });

  it.each([
    [
      ['crypto', 'decrypt', '--direction', 'callback', '--private-key', 'K'],
      /decrypting it takes --public-key, not --private-key/,
    ],
    [
      ['crypto', 'encrypt', '--direction', 'callback', '--public-key', 'K'],
      /encrypting it takes --private-key, not --public-key/,
    ],
    [
      ['crypto', 'encrypt', '--direction', 'sideways', '--public-key', 'K'],
      /--direction must be one of request, response, callback/,
    ],
    [['crypto', 'encrypt', '--direction', 'callback'], /needs --private-key FILE/],
    [
      ['crypto', 'decrypt', '--direction', 'callback', '--public-key', '/nonexistent/key.pem'],
      /cannot read public key \/nonexistent\/key.pem: no such file/,
    ],
    [['crypto', 'frobnicate'], /unknown command 'frobnicate'/],
    [['verify', '--nope'], /unknown command 'verify'|unknown option/],
  ])('refuses %j with one clear line and exit 2', async (args, message) => {
    // Each is refused before stdin is read.
    expectToolkitError(await runCliInProcess(args as string[]), message);
  });

  it.each([
    ['text that is not Base64', 'not base64 !!!', /\[whitespace\]|\[invalid-character\]/],
    ['a form body', 'data=abcd', /\[data-prefix\]/],
    ['a ciphertext under another key', null, /\[wrong-key\]/],
  ])('crypto decrypt explains %s in one line', (_label, input, message) => {
    let text = input;
    if (text === null) {
      // Sealed here under a stranger's fresh key pair (keys generate and crypto encrypt are proven above).
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      text = sealBytes(
        Buffer.from(payload),
        'callback',
        parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
      );
    }
    expectToolkitError(
      runCli(['crypto', 'decrypt', '--direction', 'callback', '--public-key', join(dir, 'merchant-public.pem')], text),
      message,
    );
  });

  it('crypto encrypt refuses input that is not JSON unless --raw', () => {
    expectToolkitError(
      runCli(
        ['crypto', 'encrypt', '--direction', 'callback', '--private-key', join(dir, 'merchant-private.pem')],
        'hello',
      ),
      /stdin is not JSON/,
    );
    const raw = runCli(
      ['crypto', 'encrypt', '--direction', 'callback', '--private-key', join(dir, 'merchant-private.pem'), '--raw'],
      'hello',
    );
    expect(raw.status).toBe(0);
  });
});
