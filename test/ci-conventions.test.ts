import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { reachWithin } from '../src/cli/wait-for.js';
import { DEFAULT_PROFILE } from '../src/core/profile.js';
import { makeThrowawayCa } from '../src/crypto/throwaway-certificates.js';
import type { Report } from '../src/runner/types.js';
import { startFaultyMerchant, type FaultyMerchant } from './fixtures/faulty-merchant.js';
import { ROOT, runCliAsync } from './support/cli.js';
import { freePort, refusingPort } from './support/ports.js';
import { runCliInProcess } from './support/cli-in-process.js';

const cli = runCliAsync;
const report = (dir: string): Report => JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;

/** Runs a shell command line without blocking this process (the faulty merchant lives in it). */
function shell(line: string, env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', line], { cwd: ROOT, env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    child.on('close', (status) => done({ status, stderr }));
  });
}

function listen(server: http.Server): Promise<number> {
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port)));
}

describe('reports that start with what to do, and the CLI conventions of CI (the real CLI)', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-ci-'));
  const pem = (name: string) => join(dir, name);
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(pem('public.pem'), embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
    writeFileSync(pem('private.pem'), embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }));
  });
  afterAll(async () => {
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const merchantArgs = () => [
    'verify',
    'merchant',
    '--callback-url',
    embedded.merchant.callbackUrl,
    '--api-key',
    embedded.merchant.apiKey,
    '--private-key',
    pem('private.pem'),
    '--probe-url',
    embedded.merchant.probeUrl!,
  ];
  const serviceArgs = () => [
    'verify',
    'service',
    '--base-url',
    embedded.service.baseUrl,
    '--public-key',
    pem('public.pem'),
  ];

  it('--case runs only the cases named (a comma list, a glob); an unknown id is one line, exit 2, naming the close ones', async () => {
    const run = await cli([
      ...merchantArgs(),
      '--case',
      'merchant/raw-body/valid-deposit,merchant/key-first/missing-*',
      '--reports',
      join(dir, 'case'),
    ]);
    expect(run.status, run.stderr).toBe(0);
    const cases = [...new Set(report(join(dir, 'case')).results.map((r) => `${r.suite}/${r.case}`))];
    expect(cases.sort()).toEqual(['merchant/key-first/missing-key', 'merchant/raw-body/valid-deposit']);
    // Refused by the argument checks before any connection: the built main in-process (test/support/cli-in-process.ts).
    const typo = await runCliInProcess([
      ...merchantArgs(),
      '--case',
      'merchant/raw-body/valid-depost',
      '--reports',
      join(dir, 'typo'),
    ]);
    expect([typo.status, typo.stderr]).toEqual([
      2,
      'wallet-conformance: --case "merchant/raw-body/valid-depost" names no case; did you mean merchant/raw-body/valid-deposit?\n',
    ]);
    const leftOut = await runCliInProcess([
      ...merchantArgs(),
      '--suite',
      'merchant/key-first',
      '--case',
      'merchant/raw-body/valid-deposit',
      '--reports',
      join(dir, 'left-out'),
    ]);
    expect([leftOut.status, leftOut.stderr]).toEqual([
      2,
      'wallet-conformance: --case merchant/raw-body/valid-deposit names no case among those --suite "merchant/key-first" chose\n',
    ]);
  }, 60_000);

  describe('a receiver that reads the body as a form field', () => {
    let faulty: FaultyMerchant;
    beforeAll(async () => {
      faulty = await startFaultyMerchant('form-field-reader', {
        apiKey: 'ak-form-reader-7c1f',
        publicKey: embedded.merchant.privateKey.publicKey,
        profile: { ...DEFAULT_PROFILE },
      });
    });
    afterAll(() => faulty.close());

    it('gets one root cause with its fix, pre-flight on top, failures before everything else, and a replay command per failure that replays just that case', async () => {
      const out = join(dir, 'form');
      const run = await cli(
        [
          'verify',
          'merchant',
          '--callback-url',
          faulty.callbackUrl,
          '--private-key',
          pem('private.pem'),
          '--probe-url',
          faulty.probeUrl,
          '--settle-ms',
          '300',
          '--suite',
          'merchant/raw-body',
          '--reports',
          out,
        ],
        { env: { WALLET_API_KEY: 'ak-form-reader-7c1f' } },
      );
      expect(run.status, run.stderr).toBe(1);
      const json = report(out);
      const failed = json.results.filter((r) => r.status === 'failed');
      expect(failed.length).toBeGreaterThan(1);
      // The console closes with the groups: one cause, its proof (pre-flight's experiment), its replay.
      expect(run.stdout).toMatch(
        new RegExp(
          `what to fix first \\(${failed.length} failures in 1 group\\):\\n  ${failed.length} failures share one cause: the body was read as a form field \\(a '\\+' in the Base64 became a space\\): read the raw request body as the Base64 text, before any form or JSON parser \\(CB-RAW-BODY\\)`,
        ),
      );
      expect(run.stdout).toMatch(/ {4}how it is known: pre-flight: a valid callback whose Base64 holds no '\+'/);
      // report.html: title, pre-flight, then the failures, before what was tested, the rules and the rest.
      const html = readFileSync(join(out, 'report.html'), 'utf8');
      expect([...html.matchAll(/<h2 id="(\w+)"/g)].map((m) => m[1])).toEqual([
        'preflight',
        'failed',
        'tested',
        'rules',
        'checks',
      ]);
      expect(html).toContain(`${failed.length} failures share one cause: the body was read as a form field`);
      // summary.md likewise, without raw JSON for the target.
      const md = readFileSync(join(out, 'summary.md'), 'utf8');
      expect(md.indexOf('**Pre-flight: warning**')).toBeLessThan(md.indexOf('### Failed'));
      expect(md.indexOf('### Failed')).toBeLessThan(md.indexOf('### What was tested'));
      // Every failure carries its replay; the key came from the environment: it is named nowhere, and its value never written.
      for (const r of failed)
        expect(r.replay).toBe(
          `wallet-conformance verify merchant --callback-url ${faulty.callbackUrl} --private-key ${pem('private.pem')} --probe-url ${faulty.probeUrl} --settle-ms 300 --reports ${out} --case ${r.suite}/${r.case}`,
        );
      for (const text of [run.stdout, run.stderr, md, html, JSON.stringify(json)])
        expect(text).not.toContain('ak-form-reader-7c1f');
      // The replay, as printed (the program by its path), runs that one case and fails it again.
      const replay = failed[0]!.replay!.replace(
        /^wallet-conformance /,
        `${process.execPath} ${resolve(ROOT, 'bin/wallet-conformance.js')} `,
      );
      const again = await shell(`${replay} --reports ${join(dir, 'replayed')}`, {
        WALLET_API_KEY: 'ak-form-reader-7c1f',
      });
      expect(again.status, again.stderr).toBe(1);
      const replayed = report(join(dir, 'replayed'));
      expect([...new Set(replayed.results.map((r) => `${r.suite}/${r.case}`))]).toEqual([
        `${failed[0]!.suite}/${failed[0]!.case}`,
      ]);
      expect(replayed.results.find((r) => r.id === failed[0]!.id)?.status).toBe('failed');
    }, 120_000);
  });

  it('--wait-for: a target that never answers is the unreachable line, saying how long it waited', async () => {
    const down = await refusingPort();
    onTestFinished(() => down.close());
    const port = down.port;
    const run = await cli([
      'verify',
      'merchant',
      '--callback-url',
      `http://127.0.0.1:${port}/cb`,
      '--api-key',
      'k',
      '--private-key',
      pem('private.pem'),
      '--wait-for',
      '1',
      '--reports',
      join(dir, 'wait'),
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(
        `^wallet-conformance: --callback-url http://127\\.0\\.0\\.1:${port}/cb is unreachable: .*ECONNREFUSED.* \\(waited 1(\\.\\d)? s with --wait-for 1: \\d+ attempts\\)\\n$`,
      ),
    );
    const bad = await runCliInProcess([
      'verify',
      'merchant',
      '--callback-url',
      `http://127.0.0.1:${port}/cb`,
      '--api-key',
      'k',
      '--private-key',
      pem('private.pem'),
      '--wait-for',
      'soon',
    ]);
    expect([bad.status, bad.stderr]).toEqual([
      2,
      'wallet-conformance: --wait-for takes a number of seconds from 0 to 3600, not "soon"\n',
    ]);
  }, 30_000);

  it("--wait-for: polls until a target still starting answers, past a gateway's 503", async () => {
    let status = 503;
    const server = http.createServer((_req, res) => res.writeHead(status).end());
    const port = await freePort();
    // Nothing listens yet; then a gateway answers 503; then the target answers.
    setTimeout(() => server.listen(port, '127.0.0.1'), 400);
    setTimeout(() => (status = 404), 900);
    try {
      const headers = await reachWithin(`http://127.0.0.1:${port}/cb`, '--callback-url', 10_000, { pauseMs: 100 });
      expect(headers).toBeTypeOf('object');
      expect(status).toBe(404);
    } finally {
      server.close();
    }
  }, 20_000);

  it('https:// to a plain port and http:// to a TLS port are one clear line each, exit 2', async () => {
    const ca = makeThrowawayCa();
    const pair = ca.issue({ names: ['127.0.0.1'] });
    const tls = https.createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end('ok'));
    const tlsPort = await listen(tls);
    const plainPort = new URL(embedded.merchant.callbackUrl).port;
    try {
      const toPlain = await cli([
        'verify',
        'merchant',
        '--callback-url',
        `https://127.0.0.1:${plainPort}/callback`,
        '--api-key',
        'k',
        '--private-key',
        pem('private.pem'),
      ]);
      expect([toPlain.status, toPlain.stderr]).toEqual([
        2,
        `wallet-conformance: --callback-url https://127.0.0.1:${plainPort}/callback: TLS: 127.0.0.1:${plainPort} does not speak TLS on that port, it answers plain HTTP [ERR_SSL_WRONG_VERSION_NUMBER]: use an http:// URL\n`,
      ]);
      const toTls = await cli([
        'verify',
        'merchant',
        '--callback-url',
        `http://127.0.0.1:${tlsPort}/callback`,
        '--api-key',
        'k',
        '--private-key',
        pem('private.pem'),
      ]);
      expect([toTls.status, toTls.stderr]).toEqual([
        2,
        `wallet-conformance: --callback-url http://127.0.0.1:${tlsPort}/callback: TLS: 127.0.0.1:${tlsPort} speaks TLS on that port, not plain HTTP (the plain request was dropped) [ECONNRESET]: use an https:// URL\n`,
      ]);
    } finally {
      tls.close();
    }
  }, 30_000);

  it('callback send takes the type by name; an unknown one lists the names and numbers', async () => {
    const m = embedded.merchant;
    const byName = await cli([
      'callback',
      'send',
      '--url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      pem('private.pem'),
      '--type',
      'withdrawal-request',
    ]);
    expect(byName.status, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/"type":2\b/);
    const unknown = await runCliInProcess([
      'callback',
      'send',
      '--url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      pem('private.pem'),
      '--type',
      'refund',
    ]);
    expect([unknown.status, unknown.stderr]).toEqual([
      2,
      'wallet-conformance: --type must be a callback type\'s name or number (deposit 1, withdrawal-request 2, withdrawal 3, address 4, invalid-address 5, not-enough-money 6, not-enough-hot-money 7), not "refund"\n',
    ]);
  }, 30_000);

  it('a refused key from an environment variable is named as that variable, not as --api-key', async () => {
    const run = await cli([...serviceArgs(), '--case', 'service/energy/success', '--reports', join(dir, 'envkey')], {
      env: { WALLET_API_KEY: 'not-the-key-4f2a' },
    });
    expect(run.stderr.split('\n')[0]).toMatch(
      /^pre-flight: warning: the service answered HTTP 401 to the API key from env WALLET_API_KEY: check the key/,
    );
    expect(run.stderr).not.toContain('--api-key');
    expect(`${run.stdout}${run.stderr}`).not.toContain('not-the-key-4f2a');
  }, 30_000);

  it('--user-id: a merchant the control API does not know is exit 2 with the proof; a known one is an ok pre-flight step', async () => {
    const s = embedded.service;
    const unknown = await cli([
      ...serviceArgs(),
      '--api-key',
      s.apiKey,
      '--control-token',
      s.controlToken!,
      '--user-id',
      '424242',
      '--case',
      'service/energy/success',
      '--reports',
      join(dir, 'user-unknown'),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(
      /^wallet-conformance: pre-flight: --user-id 424242 is not a merchant the service knows: its control API answers it exactly as \d+, an id no merchant has \(--user-id 424242: HTTP 404 .*; \d+: HTTP 404 .*\), while a route that does not exist answers HTTP 404 .*\n$/,
    );
    const known = await cli([
      ...serviceArgs(),
      '--api-key',
      s.apiKey,
      '--control-token',
      s.controlToken!,
      '--user-id',
      String(s.userId),
      '--case',
      'service/energy/success',
      '--reports',
      join(dir, 'user-known'),
    ]);
    expect(known.status, known.stderr).toBe(0);
    expect(report(join(dir, 'user-known')).preflight?.steps[0]).toMatchObject({
      level: 'ok',
      conclusion: `the control API answers --user-id ${s.userId} otherwise than an id no merchant has: the service knows it`,
    });
  }, 60_000);

  it('--public-url is the receiver URL told to the service; bad --listen-host and --public-url are one line each', async () => {
    const s = embedded.service;
    const port = await freePort();
    const publicUrl = `http://localhost:${port}/seen-from-the-service`;
    const run = await cli([
      ...serviceArgs(),
      '--api-key',
      s.apiKey,
      '--control-token',
      s.controlToken!,
      '--user-id',
      String(s.userId),
      '--listen',
      String(port),
      '--listen-host',
      '127.0.0.1',
      '--public-url',
      publicUrl,
      '--case',
      'service/callbacks/deposit-delivery',
      '--reports',
      join(dir, 'public'),
    ]);
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    const results = report(join(dir, 'public')).results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => r.status === 'passed')).toBe(true);
    expect(JSON.stringify(results.map((r) => r.evidence))).toContain(
      JSON.stringify(JSON.stringify({ url: publicUrl })).slice(1, -1),
    );
    const badHost = await runCliInProcess([...serviceArgs(), '--api-key', s.apiKey, '--listen-host', 'not a host']);
    expect([badHost.status, badHost.stderr]).toEqual([
      2,
      'wallet-conformance: --listen-host takes an IP address or a host name, not "not a host"\n',
    ]);
    const badUrl = await runCliInProcess([...serviceArgs(), '--api-key', s.apiKey, '--public-url', 'ftp://x/cb']);
    expect([badUrl.status, badUrl.stderr]).toEqual([
      2,
      'wallet-conformance: --public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not "ftp://x/cb"\n',
    ]);
  }, 60_000);
});
