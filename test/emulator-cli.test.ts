import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { runCli, serveEmulator } from './support/cli.js';

let dir: string;

/** Stops the emulator; resolves once its output is closed, so output() then holds everything it printed. */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolvePromise) => {
    child.on('close', (code) => resolvePromise(code));
    child.kill('SIGTERM');
  });
}

async function energyMaxCount(url: string, configPath: string): Promise<string> {
  const merchant = loadEmulatorConfig(configPath).merchants[0]!;
  const data = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', merchant.keyPair.publicKey);
  const res = await fetch(`${url}/api/v1/api/order/getEnergyMaxCount`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': merchant.apiKey },
    body: new URLSearchParams({ data }),
  });
  const envelope = (await res.json()) as { code: number; data: string };
  expect(envelope.code).toBe(0);
  return openJson(envelope.data, 'response', merchant.keyPair.publicKey).text;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wc-emu-cli-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('wallet-conformance emulator', () => {
  it('--init writes emulator.yaml and a key pair, and refuses to overwrite them without --force', () => {
    const setup = join(dir, 'setup');
    const run = runCli(['emulator', '--init', setup]);
    expect(run.status, run.stderr).toBe(0);
    for (const name of [
      'emulator.yaml',
      'merchant-private.pem',
      'merchant-public.pem',
      'merchant-private.b64',
      'merchant-public.b64',
    ])
      expect(run.stdout).toContain(join(setup, name));
    expect(run.stdout).toContain(`next: wallet-conformance emulator --config ${join(setup, 'emulator.yaml')}`);
    expect(statSync(join(setup, 'merchant-private.pem')).mode & 0o077).toBe(0);
    const yaml = readFileSync(join(setup, 'emulator.yaml'), 'utf8');
    expect(yaml).toMatch(/key: forbidden-[0-9a-f]+/);
    expect(yaml).toMatch(/key: expired-[0-9a-f]+/);
    // The main key's window under the names an extra key and merchant.yaml use; it loads back as that window.
    expect(yaml).toMatch(/^ {4}apiKeyNotBefore: '2020-01-01T00:00:00Z'/m);
    expect(yaml).toMatch(/^ {4}apiKeyNotAfter: '2099-12-31T23:59:59Z'/m);
    expect(yaml).not.toMatch(/^ {4}apiKeyValid(From|Until):/m);
    expect(loadEmulatorConfig(join(setup, 'emulator.yaml')).merchants[0]).toMatchObject({
      apiKeyValidFrom: '2020-01-01T00:00:00Z',
      apiKeyValidUntil: '2099-12-31T23:59:59Z',
    });
    const again = runCli(['emulator', '--init', setup]);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/exists already \(use --force to overwrite\)\n$/);
    expect(runCli(['emulator', '--init', setup, '--force']).status).toBe(0);
  });

  it('serves --config on --port 0, answers getEnergyMaxCount and stops cleanly on SIGTERM', async () => {
    const setup = join(dir, 'setup');
    const { child, url, token, output } = await serveEmulator([
      '--config',
      join(setup, 'emulator.yaml'),
      '--port',
      '0',
    ]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(token).toBe(loadEmulatorConfig(join(setup, 'emulator.yaml')).control.token);
      expect(await energyMaxCount(url, join(setup, 'emulator.yaml'))).toBe(
        '{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}',
      );
      // The access log line follows the answer: wait for it (bounded), not for a fixed time.
      for (let i = 0; i < 500 && !/POST \/api\/v1\/api\/order\/getEnergyMaxCount 200/.test(output()); i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(output()).toMatch(/POST \/api\/v1\/api\/order\/getEnergyMaxCount 200/);
      expect(output()).toMatch(
        /merchant 10086: api key ak_[0-9a-f]+, forbidden key forbidden-[0-9a-f]+, expired key expired-[0-9a-f]+/,
      );
    } finally {
      expect(await stop(child)).toBe(0);
    }
    expect(output()).toContain('emulator stopped');
    expect(existsSync(join(setup, 'emulator.sqlite'))).toBe(true);
  });

  it('without --config runs a throwaway in-memory setup and removes it on exit', async () => {
    const { child, url, output } = await serveEmulator(['--port', '0', '--quiet']);
    const configPath = /throwaway setup \(removed on exit\): (\S+)/.exec(output())?.[1];
    try {
      // <tmpdir>/wallet-conformance-emulator-XXXXXX/emulator.yaml, the folder removed on exit.
      const folder = dirname(configPath ?? '');
      expect([dirname(folder), basename(folder).replace(/[^-]+$/, 'XXXXXX'), basename(configPath ?? '')]).toEqual([
        tmpdir(),
        'wallet-conformance-emulator-XXXXXX',
        'emulator.yaml',
      ]);
      expect(await energyMaxCount(url, configPath!)).toContain('"energyMaxCount":312');
    } finally {
      expect(await stop(child)).toBe(0);
    }
    // Everything the emulator printed, read to the end of its output: --quiet logged no request.
    expect(output()).not.toMatch(/POST \/api/);
    expect(existsSync(configPath!)).toBe(false);
  });

  it('reports a bad config in one line with exit status 2', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'control: {token: t}\nmerchants: []\nportt: 1\n');
    const run = runCli(['emulator', '--config', join(dir, 'bad.yaml')]);
    expect(run.status).toBe(2);
    // One line naming the file, the field and the known fields (the list grows with the config).
    expect(run.stderr).toMatch(
      new RegExp(
        `^wallet-conformance: ${join(dir, 'bad.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: unknown field 'portt' \\(known: host, port, store, [\\w, ]*policies[\\w, ]*\\)\\n$`,
      ),
    );
    writeFileSync(
      join(dir, 'bad-policy.yaml'),
      'control: {token: t}\nmerchants: []\npolicies: {cardRegistry: maybe}\n',
    );
    expect(runCli(['emulator', '--config', join(dir, 'bad-policy.yaml')]).stderr).toBe(
      `wallet-conformance: ${join(dir, 'bad-policy.yaml')}: policies.cardRegistry: must be one of on, off, not "maybe"\n`,
    );
    expect(runCli(['emulator', '--port', 'x']).stderr).toMatch(/--port takes a whole number/);
  });
});
