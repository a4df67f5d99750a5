/**
 * Pre-flight blames the configuration only when it proved it wrong, and a target that stops answering
 * under our input has failed: the real CLI against faulty services and merchants on loopback.
 */
import { constants, generateKeyPairSync, privateEncrypt, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import { stringifyExact } from '../src/core/exact-json.js';
import { readBody } from '../src/platform/http-io.js';
import { decodeBase64Strict, encodeBase64 } from '../src/crypto/base64.js';
import { openJson, sealJson } from '../src/crypto/codec.js';
import { parseKey, type RsaPublicKey } from '../src/crypto/keys.js';
import { nativeEngine } from '../src/crypto/rsa-engine.js';
import type { EmulatorMerchant } from '../src/emulator/config.js';
import type { SuccessEnvelope } from '../src/emulator/variant.js';
import type { Report } from '../src/runner/types.js';
import { faultyVariant } from './fixtures/emulator-faults.js';
import { startFaultyMerchant, type FaultyMerchant } from './fixtures/faulty-merchant.js';
import { listenOn, receiverServer, stopServer } from './fixtures/receiver-server.js';
import { runCliAsync } from './support/cli.js';
import { freePort } from './support/ports.js';

type Envelope = (envelope: SuccessEnvelope, sealed: { result: unknown; merchant: EmulatorMerchant }) => SuccessEnvelope;

/** PKCS#1 v1.5 block type 2 (the public-key framing) applied with the private key: the wrong block type. */
function wrongBlockType(text: string, merchant: EmulatorMerchant): string {
  const key = merchant.keyPair.privateKey;
  const k = key.modulusBytes;
  const plain = Buffer.from(text, 'utf8');
  const blocks: Buffer[] = [];
  for (let offset = 0; offset < plain.length; offset += k - 11) {
    const message = plain.subarray(offset, offset + k - 11);
    const filler = Buffer.from([...randomBytes(k - 3 - message.length)].map((byte) => byte || 1));
    blocks.push(
      privateEncrypt(
        { key: key.keyObject, padding: constants.RSA_NO_PADDING },
        Buffer.concat([Buffer.from([0, 2]), filler, Buffer.from([0]), message]),
      ),
    );
  }
  return encodeBase64(Buffer.concat(blocks));
}

/** How the service's success envelope is shaped in each test (one emulator, switched per test). */
const ENVELOPES: Record<string, Envelope | undefined> = {
  'not-encrypted': (envelope, { result }) => ({
    ...envelope,
    data: encodeBase64(Buffer.from(stringifyExact(result), 'utf8')),
  }),
  'another-key': faultyVariant(['response-wrong-key']).successEnvelope,
  'url-safe': faultyVariant(['response-urlsafe-base64']).successEnvelope,
  'line-breaks': faultyVariant(['response-line-breaks']).successEnvelope,
  'wrong-block-type': (envelope, { result, merchant }) => ({
    ...envelope,
    data: wrongBlockType(stringifyExact(result), merchant),
  }),
  'oaep-sha1': (envelope, { result, merchant }) => ({
    ...envelope,
    data: sealJson(result, 'response', merchant.keyPair.privateKey, {
      profile: { ...merchant.profile, padding: 'oaep-sha1' },
    }),
  }),
};

describe('pre-flight: no blame without proof; a crash is a failure (the real CLI)', () => {
  let embedded: Embedded;
  let mode: string | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'wc-preflight-'));
  const file = (name: string) => join(dir, name);
  const report = (name: string) => JSON.parse(readFileSync(file(`${name}/report.json`), 'utf8')) as Report;
  beforeAll(async () => {
    const unversioned = faultyVariant(['energy-path-unversioned-only']).route!;
    embedded = await startEmbedded({
      emulatorVariant: {
        successEnvelope: (envelope, sealed) => {
          const shape = mode === undefined ? undefined : ENVELOPES[mode];
          return shape ? shape(envelope, sealed) : envelope;
        },
        route: (path) => (mode === 'unversioned-only' ? unversioned(path) : path),
      },
    });
    writeFileSync(file('public.pem'), embedded.service.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
    writeFileSync(file('private.pem'), embedded.merchant.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }));
  });
  afterAll(() => embedded.close());

  // `verify service` of the embedded service (or of `url` before it), service/energy unless `suite` says otherwise.
  const service = (
    name: string,
    extra: string[] = [],
    url = embedded.service.baseUrl,
    suite: string | undefined = 'service/energy',
  ) => {
    const s = embedded.service;
    return runCliAsync([
      'verify',
      'service',
      '--base-url',
      url,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
      '--user-id',
      String(s.userId),
      ...(suite ? ['--suite', suite] : []),
      '--reports',
      file(name),
      ...extra,
    ]);
  };
  const merchant = (url: string, name: string, suite: string, extra: string[] = []) =>
    runCliAsync([
      'verify',
      'merchant',
      '--callback-url',
      url,
      '--api-key',
      embedded.merchant.apiKey,
      '--private-key',
      file('private.pem'),
      '--suite',
      suite,
      '--reports',
      file(name),
      ...extra,
    ]);

  for (const [fault, rule] of [
    ['not-encrypted', 'CRYPTO-SAME'],
    ['another-key', 'CRYPTO-SAME'],
    ['url-safe', 'CRYPTO-ENVELOPE'],
    ['line-breaks', 'CRYPTO-ENVELOPE'],
    ['wrong-block-type', 'CRYPTO-SAME'],
  ] as const) {
    it(`a service whose answer data is ${fault} is judged by the suites (exit 1 under ${rule}), not blamed on the configuration`, async () => {
      mode = fault;
      const run = await service(`s-${fault}`);
      mode = undefined;
      expect(run.stderr).toMatch(
        /^pre-flight: warning: the answer to a valid energy query does not open with --public-key under any padding/m,
      );
      expect(run.stderr).not.toMatch(/public key was given|set padding/);
      const r = report(`s-${fault}`);
      expect(r.preflight?.verdict).toBe('warning');
      expect(r.preflight?.steps.at(-1)?.conclusion).toContain(rule);
      expect(r.results.some((result) => result.status === 'failed' && result.rules.includes(rule))).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);
  }

  it('a service whose answer opens only with OAEP-SHA1 while --profile says pkcs1: exit 2 naming the padding and how it is known', async () => {
    mode = 'oaep-sha1';
    const run = await service('s-oaep');
    mode = undefined;
    expect(run.stderr.trim()).toMatch(
      /^wallet-conformance: pre-flight: the answer opens with OAEP-SHA1 \(oaep-sha1\), not pkcs1: set padding in --profile \(.*: the envelope data does not open under pkcs1; it opens into JSON under OAEP-SHA1 \(oaep-sha1\)\)$/,
    );
    expect(run.status).toBe(2);
  }, 60_000);

  it('a service refusing a valid query (a key pair it does not hold) is a warning, not proof: the suites run, exit 1', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    writeFileSync(file('other-public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    const s = embedded.service;
    const run = await runCliAsync([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('other-public.pem'),
      '--suite',
      'service/energy',
      '--reports',
      file('s-refused'),
    ]);
    expect(run.stderr).toMatch(
      /^pre-flight: warning: the service refused a valid energy query \(code \d+\); this is a finding for the suites, not proof of a wrong key/m,
    );
    expect(report('s-refused').preflight?.steps[0]).toMatchObject({
      level: 'warning',
      observed: expect.stringMatching(/^HTTP 200, code \d+/),
    });
    expect(run.status).toBe(1);
  }, 60_000);

  it('a 401 to a valid energy query is not proof of a wrong key: a warning saying what to check first, the suites judge (exit 1)', async () => {
    const s = embedded.service;
    const run = await runCliAsync([
      'verify',
      'service',
      '--base-url',
      s.baseUrl,
      '--api-key',
      'not-the-merchants-key',
      '--public-key',
      file('public.pem'),
      '--suite',
      'service/energy',
      '--reports',
      file('s-401'),
    ]);
    expect(run.stderr.split('\n')[0]).toMatch(
      /^pre-flight: warning: the service answered HTTP 401 to --api-key: check the key and its validity window; if they are right, the service's key check is at fault \(ERR-401\)/,
    );
    expect(report('s-401').preflight?.steps[0]).toMatchObject({
      level: 'warning',
      observed: expect.stringMatching(/^HTTP 401 /),
    });
    expect(report('s-401').results.some((result) => result.status === 'failed')).toBe(true);
    expect(run.status).toBe(1);
  }, 60_000);

  it('a 404 on the documented path is blamed on --base-url only because an unknown path answers 404 too', async () => {
    const s = embedded.service;
    const run = await runCliAsync([
      'verify',
      'service',
      '--base-url',
      `${s.baseUrl}/wrong-prefix`,
      '--api-key',
      s.apiKey,
      '--public-key',
      file('public.pem'),
      '--suite',
      'service/energy',
      '--reports',
      file('s-404'),
    ]);
    expect(run.stderr.trim()).toMatch(
      /^wallet-conformance: pre-flight: --base-url looks wrong: the documented energy path answers 404 just as a path that exists nowhere does .*POST .*\/wc-preflight-no-such-endpoint-\w+ \(a path no service has\) answered HTTP 404/,
    );
    expect(run.status).toBe(2);
  }, 60_000);

  it('a 404 on the documented path while the same query answers without the version is a finding (VERSION-V1), not a wrong --base-url: the suites run, exit 1', async () => {
    mode = 'unversioned-only';
    const run = await service('s-unversioned');
    mode = undefined;
    expect(run.stderr).toMatch(
      /^pre-flight: warning: the documented energy path answered 404 but the same query answers at \/api\/api\/order\/getEnergyMaxCount: .*\(VERSION-V1, ENERGY-PATH\)/m,
    );
    expect(run.stderr).not.toMatch(/looks wrong/);
    const r = report('s-unversioned');
    expect(r.preflight?.steps[0]).toMatchObject({
      level: 'warning',
      observed: expect.stringMatching(
        /getEnergyMaxCount answered 404; POST .*\/api\/api\/order\/getEnergyMaxCount answered HTTP 200/,
      ),
    });
    expect(r.results.find((result) => result.id === 'service/energy/success/status')).toMatchObject({
      status: 'failed',
      rules: expect.arrayContaining(['ENERGY-PATH', 'VERSION-V1']),
    });
    expect(run.status).toBe(1);
  }, 60_000);

  // A TCP hop before the embedded service that falls as a crashing process would (the connection
  // in flight dropped, the port closed) when `dies` says so of the bytes the client sent so far;
  // `resets`: only the first that many connections `dies` names are dropped, the hop lives on (resets, not a crash).
  const fallingHop = async (dies: (sent: string, chunk: string) => boolean, resets = 0): Promise<string> => {
    let dropped = 0;
    const sockets = new Set<net.Socket>();
    const hop = net.createServer((client) => {
      const upstream = net.connect(Number(new URL(embedded.service.baseUrl).port), '127.0.0.1');
      sockets.add(client).add(upstream);
      let sent = '';
      client.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        sent += text;
        const falls = dies(sent, text);
        if (resets > 0 && dropped < resets && falls) {
          dropped++;
          client.destroy();
          upstream.destroy();
        } else if (resets === 0 && falls) {
          hop.close();
          for (const socket of sockets) socket.destroy();
        } else upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    // Off the ephemeral range: once it falls, no other test's listen(0) is given its port.
    const port = await freePort();
    await new Promise<void>((done) => hop.listen(port, '127.0.0.1', done));
    return `http://127.0.0.1:${port}`;
  };

  it('a service that stops answering mid-run has failed under the MUST rules of the case it stopped on; the cases left are not run; exit 1', async () => {
    // The service sits behind a TCP hop that falls as a crashing process would when the fourth POST
    // arrives (the pre-flight's query is the first): that request gets no answer, later ones are refused.
    let posts = 0;
    const url = await fallingHop((_sent, chunk) => (posts += chunk.split('POST /').length - 1) >= 4);
    const run = await service('s-dies', [], url);
    expect(run.stderr).toMatch(
      /wallet-conformance: the target stopped answering during the run \(.*ECONNREFUSED.*\): reported as a failure; the cases left were not run\n$/,
    );
    const r = report('s-dies');
    const stopped = r.results.find((result) => result.id.endsWith('/target-stopped'));
    expect(stopped?.status).toBe('failed');
    expect(stopped?.rules.length).toBeGreaterThan(0);
    expect(stopped?.rules).not.toContain('CB-AVAILABLE');
    expect(stopped?.message).toMatch(
      /^the service stopped answering after case service\/energy\/[\w-]+ .*the last input it received: POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/.* \(no answer: /,
    );
    expect(
      r.results.filter(
        (result) =>
          result.status === 'skipped' &&
          result.message.startsWith('not run: the target stopped answering after case service/energy/'),
      ).length,
    ).toBeGreaterThan(0);
    expect(run.status).toBe(1);
  }, 60_000);

  it("a service that stops answering on the control API probe's input has failed (exit 1), naming that input; it is not blamed on the configuration", async () => {
    // Dies on the probe's body that is not JSON, sent to a control API write route.
    const url = await fallingHop((sent) => sent.includes('{not json'));
    const run = await service('s-dies-probe', ['--control-token', embedded.service.controlToken!], url, undefined);
    expect(run.stderr).not.toMatch(/pre-flight: --base-url|did not answer a valid/);
    expect(run.stderr).toMatch(
      /wallet-conformance: the target stopped answering during the run \(.*\): reported as a failure; the cases left were not run\n$/,
    );
    const r = report('s-dies-probe');
    const failed = r.results.filter((result) => result.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.id).toMatch(/\/target-stopped$/);
    expect(failed[0]!.rules.length).toBeGreaterThan(0);
    expect(failed[0]!.message).toMatch(
      /^the service stopped answering before the first case, during the run's set-up \(the control API probe and pre-flight\)/,
    );
    expect(failed[0]!.message).toMatch(
      /the last requests the run sent it: .*\/__control\/merchants\/\d+\/[\w-]+ with body "\{not json"/,
    );
    expect(
      r.results
        .filter((result) => result.status === 'skipped')
        .every((result) => result.message.startsWith('not run: the target stopped answering during the set-up')),
    ).toBe(true);
    expect(r.preflight?.steps.at(-1)).toMatchObject({
      level: 'warning',
      conclusion: expect.stringMatching(
        /^the target stopped answering during pre-flight: nothing is concluded of the configuration/,
      ),
    });
    expect(run.status).toBe(1);
  }, 60_000);

  it("a service that stops answering on pre-flight's energy query has failed (exit 1); --base-url is not called wrong", async () => {
    // The first POST is pre-flight's valid energy query (no control token: no probe before it).
    const url = await fallingHop((sent) => sent.includes('POST /'));
    const run = await service('s-dies-preflight', [], url);
    expect(run.stderr).not.toMatch(/pre-flight: --base-url|did not answer a valid/);
    const r = report('s-dies-preflight');
    const stopped = r.results.find((result) => result.id.endsWith('/target-stopped'));
    expect(stopped).toMatchObject({
      status: 'failed',
      case: expect.stringMatching(/^[\w-]+$/),
      suite: 'service/energy',
    });
    expect(stopped?.message).toMatch(
      /the last requests the run sent it: .*POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/\S+ with body "/,
    );
    expect(r.summary).toMatchObject({ passed: 0, failed: 1 });
    expect(run.status).toBe(1);
  }, 60_000);

  it("a service that resets pre-flight's energy query but answers on is a warning, not a wrong --base-url: the suites judge", async () => {
    // The query and the transport's one retry on a fresh connection are both reset; later ones pass.
    const url = await fallingHop((sent) => sent.includes('POST /'), 2);
    const run = await service('s-resets-once', [], url);
    expect(run.stderr).toMatch(
      /pre-flight: warning: the service answers a plain GET of --base-url but gave no answer to a valid energy query: the suites judge it/,
    );
    const r = report('s-resets-once');
    expect(r.results.some((result) => result.id.endsWith('/target-stopped'))).toBe(false);
    expect(r.summary.passed).toBeGreaterThan(0);
    expect(run.status).toBe(0);
  }, 60_000);

  describe('merchants', () => {
    const started: Array<{ close(): Promise<void> }> = [];
    afterAll(async () => {
      for (const server of started) await server.close();
    });
    const faulty = async (
      fault: Parameters<typeof startFaultyMerchant>[0],
      publicKey: RsaPublicKey = embedded.service.publicKey,
      profile = embedded.merchant.profile,
    ): Promise<FaultyMerchant> => {
      const m = await startFaultyMerchant(fault, { apiKey: embedded.merchant.apiKey, publicKey, profile });
      started.push(m);
      return m;
    };

    it("a form-field reader: pre-flight proves the key right (a callback without '+' is acknowledged) and names CB-RAW-BODY; exit 1", async () => {
      const m = await faulty('form-field-reader');
      const run = await merchant(m.callbackUrl, 'm-form', 'merchant/raw-body');
      expect(run.stderr).not.toMatch(/--private-key \(|check --private-key/);
      const r = report('m-form');
      expect(r.preflight?.verdict).toBe('warning');
      expect(r.preflight?.steps.at(-1)).toMatchObject({
        level: 'warning',
        conclusion: expect.stringMatching(
          /the key and the profile are right.*reads the body as a form \(CB-RAW-BODY\)/,
        ),
      });
      expect(
        r.results.some(
          (result) =>
            result.status === 'failed' && (result.rules.includes('CB-RAW-BODY') || result.rules.includes('CB-DECRYPT')),
        ),
      ).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);

    it('a merchant that decrypts only the first block: unproven, so a warning; the suites fail it; exit 1', async () => {
      const publicKey = embedded.service.publicKey;
      const k = publicKey.modulusBytes;
      const server = receiverServer(embedded.merchant.apiKey, [], (body) => {
        const first = decodeBase64Strict(body).subarray(0, k);
        const opened = nativeEngine.decryptBlock(first, publicKey, 'pkcs1');
        if (!opened.ok) throw new Error('cannot decrypt');
        JSON.parse(opened.message.toString('utf8'));
      });
      const port = await listenOn(server);
      started.push({ close: () => stopServer(server) });
      const run = await merchant(`http://127.0.0.1:${port}/callback`, 'm-first-block', 'merchant/raw-body');
      expect(run.stderr).toMatch(
        /pre-flight: warning: the merchant treats a valid callback like one it cannot open: .*pre-flight cannot prove which, so the suites run and judge/,
      );
      const r = report('m-first-block');
      expect(r.preflight?.verdict).toBe('warning');
      expect(
        r.results.some(
          (result) =>
            result.status === 'failed' && (result.rules.includes('CB-RAW-BODY') || result.rules.includes('CB-DECRYPT')),
        ),
      ).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);

    it('a 401 to a valid callback is not proof of a wrong key: a warning saying what to check, the suites judge (exit 1); the key header goes out spelled X-API-KEY', async () => {
      const names: string[] = [];
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          for (let i = 0; i < req.rawHeaders.length; i += 2)
            if (req.rawHeaders[i]!.toLowerCase() === 'x-api-key') names.push(req.rawHeaders[i]!);
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"errCode":401}');
        });
      });
      const port = await listenOn(server);
      started.push({ close: () => stopServer(server) });
      const run = await merchant(`http://127.0.0.1:${port}/callback`, 'm-401', 'merchant/raw-body');
      expect(run.stderr.split('\n')[0]).toMatch(
        /^pre-flight: warning: the merchant answered HTTP 401 to --api-key: check the key and its validity window; if they are right, the receiver's key check is at fault \(CB-KEY-401\)/,
      );
      expect(run.stderr).not.toContain(embedded.merchant.apiKey);
      const r = report('m-401');
      expect(r.preflight?.steps.at(-1)).toMatchObject({
        level: 'warning',
        observed: expect.stringMatching(/^HTTP 401 .*header X-API-KEY: HTTP 401 .*header x-api-key: HTTP 401/),
      });
      expect(r.results.some((result) => result.status === 'failed')).toBe(true);
      expect(run.status).toBe(1);
      // The experiment sent x-api-key once; every other delivery names the header as the interface does.
      expect(names.filter((name) => name === 'x-api-key')).toHaveLength(1);
      expect(names.filter((name) => name !== 'X-API-KEY' && name !== 'x-api-key')).toEqual([]);
    }, 60_000);

    it('a receiver that finds the key only under one spelling of the header name: proven by the experiment (RFC 9110), a warning naming it; exit 1', async () => {
      const apiKey = embedded.merchant.apiKey;
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          // Looks the key up by the exact name x-api-key in the raw headers, as a case-sensitive map would.
          const at = req.rawHeaders.findIndex((name, i) => i % 2 === 0 && name === 'x-api-key');
          const ok = at >= 0 && req.rawHeaders[at + 1] === apiKey;
          res
            .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
            .end(ok ? '{"errCode":0}' : '{"errCode":401}');
        });
      });
      const port = await listenOn(server);
      started.push({ close: () => stopServer(server) });
      const run = await merchant(`http://127.0.0.1:${port}/callback`, 'm-header-case', 'merchant/raw-body');
      expect(run.stderr).toMatch(
        /^pre-flight: warning: the merchant accepts --api-key only under the header name x-api-key: the key is right, and the receiver reads header names by their case/m,
      );
      expect(run.stderr).not.toMatch(/check the key/);
      expect(report('m-header-case').results.some((result) => result.status === 'failed')).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);

    it('a merchant configured with another key pair: pre-flight cannot prove it (a warning naming the suspicion), the suites fail it; exit 1', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const other = parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      if (other.half !== 'private') throw new Error('expected a private key');
      const m = await faulty('none', other.publicKey);
      const run = await merchant(m.callbackUrl, 'm-other-key', 'merchant/raw-body');
      expect(run.stderr).toMatch(
        /pre-flight: warning: the merchant treats a valid callback like one it cannot open: its key may not be the pair of --private-key/,
      );
      expect(
        report('m-other-key').results.some(
          (result) => result.status === 'failed' && result.rules.includes('CB-DECRYPT'),
        ),
      ).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);

    it('a merchant that opens callbacks under OAEP-SHA1 while --profile says pkcs1: proven by the experiment, exit 2 naming the profile', async () => {
      const m = await faulty('none', embedded.service.publicKey, {
        ...embedded.merchant.profile,
        padding: 'oaep-sha1',
      });
      const run = await merchant(m.callbackUrl, 'm-oaep', 'merchant/raw-body');
      expect(run.stderr.trim()).toMatch(
        /^wallet-conformance: pre-flight: the merchant opens callbacks under padding oaep-sha1, callbacks encrypted with the private key, not under --profile's \(padding pkcs1, private key\): set padding in --profile \(.*while --profile's reading and a stranger's key are not acknowledged\)$/,
      );
      expect(run.status).toBe(2);
    }, 60_000);

    it('a merchant that exits on a malformed body has failed CB-AVAILABLE with the input as evidence; the cases left are not run; exit 1', async () => {
      const publicKey = embedded.service.publicKey;
      const server = http.createServer(async (req, res) => {
        const body = await readBody(req);
        if (req.headers['x-api-key'] !== embedded.merchant.apiKey)
          return res.writeHead(401, { 'content-type': 'application/json' }).end('{"errCode":401}');
        try {
          openJson(body.ok ? body.body.toString('latin1') : '', 'callback', publicKey, {
            profile: embedded.merchant.profile,
          });
        } catch {
          // As a process that dies on an exception would: the connection drops, the port closes.
          res.socket?.destroy();
          server.close();
          server.closeAllConnections();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0}');
      });
      const port = await listenOn(server, await freePort());
      started.push({ close: () => stopServer(server) });
      const run = await merchant(`http://127.0.0.1:${port}/callback`, 'm-dies', 'merchant/malformed');
      expect(run.stderr).toMatch(
        /wallet-conformance: the target stopped answering during the run \(.*ECONNREFUSED.*\): reported as a failure; the cases left were not run\n$/,
      );
      const r = report('m-dies');
      const stopped = r.results.find((result) => result.id.endsWith('/target-stopped'));
      // The malformed suite names no MUST (CB-NO-FALSE-ACK, CB-AVAILABLE are SHOULDs): the crash fails all the same.
      expect(stopped).toMatchObject({ status: 'failed', rules: ['CB-AVAILABLE'] });
      expect(stopped?.message).toMatch(
        /^the merchant stopped answering after case merchant\/malformed\/[\w-]+ .*the last input it received: POST .* \(no answer: .*\)/,
      );
      const evidence = (stopped?.evidence as { exchanges: Array<{ request: { body: string }; error?: string }> })
        .exchanges;
      expect(evidence.some((exchange) => exchange.error && !/stopped answering/.test(exchange.error))).toBe(true);
      const left = r.results.filter(
        (result) =>
          result.message === `not run: the target stopped answering after case ${stopped!.suite}/${stopped!.case}`,
      );
      expect(left.length).toBeGreaterThan(0);
      expect(left.every((result) => result.status === 'skipped')).toBe(true);
      expect(run.status).toBe(1);
    }, 60_000);

    it("a merchant that dies on pre-flight's valid callback has failed CB-AVAILABLE (exit 1); --callback-url is not called wrong", async () => {
      // It answers a plain GET (so it answered in the run), then dies on the first callback.
      const server = http.createServer((req, res) => {
        if (req.method !== 'POST') return res.writeHead(405).end();
        res.socket?.destroy();
        server.close();
        server.closeAllConnections();
      });
      const port = await listenOn(server, await freePort());
      started.push({ close: () => stopServer(server).catch(() => undefined) });
      const run = await merchant(`http://127.0.0.1:${port}/callback`, 'm-dies-preflight', 'merchant/raw-body');
      expect(run.stderr).not.toMatch(/pre-flight: --callback-url|did not answer a valid callback/);
      const r = report('m-dies-preflight');
      const stopped = r.results.find((result) => result.id.endsWith('/target-stopped'));
      expect(stopped).toMatchObject({ status: 'failed', rules: expect.arrayContaining(['CB-AVAILABLE']) });
      expect(stopped?.message).toMatch(
        /^the merchant stopped answering before the first case, during the run's set-up .*the last requests the run sent it: .*POST http:\/\/127\.0\.0\.1:\d+\/callback with body "/,
      );
      expect(run.status).toBe(1);
    }, 60_000);
  });
});
