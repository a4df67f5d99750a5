// The generated handlers under setupWorker in a real browser: the page (test/fixtures/msw-browser)
// is bundled with esbuild, served on loopback next to msw's worker script, and driven by headless
// Chromium. Requests are sealed and answers opened here in Node with src/crypto, so the browser's
// node-forge codec is checked against the node:crypto one.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey } from '../src/crypto/keys.js';
import type { WalletCall } from '../src/generated/msw-handlers.js';
import type { StartOptions } from './fixtures/msw-browser/entry.js';

const ROOT = resolve(import.meta.dirname, '..');
const FIXTURE = resolve(ROOT, 'test/fixtures/msw-browser');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const FORM = 'application/x-www-form-urlencoded';

/** What the page exposes (entry.ts). */
interface WalletPage {
  startWallet(options: StartOptions): Promise<void>;
  post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }>;
  calls: WalletCall[];
}

const keys = generateMerchantKeyPair(1024);
const publicKey = parseKey(keys.publicPem, { expect: 'public' });
/** Paths the loopback server was asked for: a mocked call must never show up here. */
const served: string[] = [];
let server: Server;
let browser: Browser;
let page: Page;
let origin: string;

/**
 * Bundles the page. node:* stays external and code splitting keeps the runtime's lazy
 * `import('./node-codec.js')` in a chunk of its own, which the page never loads (it injects a codec).
 */
async function bundle(): Promise<Map<string, Uint8Array>> {
  const result = await build({
    entryPoints: [resolve(FIXTURE, 'entry.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    splitting: true,
    external: ['node:*'],
    outdir: resolve(FIXTURE, 'out'),
    write: false,
    logLevel: 'silent',
  });
  const files = new Map(result.outputFiles.map((file) => [`/${basename(file.path)}`, file.contents]));
  files.set(
    '/index.html',
    new TextEncoder().encode(
      '<!doctype html><meta charset="utf-8"><title>wallet msw</title><script type="module" src="/entry.js"></script>',
    ),
  );
  files.set('/mockServiceWorker.js', readFileSync(resolve(ROOT, 'node_modules/msw/lib/mockServiceWorker.js')));
  return files;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `msw-browser: no Chromium at ${CHROMIUM}; install it (apt-get install chromium) or set CHROMIUM_PATH to its executable`,
    );
  }
  const files = await bundle();
  server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    served.push(path);
    const file = files.get(path === '/' ? '/index.html' : path);
    if (!file) {
      response.writeHead(599, { 'content-type': 'text/plain' }).end(`not served: ${path}`);
      return;
    }
    response
      .writeHead(200, {
        'content-type': TYPES[path === '/' ? '.html' : path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream',
      })
      .end(file);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  // Service workers need a secure context: http://127.0.0.1 counts as one.
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${origin}/`);
  await page
    .waitForFunction(() => 'walletPage' in globalThis, undefined, { timeout: 10_000 })
    .catch((error: Error) => {
      throw new Error(`msw-browser: the page did not load: ${errors.join('; ') || error.message}`);
    });
  const options: StartOptions = {
    baseUrl: `${origin}/wallet`,
    cardBaseUrl: `${origin}/card`,
    merchant: { userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem },
  };
  await page.evaluate(
    (start) => (globalThis as unknown as { walletPage: WalletPage }).walletPage.startWallet(start),
    options,
  );
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((closed) => (server ? server.close(closed) : closed(undefined)));
});

/** A POST made by the page's own fetch, answered by the service worker. */
function pagePost(
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return page.evaluate(
    ({ url, body, headers }) =>
      (globalThis as unknown as { walletPage: WalletPage }).walletPage.post(url, body, headers),
    {
      url: `${origin}${path}`,
      body,
      headers,
    },
  );
}

const form = (plain: unknown): string => `data=${encodeURIComponent(sealJson(plain, 'request', publicKey))}`;

describe('the generated handlers under setupWorker in Chromium', () => {
  it('answers an encrypted getEnergyMaxCount from the service worker', async () => {
    const answer = await pagePost(
      '/wallet/api/v1/api/order/getEnergyMaxCount',
      form({ symbol: 'ENERGY', chainName: 'TRON' }),
      {
        'content-type': FORM,
        'x-api-key': 'ak_live',
      },
    );
    expect(answer.status, answer.text).toBe(200);
    const envelope = JSON.parse(answer.text) as { code: number; message: string; data: string };
    expect([envelope.code, envelope.message]).toEqual([0, '']);
    expect(openJson(envelope.data, 'response', publicKey).text).toBe(
      '{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}',
    );
  });

  it('answers an encrypted withdrawal, its amount digits kept exactly', async () => {
    const plain =
      '{"userId":10086,"tenantUserId":"20931","tenantType":1,"callBackId":"wd-b1","symbol":"USDT","chainName":"TRON","toAddr":"T1","amount":12345678901234567890.123}';
    const answer = await pagePost('/wallet/api/v1/api/order/withdrawWithoutVerify', form(plain), {
      'content-type': FORM,
      'x-api-key': 'ak_live',
    });
    const envelope = JSON.parse(answer.text) as { code: number; data: string };
    expect(envelope.code, answer.text).toBe(0);
    expect(openJson(envelope.data, 'response', publicKey).text).toBe('{"tenantUserId":20931,"id":"wd-b1"}');
    const calls = await page.evaluate(() =>
      (globalThis as unknown as { walletPage: WalletPage }).walletPage.calls.map((call) => call.plainText),
    );
    expect(calls).toContain(plain);
  });

  it('answers 401 with the exact body of ERR-401 for an unknown X-API-KEY', async () => {
    const answer = await pagePost(
      '/wallet/api/v1/api/order/getEnergyMaxCount',
      form({ symbol: 'ENERGY', chainName: 'TRON' }),
      {
        'content-type': FORM,
        'x-api-key': 'ak_wrong',
      },
    );
    expect(answer).toEqual({ status: 401, text: '{"code":"UNAUTHORIZED","message":"unauthorized"}' });
  });

  it('answers 404 for an unknown path under the base URL, from the worker', async () => {
    const answer = await pagePost('/wallet/api/v1/api/order/nothing', 'data=AAAA', {
      'content-type': FORM,
      'x-api-key': 'ak_live',
    });
    expect(answer).toEqual({ status: 404, text: '{"code":"NOT FOUND","message":"not found"}' });
  });

  it('never let a mocked call reach the loopback server, nor load the node:crypto codec', () => {
    expect(served.filter((path) => path.startsWith('/wallet') || path.startsWith('/card'))).toEqual([]);
    expect(served.filter((path) => path.includes('node-codec'))).toEqual([]);
    expect(served).toContain('/mockServiceWorker.js');
  });
});
