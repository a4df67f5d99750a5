// A new user's first hour from the manual alone: emulator and merchant set up to talk to each other
// with --init and no file edited, a curl-ready ciphertext, and a warning for a mistyped field.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from './support/cli.js';
import { freePort } from './support/ports.js';

let dir: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wc-pairing-'));
});
afterAll(async () => {
  await Promise.all(children.map(stop));
  rmSync(dir, { recursive: true, force: true });
});

/** A long-running CLI command; `waitFor` resolves with the first match of its output (20 s at most). */
function start(args: string[]) {
  const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const waitFor = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((done, fail) => {
      const check = () => {
        const match = pattern.exec(output);
        if (!match) return;
        listeners.delete(check);
        clearTimeout(timer);
        done(match);
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        fail(new Error(`no ${pattern} in: ${output}`));
      }, 20_000);
      listeners.add(check);
      check();
    });
  return { child, waitFor, output: () => output };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

describe('emulator --init and merchant --init paired', () => {
  it('emulator --init --merchant shares the key pair, API key and callback URL, so an emitted callback is processed', async () => {
    const port = await freePort();
    const merchantDir = join(dir, 'merchant');
    const emulatorDir = join(dir, 'emulator');
    expect(runCli(['merchant', '--init', merchantDir, '--port', String(port)]).status).toBe(0);
    const paired = runCli(['emulator', '--init', emulatorDir, '--merchant', join(merchantDir, 'merchant.yaml')]);
    expect(paired.status, paired.stderr).toBe(0);
    expect(paired.stdout).toContain(`callbacks go to http://127.0.0.1:${port}/callback`);
    expect(readFileSync(join(emulatorDir, 'merchant-private.pem'), 'utf8')).toBe(
      readFileSync(join(merchantDir, 'merchant-private.pem'), 'utf8'),
    );

    const merchant = start(['merchant', '--config', join(merchantDir, 'merchant.yaml')]);
    await merchant.waitFor(/merchant listening on /);
    const emulator = start(['emulator', '--config', join(emulatorDir, 'emulator.yaml'), '--port', '0']);
    const [, baseUrl, token] = await emulator.waitFor(
      /emulator listening on (http:\/\/127\.0\.0\.1:\d+) \(control token: (\w+)\)/,
    );

    const emitted = await fetch(`${baseUrl}/__control/merchants/10086/callbacks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-control-token': token! },
      body: JSON.stringify({ type: 1, fields: { amount: '12345678901234567890.123' } }),
    });
    expect(emitted.status).toBe(200);
    const { trackingId } = (await emitted.json()) as { trackingId: string };
    await merchant.waitFor(/ processed deposit:/);
    const probe = await (await fetch(`http://127.0.0.1:${port}/probe`)).text();
    expect(probe).toContain(`"trackingId":"${trackingId}"`);
    expect(probe).toContain('"amount":"12345678901234567890.123"');
    expect(merchant.output()).not.toMatch(/unauthorized|rejected/);
    await Promise.all([stop(merchant.child), stop(emulator.child)]);
  });

  it('merchant --init --emulator takes the emulator merchant key pair, API key, profile and callback port', () => {
    const emulatorDir = join(dir, 'emulator-first');
    const merchantDir = join(dir, 'merchant-second');
    expect(runCli(['emulator', '--init', emulatorDir]).status).toBe(0);
    const paired = runCli(['merchant', '--init', merchantDir, '--emulator', join(emulatorDir, 'emulator.yaml')]);
    expect(paired.status, paired.stderr).toBe(0);
    const emulator = parseYaml(readFileSync(join(emulatorDir, 'emulator.yaml'), 'utf8')) as {
      merchants: Array<{ apiKey: string; callbackUrl: string }>;
    };
    const merchant = parseYaml(readFileSync(join(merchantDir, 'merchant.yaml'), 'utf8')) as {
      apiKey: string;
      port: number;
      host: string;
      publicKey: string;
    };
    expect(merchant.apiKey).toBe(emulator.merchants[0]!.apiKey);
    expect(`http://${merchant.host}:${merchant.port}/callback`).toBe(emulator.merchants[0]!.callbackUrl);
    for (const file of ['merchant-private.pem', 'merchant-public.pem', 'merchant-public.b64']) {
      expect(readFileSync(join(merchantDir, file), 'utf8'), file).toBe(readFileSync(join(emulatorDir, file), 'utf8'));
    }
  });

  it.each([
    [['merchant', '--init', 'X', '--emulator', '/nonexistent/emulator.yaml'], /\/nonexistent\/emulator\.yaml/],
    [['merchant', '--config', 'X', '--emulator', 'E'], /--emulator and --user-id go with --init DIR/],
    [['emulator', '--merchant', 'M'], /--merchant goes with --init DIR/],
    [['merchant', '--init', 'X', '--emulator', 'E', '--port', '1'], /the port comes from the emulator's callbackUrl/],
  ])('refuses %j with one clear line and exit 2', (args, message) => {
    const run = runCli(args.map((arg) => (arg === 'X' ? join(dir, 'unused') : arg)));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('emulator --init --merchant refuses a merchant.yaml on port 0, which no emulator could reach', () => {
    const merchantDir = join(dir, 'merchant-port-0');
    expect(runCli(['merchant', '--init', merchantDir, '--port', '0']).status).toBe(0);
    const run = runCli([
      'emulator',
      '--init',
      join(dir, 'emulator-port-0'),
      '--merchant',
      join(merchantDir, 'merchant.yaml'),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/port is 0 \(any free port\)/);
  });
});

describe('crypto encrypt for curl', () => {
  it('writes no line end into a pipe or file, so curl -d data=@file sends strict Base64', () => {
    const keys = join(dir, 'merchant');
    const sealed = runCli(
      ['crypto', 'encrypt', '--direction', 'request', '--public-key', join(keys, 'merchant-public.pem')],
      '{"symbol":"ENERGY","chainName":"TRON"}',
    );
    expect(sealed.status, sealed.stderr).toBe(0);
    expect(sealed.stdout).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const opened = runCli(
      ['crypto', 'decrypt', '--direction', 'request', '--private-key', join(keys, 'merchant-private.pem')],
      sealed.stdout,
    );
    expect(opened.stdout).toBe('{"symbol":"ENERGY","chainName":"TRON"}');
  });

  it('takes -n as echo does', () => {
    const sealed = runCli(
      [
        'crypto',
        'encrypt',
        '-n',
        '--direction',
        'request',
        '--public-key',
        join(dir, 'merchant', 'merchant-public.pem'),
      ],
      '{}',
    );
    expect(sealed.stdout).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });
});

describe('callback send --field', () => {
  it('warns on one stderr line about a field the callback type does not have, and still sends it', async () => {
    const merchantDir = join(dir, 'merchant-fields');
    const port = await freePort();
    expect(runCli(['merchant', '--init', merchantDir, '--port', String(port)]).status).toBe(0);
    const apiKey = (parseYaml(readFileSync(join(merchantDir, 'merchant.yaml'), 'utf8')) as { apiKey: string }).apiKey;
    const merchant = start(['merchant', '--config', join(merchantDir, 'merchant.yaml')]);
    await merchant.waitFor(/merchant listening on /);
    const send = (field: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        const child = spawn(process.execPath, [
          resolve(ROOT, 'bin/wallet-conformance.js'),
          'callback',
          'send',
          '--url',
          `http://127.0.0.1:${port}/callback`,
          '--api-key',
          apiKey,
          '--private-key',
          join(merchantDir, 'merchant-private.pem'),
          '--type',
          '1',
          '--field',
          field,
        ]);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (status) => done({ status, stdout, stderr }));
      });
    const typo = await send('ammount=5');
    expect(typo.status, typo.stderr).toBe(0);
    expect(typo.stderr).toMatch(
      /^warning: callback type 1 has no field "ammount" \(known: [^)]*\bamount\b[^)]*\); sent anyway\n$/,
    );
    expect(typo.stdout).toContain('"ammount":5');
    const known = await send('txId=abc');
    expect(known.stderr).toBe('');
    await stop(merchant.child);
  });
});
