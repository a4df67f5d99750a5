import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { runCli, serveMerchant } from './support/cli.js';
import { deliver, EXACT_AMOUNT, seal, withdrawal } from './support/merchant.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wc-merchant-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    child.once('exit', (code) => done(code));
    child.kill('SIGTERM');
  });
}

describe('wallet-conformance merchant', () => {
  it('--init writes a config and a key pair; --config serves callbacks and the probe until SIGTERM', async () => {
    const init = runCli(['merchant', '--init', dir]);
    expect(init.status, init.stderr).toBe(0);
    for (const name of [
      'merchant.yaml',
      'merchant-private.pem',
      'merchant-public.pem',
      'merchant-private.b64',
      'merchant-public.b64',
    ]) {
      expect(init.stdout).toContain(join(dir, name));
    }
    const config = readFileSync(join(dir, 'merchant.yaml'), 'utf8');
    const apiKey = /^apiKey: "([0-9a-f]+)"/m.exec(config)?.[1];
    expect(apiKey).toMatch(/^[0-9a-f]{32}$/);
    const privateKey = parseKey(readFileSync(join(dir, 'merchant-private.pem'), 'utf8')) as RsaPrivateKey;

    const merchant = await serveMerchant(join(dir, 'merchant.yaml'));
    const payload = withdrawal();
    expect((await deliver(merchant.callbackUrl, seal(payload, privateKey), { apiKey })).json).toEqual({
      errCode: 0,
      message: '',
    });
    expect((await deliver(merchant.callbackUrl, 'garbage', { apiKey: 'nope' })).status).toBe(401);
    const probe = await (await fetch(merchant.probeUrl)).text();
    expect(probe).toContain(`"txid":"${String(payload.txid)}"`);
    expect(probe).toContain(`"amount":${EXACT_AMOUNT}`);
    expect(await stop(merchant.child)).toBe(0);
    const log = merchant.output();
    expect(log).toMatch(/ processed withdrawal:[0-9a-f]+ \(type 3, requestUUID /);
    expect(log).toMatch(/ unauthorized \(unknown X-API-KEY\)/);
    expect(log).toMatch(/merchant stopped\n$/);

    // The store is a file beside the config: a restarted merchant still knows the event.
    const again = await serveMerchant(join(dir, 'merchant.yaml'));
    expect(
      (await deliver(again.callbackUrl, seal({ ...payload, requestUUID: 'r-after-restart' }, privateKey), { apiKey }))
        .json,
    ).toEqual({
      errCode: 0,
      message: '',
    });
    expect(await stop(again.child)).toBe(0);
    expect(again.output()).toMatch(/ duplicate withdrawal:/);
  });

  it('--init refuses to overwrite an existing config or key pair without --force', () => {
    const run = runCli(['merchant', '--init', dir]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/merchant\.yaml.* exists already \(use --force to overwrite\)/);
  });

  it.each([
    [['merchant'], /merchant needs --config FILE/],
    [
      ['merchant', '--config', '/nonexistent/merchant.yaml'],
      /cannot read merchant config \/nonexistent\/merchant.yaml: no such file/,
    ],
    [['merchant', '--config', 'BAD', '--port', 'x'], /--port takes a whole number/],
  ])('refuses %j with one clear line and exit 2', (args, message) => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiKey: k\npublicKey: merchant-public.pem\nport: 8080\n');
    const run = runCli(args.map((arg) => (arg === 'BAD' ? bad : arg)));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a config with an unknown field with one clear line and exit 2', () => {
    const bad = join(dir, 'typo.yaml');
    writeFileSync(bad, 'apiKey: k\npublicKey: merchant-public.pem\nbodylimit: 10\n');
    const run = runCli(['merchant', '--config', bad]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/typo\.yaml: unknown field 'bodylimit' \(known: /);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
