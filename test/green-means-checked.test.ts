/**
 * Green means checked (the real CLI): a step that fails because of the target is its failure
 * (exit 1, under a named rule), never `skipped`; every run ends with the MUST checks it did not
 * judge, by reason. A receiver whose probe fails after its first read, a service whose control API
 * fails mid-run: each hides nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { readBody } from '../src/platform/http-io.js';
import type { Report } from '../src/runner/types.js';
import { listenOn, stopServer } from './fixtures/receiver-server.js';
import { runCliAsync } from './support/cli.js';

const lastLine = (stdout: string) => stdout.trimEnd().split('\n').at(-1);

describe('green means checked: no error hides behind skipped (the real CLI)', () => {
  let embedded: Embedded;
  const servers: http.Server[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'wc-green-'));
  const report = (name: string) => JSON.parse(readFileSync(join(dir, name, 'report.json'), 'utf8')) as Report;
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(
      join(dir, 'public.pem'),
      embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
    );
    writeFileSync(
      join(dir, 'private.pem'),
      embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }),
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => stopServer(server)));
    await embedded.close();
  });
  const serve = async (handler: http.RequestListener): Promise<string> => {
    const server = http.createServer(handler);
    servers.push(server);
    return `http://127.0.0.1:${await listenOn(server)}`;
  };

  it('fails a receiver that acknowledges everything and whose probe answers HTTP 500 after its first read: exit 1 under CB-ONCE', async () => {
    // The probe answers until the suites' first delivery (pre-flight's one callback and the first baseline read it), then 500.
    let callbacks = 0;
    const url = await serve((req, res) => {
      if (req.url?.startsWith('/probe')) {
        const fine = callbacks <= 1;
        res
          .writeHead(fine ? 200 : 500, { 'content-type': 'application/json' })
          .end(fine ? '{"processed":[]}' : '{"error":"ledger down"}');
        return;
      }
      if (req.method === 'POST') callbacks++;
      req
        .resume()
        .on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0,"message":""}'));
    });
    const run = await runCliAsync([
      'verify',
      'merchant',
      '--callback-url',
      `${url}/callback`,
      '--probe-url',
      `${url}/probe`,
      '--api-key',
      'ak-any',
      '--private-key',
      join(dir, 'private.pem'),
      '--suite',
      'merchant/idempotency',
      '--settle-ms',
      '0',
      '--reports',
      join(dir, 'probe-500'),
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /FAIL \[\d+\/\d+\] merchant\/idempotency\/\S+\/processed \[CB-ONCE\]: the merchant's probe failed after answering earlier in the run: the probe \S+ answered 500/,
    );
    const probeChecks = report('probe-500').results.filter((result) => /\/processed(-exact)?(#\d+)?$/.test(result.id));
    expect(probeChecks.length).toBeGreaterThan(0);
    // Skipped only for what was not given (--restart); every other probe check is a failure of the probe.
    expect(
      probeChecks.filter((result) => result.status === 'skipped' && !result.message.startsWith('needs --restart')),
    ).toEqual([]);
    expect(probeChecks.filter((result) => result.status === 'failed').length).toBeGreaterThan(20);
    expect(lastLine(run.stdout)).toMatch(/^not judged: \d+ MUST checks?/);
  }, 60_000);

  it('fails a service whose control API fails mid-run: exit 1 under the rule the control step prepared, evidence kept', async () => {
    const target = new URL(embedded.service.baseUrl);
    let energySet = 0;
    const url = await serve((req, res) => {
      void readBody(req, 1 << 20).then((read) => {
        const body = read.ok ? read.body : Buffer.alloc(0);
        // The capability probe sends a body that is not JSON: it passes; the third real setting fails.
        if (
          req.method === 'PUT' &&
          /\/__control\/merchants\/[^/]+\/energy$/.test(req.url ?? '') &&
          body.toString().startsWith('{"') &&
          ++energySet === 3
        ) {
          res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"control store down"}');
          return;
        }
        const forward = http.request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.end(body);
      });
    });
    const run = await runCliAsync([
      'verify',
      'service',
      '--base-url',
      url,
      '--api-key',
      embedded.service.apiKey,
      '--public-key',
      join(dir, 'public.pem'),
      '--user-id',
      String(embedded.service.userId),
      '--control-token',
      embedded.service.controlToken!,
      '--suite',
      'service/energy',
      '--reports',
      join(dir, 'control-503'),
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /FAIL \[\d+\/\d+\] service\/energy\/floor-of-live-balance\/energy-floor#3 \[ENERGY-FLOOR\]: the control API failed: control API answered 503/,
    );
    const failed = report('control-503').results.find(
      (result) => result.id === 'service/energy/floor-of-live-balance/energy-floor#3',
    );
    expect(JSON.stringify(failed?.evidence)).toContain('control store down');
    expect(
      report('control-503').results.filter((result) => result.status === 'skipped' && /control/.test(result.message)),
    ).toEqual([]);
  }, 60_000);

  it("makes a suite error the suite author's: exit 2 with the reason, the result failed with fault suite, never skipped", async () => {
    const suites = join(dir, 'user-suites');
    mkdirSync(suites, { recursive: true });
    writeFileSync(
      join(suites, 'redelivery.yaml'),
      [
        'title: A redelivery of an event no step defined',
        'side: merchant',
        'cases:',
        '  - id: same-of-nothing',
        '    title: A redelivery naming no earlier event',
        '    rules: [CB-DUP-ACK]',
        '    steps:',
        '      - deliver: { same: nowhere }',
        '        expect:',
        '          - { check: answers }',
        '',
      ].join('\n'),
    );
    const m = embedded.merchant;
    const run = await runCliAsync([
      'verify',
      'merchant',
      '--callback-url',
      m.callbackUrl,
      '--api-key',
      m.apiKey,
      '--private-key',
      join(dir, 'private.pem'),
      '--suites',
      suites,
      '--suite',
      'redelivery',
      '--reports',
      join(dir, 'suite-error'),
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stdout).toMatch(
      /could not judge 1 check\(s\) through no fault of the target \(suite error\): exit 2; first: \S+same-of-nothing\/answers: suite error: deliver\.same names nowhere/,
    );
    expect(report('suite-error').results).toEqual([
      expect.objectContaining({ status: 'failed', fault: 'suite', rules: ['CB-DUP-ACK'] }),
    ]);
    expect(lastLine(run.stdout)).toMatch(/^not judged: 1 MUST check, for the reasons above/);
  }, 60_000);
});
