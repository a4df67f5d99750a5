import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, runCli } from './support/cli.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = resolve(ROOT, 'reports', 'docs-index.png');

const ENDPOINTS = ['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard'];
const CALLBACKS = [
  '1 Deposit',
  '2 Withdrawal request',
  '3 Withdrawal',
  '4 Address',
  '5 Invalid address',
  '6 Not enough money',
  '7 Not enough hot money',
];

/** The browser globals the page functions use (the project compiles without the DOM lib). */
type BrowserWindow = {
  innerHeight: number;
  getComputedStyle(element: unknown): { position: string; backgroundColor: string };
};

/** Is the element's box inside the viewport (an anchor the browser scrolled to)? */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((element) => {
    const box = element.getBoundingClientRect();
    // Sub-pixel layout may leave a scrolled-to row a fraction of a pixel above the top.
    return box.height > 0 && box.top > -2 && box.top < (globalThis as unknown as BrowserWindow).innerHeight;
  });
}

describe('the docs site in headless Chromium (file://, offline)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let site: string;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary`,
      );
    }
    site = join(mkdtempSync(join(tmpdir(), 'wc-docs-e2e-')), 'site');
    const run = runCli(['docs', '--out', site]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Offline: anything but a file of the site is refused (and would show up as a failed request).
    await context.route('**/*', (route) =>
      route.request().url().startsWith('file://') ? route.continue() : route.abort(),
    );
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) =>
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`),
    );
    page.on('request', (request) => {
      if (!request.url().startsWith('file://')) problems.push(`external request: ${request.url()}`);
    });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    await page.goto(pathToFileURL(join(site, 'index.html')).href);
  });

  it('renders the index with its Endpoints and Callbacks sections and every page in the navigation, and writes a screenshot', async () => {
    await expectVisible(page, 'h1');
    expect(await page.locator('h1').textContent()).toBe('Merchant Wallet Service Interface: reference');
    for (const name of ['Endpoints', 'Callbacks', 'Reference'])
      expect(await page.getByRole('heading', { level: 2, name, exact: true }).first().isVisible(), name).toBe(true);
    const nav = page.locator('nav.site');
    const labels = (await nav.locator('a').allTextContents()).map((text) => text.trim());
    const reference = [
      'Overview',
      ...ENDPOINTS,
      ...CALLBACKS,
      'Writing a receiver',
      'Rule catalog',
      'Traceability',
      'Idempotency',
      'Error tables',
    ];
    expect(labels.slice(0, reference.length)).toEqual(reference);
    // Then the manual (README.md and docs/), the README, its index and the two guides first.
    expect(labels.slice(reference.length, reference.length + 4)).toEqual([
      'README',
      'Index',
      'Merchant guide',
      'Service guide',
    ]);
    expect(await nav.locator('a[aria-current="page"]').textContent()).toBe('Overview');
    // The endpoint and callback tables of the index list the same pages.
    expect(await page.locator('#endpoints-table tbody tr').count()).toBe(3);
    expect(await page.locator('#callbacks-table tbody tr').count()).toBe(7);
    expect(await page.locator('#callbacks-table tbody tr').first().innerText()).toContain(
      'txid, chain, symbol, toAddress',
    );
    // The inline stylesheet applies (no external CSS needed): the navigation is a sticky side bar.
    expect(
      await nav.evaluate((element) => (globalThis as unknown as BrowserWindow).getComputedStyle(element).position),
    ).toBe('sticky');
    mkdirSync(resolve(ROOT, 'reports'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });

  it('navigates to the manual: the merchant guide with its tables and code, and from it to another manual page', async () => {
    await page.locator('nav.site').getByRole('link', { name: 'Merchant guide', exact: true }).click();
    expect(await page.locator('h1').textContent()).toBe('Merchant guide');
    expect(await page.locator('nav.site a[aria-current="page"]').textContent()).toBe('Merchant guide');
    expect(await page.locator('main table').count()).toBeGreaterThan(3);
    expect(await page.locator('main pre').filter({ hasText: 'RSA/ECB/PKCS1Padding' }).count()).toBe(1);
    await page.locator('main').getByRole('link', { name: 'crypto-profiles.md', exact: true }).first().click();
    expect(await page.locator('h1').textContent()).toBe('Crypto profiles');
  });

  it('navigates to an endpoint page showing its plain fields and an encrypted example beside the plain JSON', async () => {
    await page.locator('nav.site').getByRole('link', { name: 'withdrawWithoutVerify', exact: true }).click();
    expect(page.url()).toMatch(/\/endpoint-withdraw-without-verify\.html$/);
    expect(await page.locator('h1').innerText()).toContain('withdrawWithoutVerify');
    expect(await page.locator('nav.site a[aria-current="page"]').textContent()).toBe('withdrawWithoutVerify');
    const amount = page.locator('#request-plain-fields tr', {
      has: page.locator('td:first-child code', { hasText: /^amount$/ }),
    });
    await expectVisible(page, amount);
    expect(await amount.innerText()).toContain('Decimal: number | string');
    const example = page.locator('section.example#request-example-1');
    await example.scrollIntoViewIfNeeded();
    await expectVisible(page, example.locator('.panel.plain pre'));
    await expectVisible(page, example.locator('pre.cipher'));
    expect(await example.locator('.panel.plain pre').innerText()).toContain('"callBackId"');
    expect(await example.locator('pre.cipher').innerText()).toBe(await example.getAttribute('data-cipher'));
    // The "On this page" table of contents jumps to the Errors section.
    await page.locator('nav.toc').getByRole('link', { name: 'Errors', exact: true }).click();
    expect(new URL(page.url()).hash).toBe('#errors');
    expect(await inViewport(page, '#errors')).toBe(true);
    expect(await page.locator('#error-401').innerText()).toContain('{"code":"UNAUTHORIZED","message":"unauthorized"}');
  });

  it('navigates to a callback page showing its idempotency key and the delivery', async () => {
    await page.locator('nav.site').getByRole('link', { name: '1 Deposit', exact: true }).click();
    expect(page.url()).toMatch(/\/callback-1-deposit\.html$/);
    expect(await page.locator('h1').innerText()).toBe('Callback type 1: Deposit');
    await expectVisible(page, page.getByRole('heading', { level: 2, name: 'Idempotency key' }));
    const keyFields = page.locator('#payload-fields tr', { has: page.locator('.badge-key') });
    expect((await keyFields.locator('td:first-child').allInnerTexts()).map((text) => text.trim())).toEqual([
      'txid',
      'chain',
      'symbol',
      'toAddress',
    ]);
    expect(await page.locator('#example-1').getAttribute('data-key-half')).toBe('private');
    // Its link to the idempotency table leads there.
    await page.getByRole('link', { name: 'the idempotency table' }).click();
    expect(page.url()).toMatch(/\/idempotency\.html$/);
    const rows = page.locator('#idempotency-table tbody tr');
    expect(await rows.count()).toBe(7);
    expect(await page.locator('#type-1').innerText()).toContain('txid, chain, symbol, toAddress');
    expect(await page.locator('#type-3').innerText()).toContain('CB-ID-WITHDRAW');
    await expectVisible(page, page.locator('#type-7'));
  });

  it('navigates to the rule catalog, where a rule anchor scrolls its row into view and highlights it', async () => {
    await page.locator('nav.site').getByRole('link', { name: 'Rule catalog', exact: true }).click();
    expect(page.url()).toMatch(/\/rules\.html$/);
    expect(await page.locator('#rules-table tbody tr').count()).toBeGreaterThan(40);
    expect(await inViewport(page, '#rule-CB-NO-FALSE-ACK')).toBe(false);
    await page.goto(`${pathToFileURL(join(site, 'rules.html')).href}#rule-CB-NO-FALSE-ACK`);
    expect(await inViewport(page, '#rule-CB-NO-FALSE-ACK')).toBe(true);
    const row = page.locator('#rule-CB-NO-FALSE-ACK');
    expect(await row.locator('td').nth(1).innerText()).toBe('SHOULD');
    // tr:target highlights the row the link points at.
    expect(
      await row
        .locator('td')
        .first()
        .evaluate((cell) => (globalThis as unknown as BrowserWindow).getComputedStyle(cell).backgroundColor),
    ).toBe('rgb(255, 248, 197)');
    expect(await page.locator('#rule-U-CRYPTO td').nth(1).innerText()).toBe('UNSPECIFIED');
  });

  it('navigates to the traceability table and from a rule row to its catalog entry', async () => {
    await page.locator('nav.site').getByRole('link', { name: 'Traceability', exact: true }).click();
    expect(page.url()).toMatch(/\/traceability\.html$/);
    const row = page.locator('#rule-CB-ID-DEPOSIT');
    await row.scrollIntoViewIfNeeded();
    await expectVisible(page, row);
    expect(await row.locator('td').nth(2).innerText()).toBe('processed');
    expect(await row.locator('td').nth(3).innerText()).toContain('merchant/idempotency/redelivered-deposit');
    // The check link jumps to the check's row on the same page.
    await row.getByRole('link', { name: 'processed', exact: true }).click();
    expect(new URL(page.url()).hash).toBe('#check-processed');
    expect(await inViewport(page, '#check-processed')).toBe(true);
    // The rule link leads to the catalog row.
    await page.goto(`${pathToFileURL(join(site, 'traceability.html')).href}#rule-ERR-404`);
    await page.locator('#rule-ERR-404').getByRole('link', { name: 'ERR-404', exact: true }).click();
    expect(page.url()).toMatch(/\/rules\.html#rule-ERR-404$/);
    expect(await inViewport(page, '#rule-ERR-404')).toBe(true);
  });

  it('opens every page with no console error, no failed and no external request', async () => {
    const pages = await page
      .locator('nav.site a')
      .evaluateAll((links) => links.map((link) => (link as unknown as { href: string }).href));
    // The 16 reference pages and the manual's pages in the navigation (its decisions are reached from their index).
    expect(pages.length).toBeGreaterThan(16 + 10);
    expect(pages.filter((url) => /\/manual-[^/]*\.html$/.test(url))).toHaveLength(pages.length - 16);
    for (const url of pages) {
      const response = await page.goto(url);
      expect(response?.ok() ?? true, url).toBe(true);
      expect(await page.locator('h1').count(), url).toBe(1);
    }
    expect(problems).toEqual([]);
  });
});

async function expectVisible(page: Page, target: string | ReturnType<Page['locator']>): Promise<void> {
  const locator = typeof target === 'string' ? page.locator(target) : target;
  await locator.first().waitFor({ state: 'visible', timeout: 5_000 });
}
