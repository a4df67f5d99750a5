import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { makeThrowawayCa } from '../src/crypto/throwaway-certificates.js';
import { readCapture } from '../src/observe/capture.js';
import type { ObservedExchange } from '../src/observe/exchange.js';
import { defaultPayload } from '../src/runner/merchant-steps.js';
import type { Report } from '../src/runner/types.js';
import { callbackHeaders, sealCallback, withRequestUUID } from '../src/wire/callback-delivery.js';
import { ROOT, runCliAsync } from './support/cli.js';
import { refusingPort } from './support/ports.js';
import { runCliInProcess } from './support/cli-in-process.js';

/**
 * `wallet-conformance observe` end to end: the real CLI between the emulator and the reference
 * merchant, with the real suites' traffic going through it. Observe must never be in the way: the
 * suites' verdicts are the same with and without it in the path.
 */

let dir: string;
let embedded: Embedded;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wc-observe-'));
  embedded = await startEmbedded();
  writeFileSync(
    file('public.pem'),
    embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }).toString(),
  );
  writeFileSync(
    file('private.pem'),
    embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
    { mode: 0o600 },
  );
});
/** Every observe started here: one a failed test left running is killed at the end. */
const started: ChildProcess[] = [];
afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await embedded?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  orders?: string;
  callbacks?: string;
  output: () => { stdout: string; stderr: string };
  stop: () => Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `observe ARGS` and resolves once it printed the line naming its addresses. */
function observe(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), 'observe', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`observe did not start: ${stdout}${stderr}`)), 30_000);
    void exited.then(() => fail(new Error(`observe exited: ${stdout}${stderr}`)));
    child.stdout.on('data', () => {
      const line =
        /^observe: (orders (https?:\/\/127\.0\.0\.1:\d+)|orders not observed).*; (callbacks (https?:\/\/127\.0\.0\.1:\d+)|callbacks not observed).*$/m.exec(
          stdout,
        );
      if (!line) return;
      clearTimeout(timer);
      done({
        child,
        exited,
        ...(line[2] ? { orders: line[2] } : {}),
        ...(line[4] ? { callbacks: line[4] } : {}),
        output: () => ({ stdout, stderr }),
        stop: () => (child.kill('SIGTERM'), exited),
      });
    });
  });
}

function reportOf(reports: string): Report {
  return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
}

/** Every check's verdict by id: what must not change when observe is in the path. */
function verdicts(report: Report): Record<string, string> {
  return Object.fromEntries(report.results.map((result) => [result.id, result.status]));
}

async function captured(path: string): Promise<ObservedExchange[]> {
  const out: ObservedExchange[] = [];
  for await (const exchange of readCapture(
    createInterface({ input: createReadStream(path), crlfDelay: Infinity }),
    path,
  ))
    out.push(exchange);
  return out;
}

function summaryLine(stdout: string): string {
  return (
    /^observe: \d+ exchanges, \d+ failed, \d+ warnings, \d+ not judged$/m.exec(stdout)?.[0] ??
    `no summary line in: ${stdout}`
  );
}

describe('wallet-conformance observe', () => {
  it('is never in the way: verify service and verify merchant give the same verdicts through it; it captures every exchange without a secret, and a replay judges the capture as the live run did', async () => {
    const s = embedded.service;
    const m = embedded.merchant;
    const merchantOrigin = new URL(m.callbackUrl).origin;
    const run = await observe([
      '--service-url',
      s.baseUrl,
      '--listen',
      '0',
      '--merchant-url',
      merchantOrigin,
      '--callback-listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--private-key',
      file('private.pem'),
      '--api-key-file',
      writeSecret('api-key', s.apiKey),
      '--reports',
      file('observe-live'),
      '--capture',
      file('capture.jsonl'),
    ]);
    expect(run.orders).toBeDefined();
    expect(run.callbacks).toBeDefined();

    const service = (base: string, reports: string) =>
      runCliAsync([
        'verify',
        'service',
        '--base-url',
        base,
        '--api-key',
        s.apiKey,
        '--public-key',
        file('public.pem'),
        '--user-id',
        String(s.userId),
        '--control-token',
        s.controlToken!,
        '--forbidden-key',
        s.forbiddenKey!,
        '--expired-key',
        s.expiredKey!,
        '--future-key',
        s.futureKey!,
        '--reports',
        file(reports),
      ]);
    const merchant = (callbackUrl: string, reports: string) =>
      runCliAsync([
        'verify',
        'merchant',
        '--callback-url',
        callbackUrl,
        '--api-key',
        m.apiKey,
        '--private-key',
        file('private.pem'),
        '--probe-url',
        m.probeUrl!,
        '--expired-key',
        m.expiredKey!,
        '--future-key',
        m.futureKey!,
        '--reports',
        file(reports),
      ]);
    const direct = await service(s.baseUrl, 'service-direct');
    const through = await service(run.orders!, 'service-through');
    expect(through.status, through.stderr).toBe(direct.status);
    expect(verdicts(reportOf(file('service-through')))).toEqual(verdicts(reportOf(file('service-direct'))));
    expect(reportOf(file('service-direct')).results.length).toBeGreaterThan(50);

    const directMerchant = await merchant(m.callbackUrl, 'merchant-direct');
    const throughMerchant = await merchant(`${run.callbacks!}${new URL(m.callbackUrl).pathname}`, 'merchant-through');
    expect(throughMerchant.status, throughMerchant.stderr).toBe(directMerchant.status);
    expect(verdicts(reportOf(file('merchant-through')))).toEqual(verdicts(reportOf(file('merchant-direct'))));
    expect(reportOf(file('merchant-direct')).results.length).toBeGreaterThan(50);

    const status = await run.stop();
    const { stdout, stderr } = run.output();
    const live = reportOf(file('observe-live'));
    // Exit 1 exactly when a MUST failure was seen (the suites send faulty traffic on purpose).
    expect(status).toBe(live.summary.failed > 0 ? 1 : 0);
    const exchanges = await captured(file('capture.jsonl'));
    // What could not be judged is counted: at least the rules no traffic shows (CB-ONCE and the others).
    expect(summaryLine(stdout)).toMatch(
      new RegExp(
        `^observe: ${exchanges.length} exchanges, ${live.summary.failed} failed, ${live.summary.warnings} warnings, [1-9]\\d* not judged$`,
      ),
    );
    expect(stdout).toContain(`capture: ${file('capture.jsonl')} (${exchanges.length} exchanges)`);
    expect(new Set(exchanges.map((exchange) => exchange.kind))).toEqual(
      new Set(['energy', 'withdraw', 'card-close', 'callback', 'other']),
    );
    expect(exchanges.map((exchange) => exchange.seq)).toEqual(exchanges.map((_exchange, i) => i + 1));
    // Every callback the suites sent crossed observe and was answered by the merchant.
    expect(
      exchanges.filter((exchange) => exchange.kind === 'callback').every((exchange) => exchange.response !== undefined),
    ).toBe(true);
    const text = readFileSync(file('capture.jsonl'), 'utf8');
    for (const secret of [s.apiKey, s.controlToken!, s.forbiddenKey!, s.expiredKey!, s.futureKey!, m.futureKey!]) {
      expect(text).not.toContain(secret);
      expect(stdout + stderr).not.toContain(secret);
      expect(readFileSync(join(file('observe-live'), 'report.json'), 'utf8')).not.toContain(secret);
    }

    const replay = await runCliAsync([
      'observe',
      '--replay',
      file('capture.jsonl'),
      '--public-key',
      file('public.pem'),
      '--private-key',
      file('private.pem'),
      '--api-key',
      s.apiKey,
      '--reports',
      file('observe-replay'),
    ]);
    expect(replay.status, replay.stderr).toBe(status);
    expect(summaryLine(replay.stdout)).toBe(summaryLine(stdout));
    expect(verdicts(reportOf(file('observe-replay')))).toEqual(verdicts(live));
  }, 240_000);

  it('answers 502 for an upstream that is down, counts the exchange, and stops by itself after --duration', async () => {
    const down = await refusingPort();
    onTestFinished(() => down.close());
    const run = await observe([
      '--service-url',
      `http://127.0.0.1:${down.port}`,
      '--listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--duration',
      '2',
      '--reports',
      file('observe-down'),
    ]);
    const answer = await fetch(`${run.orders!}/api/v1/api/order/getEnergyMaxCount`, { method: 'POST', body: 'data=x' });
    expect(answer.status).toBe(502);
    // The answer names no upstream (its address is internal); the report holds the details.
    expect(await answer.text()).toBe('observe: the upstream failed\n');
    const status = await run.exited;
    const report = reportOf(file('observe-down'));
    // The upstream refused the connection: nothing else answered on its port while the test held it.
    expect(JSON.stringify(report)).toContain(`ECONNREFUSED 127.0.0.1:${down.port}`);
    expect(status).toBe(report.summary.failed > 0 ? 1 : 0);
    expect(summaryLine(run.output().stdout)).toMatch(
      new RegExp(
        `^observe: 1 exchanges, ${report.summary.failed} failed, ${report.summary.warnings} warnings, \\d+ not judged$`,
      ),
    );
    expect(run.output().stdout).toContain('callbacks not observed (no --callback-listen)');
  }, 60_000);

  it('warns when the merchant refuses every valid callback (CB-RAW-BODY) and when it answers 404 to everything (the URL it forwards to), counting what it could not judge', async () => {
    const m = embedded.merchant;
    // A receiver that refuses everything: errCode 1 to each callback, whatever it holds.
    const refuser = http.createServer((req, res) =>
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":1}')),
    );
    const refuserPort = await new Promise<number>((done) =>
      refuser.listen(0, '127.0.0.1', () => done((refuser.address() as { port: number }).port)),
    );
    const deliver = async (callbacks: string) => {
      for (let i = 0; i < 4; i++) {
        const body = sealCallback(withRequestUUID(defaultPayload(1)), m.privateKey, m.profile);
        await fetch(`${callbacks}/callback`, { method: 'POST', headers: callbackHeaders(m.apiKey), body });
      }
    };
    try {
      const refusing = await observe([
        '--merchant-url',
        `http://127.0.0.1:${refuserPort}`,
        '--callback-listen',
        '0',
        '--public-key',
        file('public.pem'),
        '--api-key-file',
        writeSecret('api-key-refuser', m.apiKey),
        '--reports',
        file('observe-refuser'),
      ]);
      await deliver(refusing.callbacks!);
      await refusing.stop();
      const out = refusing.output().stdout;
      expect(out).toMatch(
        /WARN .*\[CB-RAW-BODY\]: the merchant refused every one of the 4 valid callbacks it was sent/,
      );
      expect(summaryLine(out)).toMatch(/^observe: 4 exchanges, \d+ failed, [1-9]\d* warnings, [1-9]\d* not judged$/);
      const warned = reportOf(file('observe-refuser')).results.find(
        (result) => result.rules.includes('CB-RAW-BODY') && result.status === 'warning',
      );
      expect(JSON.stringify(warned?.evidence)).toContain('errCode');

      // A merchant URL with the callback path already in it: each callback goes to /callback/callback, answered 404.
      const doubled = await observe([
        '--merchant-url',
        m.callbackUrl,
        '--callback-listen',
        '0',
        '--public-key',
        file('public.pem'),
        '--reports',
        file('observe-doubled'),
      ]);
      expect(doubled.output().stdout).toMatch(
        /--merchant-url has a path: the path each request is received on is appended to it/,
      );
      await deliver(doubled.callbacks!);
      await doubled.stop();
      expect(doubled.output().stdout).toMatch(
        new RegExp(
          `WARN .*\\[CB-AVAILABLE\\]: every one of the 4 callbacks was answered HTTP 404: likely a misconfigured upstream, check ${m.callbackUrl.replace(/[.]/g, '\\.')} \\(--merchant-url\\)`,
        ),
      );
    } finally {
      await new Promise((done) => refuser.close(done));
    }
  }, 60_000);

  it('serves a listener over HTTPS from a tls: block (as in emulator.yaml) and forwards to a plain upstream', async () => {
    const authority = makeThrowawayCa();
    const pair = authority.issue({ names: ['127.0.0.1'] });
    writeFileSync(file('observe-cert.pem'), pair.cert);
    writeFileSync(file('observe-key.pem'), pair.key, { mode: 0o600 });
    writeFileSync(file('observe-tls.yaml'), 'tls:\n  cert: observe-cert.pem\n  key: observe-key.pem\nport: 9999\n');
    const run = await observe([
      '--service-url',
      embedded.service.baseUrl,
      '--listen',
      '0',
      '--listen-tls',
      file('observe-tls.yaml'),
      '--public-key',
      file('public.pem'),
      '--reports',
      file('observe-tls'),
    ]);
    expect(run.output().stdout).toMatch(/^observe: orders https:\/\/127\.0\.0\.1:\d+ → /m);
    const port = Number(new URL(run.orders!).port);
    const answer = await new Promise<{ status: number; emulator: string | undefined }>((done, fail) => {
      https
        .get({ host: '127.0.0.1', port, path: '/', ca: authority.cert }, (res) => {
          res.resume();
          done({
            status: res.statusCode!,
            emulator: res.headers['x-wallet-conformance-emulator'] as string | undefined,
          });
        })
        .on('error', fail);
    });
    // The emulator's own answer (its 404 for /, with its header), carried over TLS.
    expect(answer).toEqual({ status: 404, emulator: '1' });
    expect(await run.stop()).not.toBe(2);
    expect(summaryLine(run.output().stdout)).toMatch(/^observe: 1 exchanges, /);
  }, 60_000);

  /** An upstream that takes requests and never answers: an exchange stays in flight. */
  async function silentUpstream(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
    let received = 0;
    const server = createServer((socket) => socket.once('data', () => received++));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      received: () => received,
      close: () => new Promise<void>((done) => (server.close(() => done()), undefined)),
    };
  }

  async function observeWithOneInFlight(name: string) {
    const silent = await silentUpstream();
    const run = await observe([
      '--service-url',
      silent.url,
      '--listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--reports',
      file(name),
    ]);
    const pending = fetch(`${run.orders!}/api/v1/api/order/withdrawWithoutVerify`, {
      method: 'POST',
      body: 'data=x',
    }).catch(() => 'cut');
    while (silent.received() === 0) await new Promise((done) => setTimeout(done, 20));
    return { run, pending, silent };
  }

  it('stops on SIGTERM with an exchange in flight: cuts it, says so, writes the reports, no judge failure', async () => {
    const { run, pending, silent } = await observeWithOneInFlight('observe-stop');
    try {
      const status = await run.stop();
      expect(await pending).toBe('cut');
      expect(status, run.output().stderr).toBe(0);
      expect(run.output().stdout).toContain('observe: 1 exchanges still in flight at the stop were cut (not judged)');
      expect(run.output().stderr).not.toMatch(/judge failed/);
      expect(reportOf(file('observe-stop')).target).toMatchObject({ observe: { cut: 1 } });
    } finally {
      await silent.close();
    }
  }, 60_000);

  it('a second SIGTERM cuts at once and still writes the reports', async () => {
    const { run, pending, silent } = await observeWithOneInFlight('observe-second');
    try {
      // Two signals sent at once may reach the process as one: signal until it heard the second.
      while (run.child.exitCode === null && !run.output().stderr.includes('second signal')) {
        run.child.kill('SIGTERM');
        await new Promise((done) => setTimeout(done, 50));
      }
      const status = await run.exited;
      await pending;
      expect(run.output().stderr).toContain(
        'observe: a second signal: cutting the exchanges in flight and writing the reports now',
      );
      expect(status).toBe(0);
      expect(reportOf(file('observe-second')).target).toMatchObject({ observe: { cut: 1 } });
    } finally {
      await silent.close();
    }
  }, 60_000);

  it('rotates its capture into files that are captures of their own, and --replay reads them by a glob in order', async () => {
    const down = await refusingPort();
    onTestFinished(() => down.close());
    const capture = file('rotated.jsonl');
    const run = await observe([
      '--service-url',
      `http://127.0.0.1:${down.port}`,
      '--listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--capture',
      capture,
      '--capture-max-mb',
      '0.001',
      '--reports',
      file('observe-rotated'),
    ]);
    for (let i = 0; i < 5; i++)
      await fetch(`${run.orders!}/api/v1/api/order/getEnergyMaxCount`, {
        method: 'POST',
        body: `data=${'x'.repeat(300)}`,
      });
    await run.stop();
    expect(run.output().stdout).toMatch(
      /^capture: .*rotated\.000001\.jsonl … .*rotated\.00000\d\.jsonl \(\d files, 5 exchanges\)$/m,
    );
    const replayed = await runCliInProcess([
      'observe',
      '--replay',
      file('rotated.*.jsonl'),
      '--public-key',
      file('public.pem'),
      '--reports',
      file('replay-rotated'),
    ]);
    expect(replayed.stderr).toBe('');
    expect(replayed.stdout).toMatch(/^observe: 5 exchanges, /m);
    expect(
      (reportOf(file('replay-rotated')).target as { observe: { replay: string[] } }).observe.replay.length,
    ).toBeGreaterThan(1);
  }, 60_000);

  it('rewrites its reports while it runs, every --report-every and on SIGHUP, with the window they cover', async () => {
    const down = await refusingPort();
    onTestFinished(() => down.close());
    const reports = file('observe-interim');
    const run = await observe([
      '--service-url',
      `http://127.0.0.1:${down.port}`,
      '--listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--report-every',
      '0.2',
      '--metrics',
      '0',
      '--reports',
      reports,
    ]);
    await fetch(`${run.orders!}/api/v1/api/order/getEnergyMaxCount`, { method: 'POST', body: 'data=x' });
    // The metrics, on their own port, while it runs.
    const metricsLine = /^observe: metrics (http:\/\/127\.0\.0\.1:\d+)\/metrics \(probes: /m;
    while (!metricsLine.test(run.output().stdout)) await new Promise((done) => setTimeout(done, 20));
    const metricsUrl = metricsLine.exec(run.output().stdout)![1]!;
    expect(await (await fetch(`${metricsUrl}/metrics`)).text()).toContain(
      'wallet_conformance_observe_forwarding_errors_total{side="merchant",status="502"} 1',
    );
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    const interim = async (): Promise<Report> => {
      for (;;) {
        try {
          const report = reportOf(reports);
          if (report.notes?.some((note) => note.startsWith('observed 1 exchange'))) return report;
        } catch {
          // not written yet
        }
        await new Promise((done) => setTimeout(done, 50));
      }
    };
    const first = await interim();
    expect(first.notes).toContain(
      'interim report: the run goes on; verdicts that wait for later exchanges (retries, order callbacks) are not in it yet',
    );
    // The time the report covers, beside what the judge's memory spans.
    expect((first.target as { window: { final: boolean; from: string; to: string } }).window).toMatchObject({
      final: false,
      events: 10_000,
    });
    expect(run.child.exitCode).toBeNull();
    await run.stop();
    const final = reportOf(reports);
    expect((final.target as { window: { final: boolean } }).window.final).toBe(true);
    expect(final.notes?.some((note) => note.startsWith('interim report'))).toBe(false);
    expect(readdirSync(reports).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // Without --report-every, SIGHUP writes them.
    const hup = await observe([
      '--service-url',
      `http://127.0.0.1:${down.port}`,
      '--listen',
      '0',
      '--public-key',
      file('public.pem'),
      '--reports',
      file('observe-hup'),
    ]);
    await fetch(`${hup.orders!}/api/v1/api/order/getEnergyMaxCount`, { method: 'POST', body: 'data=x' });
    hup.child.kill('SIGHUP');
    for (let i = 0; i < 600 && !existsSync(join(file('observe-hup'), 'report.json')); i++)
      await new Promise((done) => setTimeout(done, 50));
    expect((reportOf(file('observe-hup')).target as { window: { final: boolean } }).window.final).toBe(false);
    expect(hup.child.exitCode).toBeNull();
    await hup.stop();
  }, 60_000);

  describe('bad input is one line and exit 2', () => {
    let busy: Server;
    let busyPort: number;
    beforeAll(async () => {
      busy = createServer();
      await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
      busyPort = (busy.address() as { port: number }).port;
      writeFileSync(
        file('bad-capture.jsonl'),
        `${JSON.stringify({ v: 1, seq: 1, kind: 'other', direction: 'merchant→service', startedAt: 1, endedAt: 2, request: { method: 'GET', path: '/', headers: {}, bodyBase64: '' }, response: { status: 200, headers: {}, bodyBase64: '' } })}\n{"v":1,"seq":2}\n`,
      );
      writeFileSync(file('existing.jsonl'), '');
      writeFileSync(file('no-tls.yaml'), 'port: 1\n');
    });
    afterAll(() => new Promise<void>((done) => busy.close(() => done())));

    const key = () => ['--public-key', file('public.pem')];
    // What listens, or opens a file to write or a capture to read, runs as a real process (a process
    // left hanging would show only there); the pure argument checks run the same main in-process.
    const REAL = new Set(['a port in use', 'an existing --capture file', 'a bad capture line']);
    it.each([
      [
        'no listener',
        () => [...key()],
        /^wallet-conformance: observe needs --listen PORT with --service-url URL, --callback-listen PORT with --merchant-url URL, or both \(or --replay FILE\)$/,
      ],
      [
        'a listener without its upstream',
        () => ['--listen', '0', ...key()],
        /^wallet-conformance: --listen needs --service-url URL/,
      ],
      [
        'an upstream without its listener',
        () => ['--merchant-url', 'http://127.0.0.1:1', ...key()],
        /^wallet-conformance: --merchant-url needs --callback-listen \[HOST:\]PORT/,
      ],
      [
        'a bad port',
        () => ['--listen', 'eighty', '--service-url', 'http://127.0.0.1:1', ...key()],
        /^wallet-conformance: --listen takes \[HOST:\]PORT, not "eighty"$/,
      ],
      [
        'a bad upstream URL',
        () => ['--listen', '0', '--service-url', 'ftp://x', ...key()],
        /^wallet-conformance: --service-url must be an http:\/\/ or https:\/\/ URL/,
      ],
      [
        'credentials in the upstream URL (refused, not dropped; the password never shown)',
        () => ['--listen', '0', '--service-url', 'http://user:hunter2-secret@127.0.0.1:1', ...key()],
        /^wallet-conformance: --service-url carries credentials \(user:password@\): observe forwards each request's own credentials and adds none; give the URL without them$/,
      ],
      [
        'a query in the upstream URL (refused, not dropped)',
        () => ['--callback-listen', '0', '--merchant-url', 'http://127.0.0.1:1/?tenant=7', ...key()],
        /^wallet-conformance: --merchant-url has a query \(\?\.\.\.\)/,
      ],
      [
        '--capture-keep without --capture-max-mb',
        () => [
          '--listen',
          '0',
          '--service-url',
          'http://127.0.0.1:1',
          '--capture',
          file('never.jsonl'),
          '--capture-keep',
          '3',
          ...key(),
        ],
        /^wallet-conformance: --capture-keep goes with --capture-max-mb MB/,
      ],
      [
        'a judge priority that is neither low nor normal',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--judge-priority', 'high', ...key()],
        /^wallet-conformance: --judge-priority takes low or normal, not "high"$/,
      ],
      [
        'a judge share of a core that is not a whole percentage from 1 to 100',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--judge-cpu', '12.5', ...key()],
        /^wallet-conformance: --judge-cpu takes a whole percentage of one core from 1 to 100, not "12\.5"$/,
      ],
      [
        '--capture-max-mb without --capture',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--capture-max-mb', '5', ...key()],
        /^wallet-conformance: --capture-max-mb goes with --capture FILE$/,
      ],
      [
        '--metrics on a proxy port',
        () => ['--listen', '127.0.0.1:47001', '--service-url', 'http://127.0.0.1:1', '--metrics', '47001', ...key()],
        /^wallet-conformance: --metrics 47001: port 47001 is a proxy listener's \(give the metrics their own port\)$/,
      ],
      [
        'no public key',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1'],
        /^wallet-conformance: --public-key FILE is required/,
      ],
      [
        'an unreadable key',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--public-key', file('missing.pem')],
        /^wallet-conformance: cannot read public key .*missing\.pem: no such file$/,
      ],
      [
        'a private key where the public one goes',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--public-key', file('private.pem')],
        /^wallet-conformance: .*private\.pem/,
      ],
      [
        'a port in use',
        () => ['--listen', String(busyPort), '--service-url', 'http://127.0.0.1:1', ...key()],
        /^wallet-conformance: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/,
      ],
      [
        'a bad --duration',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--duration', '0', ...key()],
        /^wallet-conformance: --duration takes a positive number of seconds, not "0"$/,
      ],
      [
        'a --listen-tls file without tls:',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--listen-tls', file('no-tls.yaml'), ...key()],
        /^wallet-conformance: .*no-tls\.yaml: no tls: block/,
      ],
      [
        'an existing --capture file',
        () => ['--listen', '0', '--service-url', 'http://127.0.0.1:1', '--capture', file('existing.jsonl'), ...key()],
        /^wallet-conformance: --capture .*existing\.jsonl exists already/,
      ],
      [
        '--replay with a listener',
        () => ['--replay', file('bad-capture.jsonl'), '--listen', '0', ...key()],
        /^wallet-conformance: --replay judges a capture offline: drop --listen$/,
      ],
      [
        'a capture that is not there',
        () => ['--replay', file('nothing.jsonl'), ...key()],
        /^wallet-conformance: cannot read capture .*nothing\.jsonl: no such file$/,
      ],
      [
        'a bad capture line',
        () => ['--replay', file('bad-capture.jsonl'), '--reports', file('never'), ...key()],
        /^wallet-conformance: .*bad-capture\.jsonl:2: kind must be one of/,
      ],
    ])('%s', async (name, args, message) => {
      const run = await (REAL.has(name) ? runCliAsync : runCliInProcess)(['observe', ...args()]);
      expect(run.status, run.stdout + run.stderr).toBe(2);
      const lines = run.stderr.split('\n').filter((line) => line !== '' && !/no observe judge/.test(line));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
    });
  });
});

function writeSecret(name: string, value: string): string {
  writeFileSync(file(name), `${value}\n`, { mode: 0o600 });
  return file(name);
}
