// `wallet-conformance/msw/browser` as a user gets it: a page that imports the package by name (as
// docs/from-the-spec.md shows, no codec of its own) is bundled by esbuild for the browser with nothing marked
// external, so a node:* import anywhere in the graph would fail the build; then the page runs the
// handlers under setupWorker in headless Chromium. Answers are opened here with node:crypto.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey } from '../src/crypto/keys.js';

const ROOT = resolve(import.meta.dirname, '..');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const FORM = 'application/x-www-form-urlencoded';

/** The page: the manual's snippet, plus a fetch helper the test drives. */
const PAGE = `
import { setupWorker } from 'msw/browser';
import { createWalletHandlers } from 'wallet-conformance/msw/browser';

async function startWallet({ baseUrl, merchant }) {
  const worker = setupWorker(...createWalletHandlers({ baseUrl, merchants: [merchant] }));
  await worker.start({ serviceWorker: { url: '/mockServiceWorker.js' }, onUnhandledRequest: 'error', quiet: true });
}

async function post(url, body, headers) {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
}

globalThis.walletPage = { startWallet, post };
`;

/** The same import under the plain subpath: the \`browser\` condition must pick the browser build. */
const PLAIN_SUBPATH = `import { createWalletHandlers, forgeCodec } from 'wallet-conformance/msw';\nglobalThis.found = [createWalletHandlers, forgeCodec];\n`;

interface WalletPage {
  startWallet(options: {
    baseUrl: string;
    merchant: { userId: number; apiKey: string; privateKey: string };
  }): Promise<void>;
  post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }>;
}

const keys = generateMerchantKeyPair(1024);
const publicKey = parseKey(keys.publicPem, { expect: 'public' });
let project: string;
let metafile: Metafile;
let plainMetafile: Metafile;
let server: Server;
let browser: Browser;
let page: Page;
let origin: string;
const served: string[] = [];

/** A user's project: the package and msw in node_modules, as `npm install` puts them. */
function userProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wc-msw-bundle-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'wallet-conformance'));
  symlinkSync(join(ROOT, 'node_modules', 'msw'), join(dir, 'node_modules', 'msw'));
  writeFileSync(join(dir, 'page.js'), PAGE);
  writeFileSync(join(dir, 'plain.js'), PLAIN_SUBPATH);
  return dir;
}

/** esbuild for the browser, nothing external: a node:* import would be a build error. */
function bundle(entry: string) {
  return build({
    entryPoints: [join(project, entry)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    metafile: true,
    write: false,
    outdir: join(project, 'out'),
    logLevel: 'silent',
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `msw-browser-bundle: no Chromium at ${CHROMIUM}; install it (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  if (!existsSync(join(ROOT, 'dist/msw/browser.js')))
    throw new Error('msw-browser-bundle: dist/ is not built (npm run build)');
  project = userProject();
  const result = await bundle('page.js');
  metafile = result.metafile;
  plainMetafile = (await bundle('plain.js')).metafile;
  const files = new Map(result.outputFiles.map((file) => [`/${basename(file.path)}`, file.contents]));
  files.set(
    '/index.html',
    new TextEncoder().encode(
      '<!doctype html><meta charset="utf-8"><title>wallet msw</title><script type="module" src="/page.js"></script>',
    ),
  );
  files.set('/mockServiceWorker.js', readFileSync(join(ROOT, 'node_modules/msw/lib/mockServiceWorker.js')));
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
        'content-type': path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/html; charset=utf-8',
      })
      .end(file);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${origin}/`);
  await page
    .waitForFunction(() => 'walletPage' in globalThis, undefined, { timeout: 10_000 })
    .catch((error: Error) => {
      throw new Error(`msw-browser-bundle: the page did not load: ${errors.join('; ') || error.message}`);
    });
  await page.evaluate((start) => (globalThis as unknown as { walletPage: WalletPage }).walletPage.startWallet(start), {
    baseUrl: `${origin}/wallet`,
    merchant: { userId: 10086, apiKey: 'ak_live', privateKey: keys.privatePem },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((closed) => (server ? server.close(closed) : closed(undefined)));
  if (project) rmSync(project, { recursive: true, force: true });
});

const packageFiles = (meta: Metafile) => Object.keys(meta.inputs).filter((path) => !path.includes('node_modules/'));

describe('wallet-conformance/msw/browser bundled by esbuild', () => {
  it('bundles for the browser with no node:* module and without the node:crypto codec or src/crypto', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((path) => path.startsWith('node:'))).toEqual([]);
    expect(packageFiles(metafile)).toContain('dist/msw/forge-codec.js');
    expect(
      packageFiles(metafile).filter((path) => path.includes('node-codec.js') && !path.includes('browser-node-codec')),
    ).toEqual([]);
    expect(packageFiles(metafile).filter((path) => path.startsWith('dist/crypto/'))).toEqual([]);
  });

  it('gives the browser build for the plain wallet-conformance/msw import under the browser condition', () => {
    expect(packageFiles(plainMetafile)).toContain('dist/msw/browser.js');
    expect(packageFiles(plainMetafile).filter((path) => path.startsWith('dist/crypto/'))).toEqual([]);
  });

  it('answers an encrypted getEnergyMaxCount from the service worker with the shipped codec', async () => {
    const data = encodeURIComponent(sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', publicKey));
    const answer = await page.evaluate(
      ({ url, body, headers }) =>
        (globalThis as unknown as { walletPage: WalletPage }).walletPage.post(url, body, headers),
      {
        url: `${origin}/wallet/api/v1/api/order/getEnergyMaxCount`,
        body: `data=${data}`,
        headers: { 'content-type': FORM, 'x-api-key': 'ak_live' },
      },
    );
    expect(answer.status, answer.text).toBe(200);
    const envelope = JSON.parse(answer.text) as { code: number; message: string; data: string };
    expect([envelope.code, envelope.message]).toEqual([0, '']);
    expect(openJson(envelope.data, 'response', publicKey).text).toBe(
      '{"chainName":"TRON","symbol":"ENERGY","energyMaxCount":312}',
    );
    expect(served.filter((path) => path.startsWith('/wallet'))).toEqual([]);
  });
});
