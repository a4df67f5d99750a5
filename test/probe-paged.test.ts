/**
 * The paged probe end to end (docs/probe.md): a real merchant process under 100 slow readers keeps
 * its memory bounded; `verify merchant` works against a history of over 1 MiB, through the token
 * when the merchant sets one, and against a user's probe of the old contract that ignores the query.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../src/merchant/memory-store.js';
import { startMerchantServer } from '../src/merchant/server.js';
import { openSqliteStore } from '../src/merchant/sqlite-store.js';
import type { IdempotencyStore } from '../src/merchant/store.js';
import { runCliAsync, serveMerchant } from './support/cli.js';
import { makeKeyPair } from './support/merchant.js';

const API_KEY = 'ak-probe-paged-61c2';
const PROBE_TOKEN = 'pt-probe-paged-0d9e4b7a1c';
const keys = makeKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'wc-probe-paged-'));
const privateKeyFile = join(dir, 'merchant-private.pem');
writeFileSync(privateKeyFile, keys.pem.privatePem);
writeFileSync(join(dir, 'merchant-public.pem'), keys.pem.publicPem);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fills a store with `count` processed events of other traffic (foreign trackingIds), about 1 KiB each. */
async function fillHistory(store: IdempotencyStore, count: number): Promise<void> {
  const pad = 'h'.repeat(1_000);
  for (let i = 0; i < count; i++) {
    const claim = await store.claim(`history:${i}`, `{"trackingId":"history-${i}","pad":"${pad}"}`);
    if (claim.state === 'claimed') await store.complete(`history:${i}`, claim.token);
  }
}

/** The resident memory of a process, bytes (Linux /proc). */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

describe('a reference merchant process with a long history and a probe token', () => {
  let merchant: { child: ChildProcess; callbackUrl: string; probeUrl: string };
  beforeAll(async () => {
    // 8,000 events of about 1 KiB: an 8 MiB history, 8 times the 1 MiB an unpaged answer may carry, and
    // more than the kernel's socket buffers take of one answer (so a whole-history answer to a
    // slow reader would stay in the merchant's memory).
    const store = openSqliteStore(join(dir, 'merchant.sqlite'), { synchronous: 'normal' });
    await fillHistory(store, 8_000);
    await store.close();
    writeFileSync(
      join(dir, 'merchant.yaml'),
      [
        `apiKey: "${API_KEY}"`,
        'publicKey: merchant-public.pem',
        'store: merchant.sqlite',
        'port: 0',
        `probe: { token: "${PROBE_TOKEN}", deadlineMs: 2000 }`,
        '',
      ].join('\n'),
    );
    merchant = await serveMerchant(join(dir, 'merchant.yaml'));
  });
  afterAll(() => stop(merchant.child));

  it('keeps its memory bounded under 100 slow readers, and ends every one of their connections', async () => {
    const headers = { authorization: `Bearer ${PROBE_TOKEN}` };
    // Warm up: one whole paged read, so caches and buffers are in place before the baseline.
    for (let since = '0', more = true; more;) {
      const page = (await (await fetch(`${merchant.probeUrl}?since=${since}`, { headers })).json()) as {
        next: string;
        more: boolean;
      };
      since = page.next;
      more = page.more;
    }
    const before = rssOf(merchant.child.pid!);
    const { port } = new URL(merchant.probeUrl);
    const readers: Socket[] = [];
    const closed: Array<Promise<void>> = [];
    for (let i = 0; i < 100; i++) {
      const socket = connect({ host: '127.0.0.1', port: Number(port) });
      // A slow reader: asks for a page (and the unpaged form, which must not answer the whole history), then never reads.
      socket.pause();
      socket.on('error', () => undefined);
      closed.push(new Promise((done) => socket.once('close', () => done())));
      const path = i % 2 === 0 ? '/probe?since=0&limit=500' : '/probe';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${PROBE_TOKEN}\r\n\r\n`);
      readers.push(socket);
    }
    // Every earlier request was taken once a later one is answered; sample the memory while the
    // readers hold their answers, past the deadline (2 s).
    expect((await fetch(`${merchant.probeUrl}?since=0&limit=1`, { headers })).status).toBe(200);
    let peak = rssOf(merchant.child.pid!);
    for (const until = Date.now() + 3_000; Date.now() < until;) {
      peak = Math.max(peak, rssOf(merchant.child.pid!));
      await new Promise((done) => setTimeout(done, 50));
    }
    // Then every connection ends: cut at the deadline, or closed when idle after an answer the socket buffers took whole.
    for (const socket of readers) socket.resume();
    await Promise.all(closed);
    // Whole-history answers held by the readers would cost hundreds of MiB; pages of at most 256 KiB cost at most about 25 MiB.
    expect(peak - before).toBeLessThan(120 * 1024 * 1024);
    for (const socket of readers) socket.destroy();
    // The merchant still answers.
    expect((await fetch(`${merchant.probeUrl}?since=7999`, { headers })).status).toBe(200);
  }, 60_000);

  it('verify merchant reads the 8 MiB history page by page with the probe token from the environment, and never prints it', async () => {
    const reports = join(dir, 'verify');
    const run = await runCliAsync(
      [
        'verify',
        'merchant',
        '--callback-url',
        merchant.callbackUrl,
        '--private-key',
        privateKeyFile,
        '--probe-url',
        merchant.probeUrl,
        '--suite',
        'merchant/idempotency',
        '--reports',
        reports,
      ],
      { env: { WALLET_API_KEY: API_KEY, WALLET_PROBE_TOKEN: PROBE_TOKEN } },
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const report = readFileSync(join(reports, 'report.json'), 'utf8');
    const results = (JSON.parse(report) as { results: Array<{ status: string; message: string }> }).results;
    expect(results.filter((result) => result.status === 'passed').length).toBeGreaterThan(0);
    // Only the restart cases are skipped (no --restart): nothing for want of the probe.
    expect(results.filter((result) => result.status === 'skipped' && !/needs --restart/.test(result.message))).toEqual(
      [],
    );
    expect(run.stdout + run.stderr + report).not.toContain(PROBE_TOKEN);
  }, 120_000);

  it('verify merchant without the token stops with one line saying how to give it (exit 2)', async () => {
    const run = await runCliAsync(
      [
        'verify',
        'merchant',
        '--callback-url',
        merchant.callbackUrl,
        '--private-key',
        privateKeyFile,
        '--probe-url',
        merchant.probeUrl,
        '--suite',
        'merchant/idempotency',
        '--reports',
        join(dir, 'no-token'),
      ],
      { env: { WALLET_API_KEY: API_KEY, WALLET_PROBE_TOKEN: undefined } },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/answered 401: it may need a token; give it with --probe-token or WALLET_PROBE_TOKEN/);
  }, 60_000);
});

describe("a user's probe of the old contract (it ignores the query)", () => {
  let store: MemoryIdempotencyStore;
  let merchant: Awaited<ReturnType<typeof startMerchantServer>>;
  let oldProbe: Server;
  let oldProbeUrl: string;
  beforeAll(async () => {
    store = new MemoryIdempotencyStore();
    await fillHistory(store, 1_100);
    merchant = await startMerchantServer({ apiKeys: [API_KEY], publicKey: keys.publicKey, store });
    // Its whole history in every answer, whatever the query: over 1 MiB and growing.
    oldProbe = createHttpServer((_req, res) => {
      void store
        .processed()
        .then((list) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(`{"processed":[${list.join(',')}]}`),
        );
    });
    await new Promise<void>((done) => oldProbe.listen(0, '127.0.0.1', done));
    oldProbeUrl = `http://127.0.0.1:${(oldProbe.address() as AddressInfo).port}/probe`;
  });
  afterAll(async () => {
    await new Promise((done) => oldProbe.close(done));
    await merchant.close();
  });

  it('still verifies: its whole answer is read (up to 64 MiB) and the entries after the baseline are the new ones', async () => {
    const reports = join(dir, 'old-probe');
    const run = await runCliAsync(
      [
        'verify',
        'merchant',
        '--callback-url',
        merchant.callbackUrl,
        '--private-key',
        privateKeyFile,
        '--probe-url',
        oldProbeUrl,
        '--suite',
        'merchant/idempotency',
        '--reports',
        reports,
      ],
      { env: { WALLET_API_KEY: API_KEY } },
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const results = (
      JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as {
        results: Array<{ status: string; message: string }>;
      }
    ).results;
    // Only the restart cases are skipped (no --restart): nothing for want of the probe.
    expect(results.filter((result) => result.status === 'skipped' && !/needs --restart/.test(result.message))).toEqual(
      [],
    );
  }, 120_000);
});
