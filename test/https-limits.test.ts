import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { startMerchantServer } from '../src/merchant/server.js';
import type { Report } from '../src/runner/types.js';
import { runCliWithEnv as cli } from './support/network.js';
import { freePort } from './support/ports.js';

/** A receiver that answers GET at once and `answer` to everything else. */
async function receiver(answer: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') res.writeHead(405, { 'content-length': 0 }).end();
    else answer(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe('limits of a run: --max-body, --timeout, a target that goes away', () => {
  let embedded: Embedded;
  const dir = mkdtempSync(join(tmpdir(), 'wc-limits-'));
  const file = (name: string) => join(dir, name);
  beforeAll(async () => {
    embedded = await startEmbedded();
    writeFileSync(file('private.pem'), embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }));
  });
  afterAll(() => embedded.close());
  const send = (url: string, extra: string[] = []) =>
    cli([
      'callback',
      'send',
      '--url',
      url,
      '--api-key',
      embedded.merchant.apiKey,
      '--private-key',
      file('private.pem'),
      '--type',
      '1',
      ...extra,
    ]);
  const merchantRun = (url: string, reports: string, extra: string[] = []) =>
    cli([
      'verify',
      'merchant',
      '--callback-url',
      url,
      '--api-key',
      embedded.merchant.apiKey,
      '--private-key',
      file('private.pem'),
      '--reports',
      file(reports),
      ...extra,
    ]);

  it('an answer bigger than --max-body is a transport error naming the cap; the default cap is 1 MiB', async () => {
    const target = await receiver((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"errCode":0,"pad":"${'x'.repeat(5000)}"}`);
    });
    try {
      const capped = await send(target.url, ['--max-body', '1000']);
      expect(capped.stdout).toMatch(
        /delivery 1\/1: no answer: POST http:\/\/127\.0\.0\.1:\d+\/callback: the answer is larger than the cap of 1000 bytes \(--max-body\)/,
      );
      expect(capped.status).toBe(1);
      const uncapped = await send(target.url);
      expect(uncapped.stdout).toMatch(/delivery 1\/1: HTTP 200 \{"errCode":0/);
      expect(uncapped.status).toBe(0);
      const bad = await send(target.url, ['--max-body', 'lots']);
      expect(bad.stderr).toBe('wallet-conformance: --max-body takes a whole number, not "lots"\n');
      expect(bad.status).toBe(2);
    } finally {
      await target.close();
    }
  }, 60_000);

  it('--timeout bounds the whole run: the run stops, the reports are written and say so, exit 2', async () => {
    // It acknowledges the first callback (the pre-flight), then never answers again.
    let answered = 0;
    const hanging = await receiver((req, res) => {
      req.resume();
      if (answered++ === 0) res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0}');
    });
    try {
      const run = await merchantRun(hanging.url, 'timeout', ['--timeout', '5', '--suite', 'merchant/raw-body']);
      expect(run.stderr).toMatch(
        /wallet-conformance: the run was cut after --timeout 5 s; the reports hold what ran before\n$/,
      );
      const report = JSON.parse(readFileSync(file('timeout/report.json'), 'utf8')) as Report;
      expect(report.target.cut).toEqual({ reason: 'run-timeout', message: 'the run was cut after --timeout 5 s' });
      expect(run.status).toBe(2);
    } finally {
      await hanging.close();
    }
  }, 60_000);

  it('a merchant that stops answering mid-run has failed (CB-AVAILABLE, with the last input as evidence): exit 1, the cases left not run', async () => {
    let processed = 0;
    // The merchant sits behind a TCP hop that the test can pull at once, as a crash or a redeploy would:
    // open connections are cut and new ones refused.
    const sockets = new Set<net.Socket>();
    const hop = net.createServer((client) => {
      const upstream = net.connect(new URL(merchant.url).port as unknown as number, '127.0.0.1');
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    const pull = () => {
      hop.close();
      for (const socket of sockets) socket.destroy();
    };
    const merchant = await startMerchantServer({
      apiKeys: [embedded.merchant.apiKey],
      publicKey: embedded.service.publicKey,
      profile: embedded.merchant.profile,
      store: ':memory:',
      // The third accepted callback (the pre-flight's is the first) takes the merchant down.
      process: () => void (++processed === 3 && setImmediate(pull)),
    });
    // Off the ephemeral range: once pulled, no other test's listen(0) is given its port.
    const port = await freePort();
    await new Promise<void>((done) => hop.listen(port, '127.0.0.1', done));
    const url = `http://127.0.0.1:${port}/callback`;
    // Every merchant suite: many deliveries are left when the merchant goes.
    const run = await merchantRun(url, 'gone').finally(() => merchant.close());
    expect(run.stderr).toMatch(
      /wallet-conformance: the target stopped answering during the run \(http:\/\/127\.0\.0\.1:\d+ stopped answering: ECONNREFUSED \(it answered earlier in the run\)\): reported as a failure; the cases left were not run\n$/,
    );
    const report = JSON.parse(readFileSync(file('gone/report.json'), 'utf8')) as Report;
    expect(report.target.cut).toMatchObject({ reason: 'target-gone' });
    expect(report.summary.passed).toBeGreaterThan(0);
    // One failure says the merchant stopped answering, with what it last received; nothing else fails for it.
    const stopped = report.results.filter((r) => r.id.endsWith('/target-stopped'));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.status).toBe('failed');
    expect(
      report.results
        .filter((r) => r.status === 'failed')
        .every((r) => r.suite === stopped[0]!.suite && r.case === stopped[0]!.case),
    ).toBe(true);
    expect(stopped[0]!.rules[0]).toBe('CB-AVAILABLE');
    expect(stopped[0]!.message).toMatch(
      /^the merchant stopped answering after case merchant\/[\w/-]+ \(.*ECONNREFUSED.*\); the last input it received: POST http:\/\/127\.0\.0\.1:\d+\/callback/,
    );
    expect((stopped[0]!.evidence as { exchanges: unknown[] }).exchanges.length).toBeGreaterThan(0);
    // What was left is not run, naming the case after which the merchant stopped: no page of failures.
    expect(
      report.results.filter(
        (r) =>
          r.status === 'skipped' && r.message.startsWith('not run: the target stopped answering after case merchant/'),
      ).length,
    ).toBeGreaterThan(10);
    expect(report.notes?.[0]).toMatch(/^the target stopped answering after case merchant\//);
    expect(run.status).toBe(1);
  }, 60_000);
});
