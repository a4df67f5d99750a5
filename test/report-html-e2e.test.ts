import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRules } from '../src/cli/report-output.js';
import { renderReports } from '../src/reporters/write-reports.js';
import { ROOT, runCli } from './support/cli.js';
import { EXACT_AMOUNT, sampleReport } from './support/sample-report.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = resolve(ROOT, 'reports');

/** The browser globals the page functions use (the project compiles without the DOM lib). */
type BrowserWindow = { getComputedStyle(element: unknown): { backgroundColor: string } };

describe('report.html in headless Chromium (file://, offline)', () => {
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: install Debian's chromium package or set CHROMIUM_PATH`,
      );
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route('**/*', (route) =>
      route.request().url().startsWith('file://') ? route.continue() : route.abort(),
    );
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith('file://')) problems.push(`external request: ${request.url()}`);
    });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** Writes the four reports of `report` into a fresh folder and opens report.html. */
  async function open(files: Array<{ path: string; contents: string }>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'wc-report-html-'));
    for (const file of files) writeFileSync(join(dir, file.path), file.contents);
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
  }

  it('shows a failed run: FAILED on red, what was tested as a table, each rule with its text and a status that counts passes over skips', async () => {
    await open(renderReports(sampleReport(), { rules: loadRules() }));
    const header = page.locator('header.verdict');
    expect(await header.locator('h1').innerText()).toBe('FAILED');
    expect(
      await header.evaluate(
        (element) => (globalThis as unknown as BrowserWindow).getComputedStyle(element).backgroundColor,
      ),
    ).toBe('rgb(255, 235, 233)');
    expect(await header.locator('.counts').innerText()).toMatch(/1\s*failed.*1\s*warnings.*7\s*passed.*2\s*skipped/s);
    const target = page.locator('table.target tbody tr').first();
    expect(await target.locator('td').allInnerTexts()).toEqual([
      'service',
      'baseUrl http://127.0.0.1:4010',
      'padding pkcs1, request public',
      'userId 10086\ncontrol yes\nallowOrders yes',
    ]);
    const rule = page.locator('table.rules-table tr', { hasText: 'ERR-401' });
    expect(await rule.locator('.badge').innerText()).toBe('passed');
    expect(await rule.innerText()).toContain('6 passed, 1 skipped');
    expect(await rule.innerText()).toContain('HTTP 401');
    // Rules that failed come first.
    expect(await page.locator('table.rules-table tbody tr').first().locator('b').innerText()).toBe('ORDER-RES');
    await page.screenshot({ path: join(SHOTS, 'report-html-header.png') });
    expect(problems).toEqual([]);
  });

  it('opens the failure first with the plain request beside the wire and the decrypted answer beside the answer, digits unrounded', async () => {
    await open(renderReports(sampleReport(), { rules: loadRules() }));
    const first = page.locator('details.check').first();
    expect(await first.getAttribute('class')).toBe('check failed');
    expect(await first.getAttribute('open')).toBe('');
    const panes = first.locator('.exchange .pane');
    expect(await panes.locator('h5').allInnerTexts()).toEqual([
      'request (wire)',
      'request (plain, before encryption)',
      'answer (wire)',
      'answer (decrypted)',
    ]);
    const [wire, plain] = [await panes.nth(0).boundingBox(), await panes.nth(1).boundingBox()];
    expect(wire && plain && Math.abs(wire.y - plain.y) < 1 && plain.x >= wire.x + wire.width).toBe(true);
    expect(await panes.nth(1).innerText()).toContain(`"amount": ${EXACT_AMOUNT}`);
    expect(await panes.nth(3).innerText()).toContain(`"amount": ${EXACT_AMOUNT}`);
    await first.scrollIntoViewIfNeeded();
    await first.screenshot({ path: join(SHOTS, 'report-html-failure.png') });
    expect(problems).toEqual([]);
  });

  it('shows the callback deliveries of a real run as a timeline: attempts, answers and retries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-report-run-'));
    const run = runCli(['run', '--suite', 'service/callbacks', '--reports', dir]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    expect(await page.locator('header.verdict h1').innerText()).toBe('PASSED');
    const check = page.locator('details.check', { hasText: 'retry-until-ack/callback-attempts' });
    await check.locator('summary').click();
    const rows = check.locator('.timeline tbody tr');
    expect(await rows.count()).toBe(4);
    const cells = await Promise.all([0, 1, 2, 3].map((i) => rows.nth(i).locator('td').allInnerTexts()));
    expect(cells.map((row) => [row[0], row[4], row[5]])).toEqual([
      ['#1', 'first delivery', 'no ack HTTP 200, errCode 1'],
      ['#2', 'retry (#1 was not acknowledged)', 'no ack HTTP 500, errCode 500'],
      ['#3', 'retry (#2 was not acknowledged)', 'no ack HTTP 200, errCode "0"'],
      ['#4', 'retry (#3 was not acknowledged)', 'ack HTTP 200, errCode 0'],
    ]);
    // One event, four fresh requestUUIDs (CB-UUID), times that only grow.
    expect(new Set(cells.map((row) => row[3])).size).toBe(1);
    expect(new Set(cells.map((row) => row[2])).size).toBe(4);
    const times = cells.map((row) => Number(/^\+(\d+) ms$/.exec(row[1] ?? '')?.[1]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    await check.locator('.timeline').scrollIntoViewIfNeeded();
    await check.locator('.timeline').screenshot({ path: join(SHOTS, 'report-html-timeline.png') });
    expect(problems).toEqual([]);
  }, 60_000);
});
