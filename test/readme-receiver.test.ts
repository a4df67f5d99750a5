// The merchant guide's receiver (docs/merchant-guide.md, "A receiver on the library (Node)") is run as a user
// would copy it: the code block is written to receiver.mjs in a project that has the package in
// node_modules, started with node, and delivered callbacks; its probe must give back each
// processed event exactly once, amount digits intact.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealBytes } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { ROOT } from './support/cli.js';
import { freePort } from './support/ports.js';

const readme = readFileSync(join(ROOT, 'docs/merchant-guide.md'), 'utf8');
const code = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(readme)?.[1];
const keys = generateMerchantKeyPair(1024);
const privateKey = parseKey(keys.privatePem) as RsaPrivateKey;
const API_KEY = 'ak_readme_receiver';
let dir: string;
let child: ChildProcess;
let base: string;
let output = '';

beforeAll(async () => {
  if (!code) throw new Error('docs/merchant-guide.md has no ```js block starting with "// receiver.mjs"');
  dir = mkdtempSync(join(tmpdir(), 'wc-readme-receiver-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'wallet-conformance'));
  writeFileSync(join(dir, 'receiver.mjs'), code);
  writeFileSync(join(dir, 'merchant-public.pem'), keys.publicPem);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, ['receiver.mjs'], {
    cwd: dir,
    env: { ...process.env, WALLET_API_KEY: API_KEY, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Ready when the probe answers: bounded to 50 tries over 10 s.
  for (let i = 0; i < 50; i++) {
    if (
      await fetch(`${base}/probe`).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((wait) => setTimeout(wait, 200));
  }
  throw new Error(`the merchant guide's receiver did not start: ${output}`);
}, 30_000);

afterAll(() => {
  child?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One delivery as the service makes it: raw Base64 body, X-API-KEY, a fresh requestUUID. */
async function deliver(payload: string, apiKey = API_KEY): Promise<{ status: number; body: string }> {
  const text = payload.replace('"requestUUID":""', `"requestUUID":"${randomUUID()}"`);
  const body = sealBytes(Buffer.from(text), 'callback', privateKey);
  const response = await fetch(`${base}/callback`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'text/plain' },
    body,
  });
  return { status: response.status, body: await response.text() };
}

const WITHDRAWAL =
  '{"type":3,"requestUUID":"","trackingId":"wd-1","tenantUserId":"20931","business":0,"txid":"ab12","callBackId":"wd-0001","chain":"TRON","symbol":"USDT","toAddress":"TQn9","amount":12345678901234567890.123}';

describe("the merchant guide's receiver", () => {
  it('processes a redelivered withdrawal once, acknowledges both, and its probe returns the exact payload', async () => {
    expect(await deliver(WITHDRAWAL)).toEqual({ status: 200, body: '{"errCode":0,"message":""}' });
    expect(await deliver(WITHDRAWAL)).toEqual({ status: 200, body: '{"errCode":0,"message":""}' });
    const probe = JSON.parse(
      (await (await fetch(`${base}/probe`)).text()).replace(/"amount":([\d.]+)/g, '"amount":"$1"'),
    ) as {
      processed: Array<Record<string, unknown>>;
    };
    expect(probe.processed).toHaveLength(1);
    expect(probe.processed[0]).toMatchObject({ txid: 'ab12', amount: '12345678901234567890.123' });
    expect(output).toContain('amount 12345678901234567890.123');
  });

  it('refuses an unknown key with 401 and a zero amount with a non-zero errCode (the service retries)', async () => {
    expect((await deliver(WITHDRAWAL.replace('"ab12"', '"cd34"'), 'ak_wrong')).status).toBe(401);
    const zero = await deliver(WITHDRAWAL.replace('"ab12"', '"ef56"').replace('12345678901234567890.123', '0.000'));
    expect(zero.status).toBe(200);
    expect(JSON.parse(zero.body)).not.toMatchObject({ errCode: 0 });
  });
});
