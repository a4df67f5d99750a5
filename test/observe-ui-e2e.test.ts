import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { sealJson } from '../src/crypto/codec.js';
import { defaultPayload } from '../src/runner/merchant-steps.js';
import { callbackHeaders, sealCallback, withRequestUUID } from '../src/wire/callback-delivery.js';
import { ROOT, runCliAsync } from './support/cli.js';

/**
 * observe's live page (`--ui`) in a real Chromium: the real CLI between the embedded emulator and
 * the reference merchant, traffic sent through it while the page is open. The page must show each
 * exchange as it happens, filter by side, verdict and rule, count findings per rule, link a
 * finding to its exchange (with the payload decrypted), load nothing from another origin, and show
 * no secret anywhere (page, event stream, detail). The screenshots are the docs' (docs/observe.md):
 * written to reports/, and to docs/images/ with UPDATE_DOC_IMAGES=1.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = [
  resolve(ROOT, 'reports'),
  ...(process.env.UPDATE_DOC_IMAGES === '1' ? [resolve(ROOT, 'docs', 'images')] : []),
];
const WRONG_KEY = 'ak_wrong_5d1c0a9e7b3f2a6c8e4d';

/** The browser globals the page functions use (the project compiles without the DOM lib). */
type BrowserDocument = { querySelectorAll(selector: string): ArrayLike<{ hidden: boolean; id: string }> };

let dir: string;
let embedded: Embedded;
let observe: ChildProcess;
let output = '';
let orders: string;
let callbacks: string;
let ui: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];
/** Every byte of a second event stream, read from Node: the data the page is fed. */
let streamed = '';

/** Starts observe with --ui and resolves once it printed its addresses and its page's. */
function startObserve(args: string[]): Promise<void> {
  observe = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), 'observe', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  });
  observe.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  observe.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((done, fail) => {
    observe.once('exit', () => fail(new Error(`observe exited: ${output}`)));
    observe.stdout!.on('data', () => {
      const addresses = /^observe: orders (http:\/\/[\d.:]+) .*; callbacks (http:\/\/[\d.:]+) /m.exec(output);
      const live = /^observe: live page (http:\/\/127\.0\.0\.1:\d+)\/ /m.exec(output);
      if (!addresses || !live) return;
      [orders, callbacks, ui] = [addresses[1]!, addresses[2]!, live[1]!];
      done();
    });
  });
}

function streamEvents(): void {
  http.get(`${ui}/events`, (res) => res.setEncoding('utf8').on('data', (chunk: string) => (streamed += chunk)));
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM}: install Debian's chromium package or set CHROMIUM_PATH`);
  dir = mkdtempSync(join(tmpdir(), 'wc-observe-ui-'));
  embedded = await startEmbedded();
  const file = (name: string, text: string) => (writeFileSync(join(dir, name), text, { mode: 0o600 }), join(dir, name));
  await startObserve([
    ...['--service-url', embedded.service.baseUrl, '--listen', '0'],
    ...['--merchant-url', new URL(embedded.merchant.callbackUrl).origin, '--callback-listen', '0'],
    ...[
      '--public-key',
      file('public.pem', embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString()),
    ],
    ...[
      '--private-key',
      file('private.pem', embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString()),
    ],
    ...['--api-key-file', file('api-key', embedded.service.apiKey), '--reports', join(dir, 'reports'), '--ui', '0'],
  ]);
  streamEvents();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // Offline: anything but the page's own origin is refused (and would show up as a problem).
  await context.route('**/*', (route) =>
    route.request().url().startsWith(`${ui}/`) ? route.continue() : route.abort(),
  );
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith(`${ui}/`)) problems.push(`external request: ${request.url()}`);
  });
  for (const shots of SHOTS) mkdirSync(shots, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (observe && observe.exitCode === null) {
    const exited = new Promise((done) => observe.once('exit', done));
    observe.kill('SIGTERM');
    await exited;
  }
  await embedded?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A sealed energy query from the merchant, with its key. */
function energyQuery(): Promise<Response> {
  const data = sealJson({ symbol: 'ENERGY', chainName: 'TRON' }, 'request', embedded.service.publicKey);
  return fetch(`${orders}/api/v1/api/order/getEnergyMaxCount`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': embedded.service.apiKey },
    body: new URLSearchParams({ data }).toString(),
  });
}

/** A deposit callback from the service, sealed with the merchant's key pair's private half, with `apiKey`. */
function deposit(apiKey: string): Promise<Response> {
  const m = embedded.merchant;
  const body = sealCallback(withRequestUUID(defaultPayload(1)), m.privateKey, m.profile);
  return fetch(`${callbacks}/callback`, { method: 'POST', headers: callbackHeaders(apiKey), body });
}

async function shot(page: Page, name: string): Promise<void> {
  for (const folder of SHOTS) await page.screenshot({ path: join(folder, name) });
}

/** The seqs of the rows the page shows now (newest first). */
async function shownRows(page: Page): Promise<number[]> {
  return page.evaluate(() =>
    Array.from(
      (globalThis as unknown as { document: BrowserDocument }).document.querySelectorAll('#exchanges tbody tr'),
    )
      .filter((row) => !row.hidden)
      .map((row) => Number(row.id.slice(2))),
  );
}

describe('observe --ui in headless Chromium', () => {
  it('shows exchanges live, filters them, counts findings per rule and links a finding to its decrypted exchange, with no secret anywhere', async () => {
    await page.goto(`${ui}/`);
    await page.locator('#connection', { hasText: 'live' }).waitFor();
    expect(await page.locator('#empty').isVisible()).toBe(true);

    expect((await energyQuery()).status).toBe(200);
    await page.locator('#x-1').waitFor();
    expect(await page.locator('#x-1 td.endpoint').innerText()).toBe('getEnergyMaxCount');
    expect(await page.locator('#x-1 td.side').innerText()).toBe('merchant → service');
    expect(await page.locator('#x-1 td.status').innerText()).toBe('200');

    expect((await deposit(embedded.merchant.apiKey)).status).toBe(200);
    await page.locator('#x-2').waitFor();
    expect(await page.locator('#x-2 td.endpoint').innerText()).toBe('1 deposit');

    // A callback with another key: the merchant refuses it and the judge finds against the service.
    await deposit(WRONG_KEY);
    const finding = page.locator('#findings li', { has: page.locator('a[href="#x-3"]') }).first();
    await finding.waitFor();
    const findingRules = (await finding.locator('strong').innerText()).replace(/^(failed|warning) /, '').split(', ');
    await page.locator('#x-3 .badge.failed, #x-3 .badge.warning').first().waitFor();
    expect(await page.locator('#x-1 .badge.none').innerText()).toBe('no finding');
    await shot(page, 'observe-ui-live.png');

    // The counter per rule: the server's count of each rule's findings, on the page.
    const rule = findingRules[0]!;
    const counter = page.locator(`#rules tbody tr[data-rule="${rule}"]`);
    const metrics = await (await fetch(`${ui}/metrics`)).text();
    const counted = (verdict: string) =>
      Number(new RegExp(`findings_total\\{rule="${rule}",verdict="${verdict}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    expect(Number(await counter.locator('.count-failed').innerText())).toBe(counted('failed'));
    expect(Number(await counter.locator('.count-warning').innerText())).toBe(counted('warning'));
    expect(counted('failed') + counted('warning')).toBeGreaterThan(0);

    // Filters: side, verdict, rule (a click on its counter), then clear.
    await page.selectOption('#filter-side', 'service');
    expect(await shownRows(page)).toEqual([3, 2]);
    await page.selectOption('#filter-verdict', 'none');
    expect(await shownRows(page)).toEqual([2]);
    await page.click('#filter-clear');
    expect(await shownRows(page)).toEqual([3, 2, 1]);
    await counter.click();
    expect(await page.locator('#filter-rule').inputValue()).toBe(rule);
    expect(await shownRows(page)).toEqual([3]);
    await page.click('#filter-clear');

    // The finding's link opens its exchange, the payload decrypted.
    await finding.locator('a.exchange-link').click();
    await page.locator('#detail h2', { hasText: 'seq 3' }).waitFor();
    expect(await page.locator('#x-3').getAttribute('class')).toContain('selected');
    const plaintext = await page.locator('#detail .pane').first().locator('pre.plaintext').innerText();
    expect(JSON.parse(plaintext)).toMatchObject({ type: 1, tenantUserId: 'u-20931' });
    expect(await page.locator('#detail .pane').first().locator('pre.headers').innerText()).toMatch(
      /^x-api-key: ak…#[0-9a-f]{4}$/m,
    );
    await shot(page, 'observe-ui-finding.png');

    // No secret in the page, in its event stream or in an exchange's detail.
    const details = await Promise.all([1, 2, 3].map(async (seq) => (await fetch(`${ui}/api/exchanges/${seq}`)).text()));
    expect(streamed).toContain('event: finding');
    for (const text of [await page.content(), streamed, ...details])
      for (const secret of [embedded.service.apiKey, embedded.merchant.apiKey, WRONG_KEY])
        expect(text).not.toContain(secret);
    expect(problems).toEqual([]);
  });
});

describe('observe --ui: its port and its reach', () => {
  const key = () => ['--public-key', join(dir, 'public.pem')];

  const upstream = ['--service-url', 'http://127.0.0.1:1'];
  it.each([
    [
      'on a proxy port',
      [...upstream, '--listen', '127.0.0.1:47011', '--ui', '47011'],
      /^wallet-conformance: --ui 47011: port 47011 is a proxy listener's \(give the page its own port\)$/,
    ],
    [
      'on the metrics port',
      [...upstream, '--listen', '0', '--metrics', '47012', '--ui', '127.0.0.1:47012'],
      /^wallet-conformance: --ui 127\.0\.0\.1:47012: port 47012 is --metrics's/,
    ],
    [
      'not a port',
      [...upstream, '--listen', '0', '--ui', 'localhost'],
      /^wallet-conformance: --ui takes \[HOST:\]PORT, not "localhost"$/,
    ],
    [
      'with --replay',
      ['--replay', resolve(ROOT, 'package.json'), '--ui', '0'],
      /^wallet-conformance: --replay judges a capture offline: drop --ui$/,
    ],
  ])('refuses --ui %s: one line, exit 2', async (_name, args, message) => {
    const run = await runCliAsync(['observe', ...args, ...key()]);
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr.trim()).toMatch(message);
  });

  it('refuses a --ui port in use with one line and exit 2', async () => {
    const taken = http.createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const { port } = taken.address() as { port: number };
    const run = await runCliAsync([
      'observe',
      '--service-url',
      'http://127.0.0.1:1',
      '--listen',
      '0',
      '--ui',
      String(port),
      ...key(),
    ]);
    taken.close();
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr.trim()).toBe(`wallet-conformance: cannot listen on 127.0.0.1:${port} for --ui: EADDRINUSE`);
  });

  it('warns on stderr when other machines can reach the page: it shows decrypted payloads', async () => {
    const run = await runCliAsync([
      'observe',
      '--service-url',
      'http://127.0.0.1:1',
      '--listen',
      '0',
      '--ui',
      '0.0.0.0:0',
      '--duration',
      '0.5',
      '--reports',
      join(dir, 'r2'),
      ...key(),
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^observe: live page http:\/\/0\.0\.0\.0:\d+\/ \(metrics: .*\/metrics, probes: .*\/healthz\)$/m,
    );
    expect(run.stderr).toMatch(
      /^wallet-conformance: observe: warning: --ui 0\.0\.0\.0:0 accepts connections from other machines: the page shows decrypted payloads \(secrets only as fingerprints\) to anyone who reaches it$/m,
    );
  });
});
