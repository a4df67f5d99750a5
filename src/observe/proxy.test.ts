import http from 'node:http';
import https from 'node:https';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultNetwork } from '../net/network-config.js';
import { makeThrowawayCa } from '../crypto/throwaway-certificates.js';
import type { ObservedExchange, Judge } from './exchange.js';
import {
  endToEndHeaders,
  OBSERVE_HEADER,
  startObserveProxy,
  upstreamPath,
  type ObserveProxy,
  type ProxyListener,
} from './proxy.js';

/** What an upstream saw of one request. */
interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

/** A loopback upstream that records every request and answers with `answer`. */
async function upstream(
  answer: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
  tls?: { cert: string; key: string },
) {
  const seen: Seen[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body });
      answer(req, res, body);
    });
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url, seen };
}

/** The recording judge of these tests: keeps every exchange it is given, judges nothing. */
function recordingJudge(): Judge & { seen: ObservedExchange[] } {
  const seen: ObservedExchange[] = [];
  return {
    seen,
    accept: (exchange) => (seen.push(exchange), []),
    finish: () => ({
      exchanges: seen.length,
      forgottenEvents: 0,
      notJudged: 0,
      report: { target: {}, summary: { passed: 0, failed: 0, warnings: 0, skipped: 0, durationMs: 0 }, results: [] },
    }),
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function proxy(
  listeners: Array<Partial<ProxyListener> & Pick<ProxyListener, 'upstream'>>,
  judge: Judge,
  extra: {
    upstreamTimeoutMs?: number;
    maxRecordedBodyBytes?: number;
    onError?: (error: unknown) => void;
    network?: ReturnType<typeof defaultNetwork>;
  } = {},
): Promise<ObserveProxy> {
  const started = await startObserveProxy({
    listeners: listeners.map((listener) => ({
      direction: 'merchant→service',
      host: '127.0.0.1',
      port: 0,
      ...listener,
    })),
    onExchange: (exchange) => void judge.accept(exchange),
    ...extra,
  });
  cleanups.push(async () => void (await started.close()));
  return started;
}

/** Sends exactly these raw headers and body; resolves with what came back. */
function request(
  url: string,
  options: { method?: string; headers?: string[]; body?: Buffer; ca?: string } = {},
): Promise<{ status: number; statusMessage: string; rawHeaders: string[]; body: Buffer }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'POST',
        headers: ['Host', target.host, ...(options.headers ?? [])],
        agent: false,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            statusMessage: res.statusMessage!,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Resolves once the judge holds `count` exchanges (the proxy hands one over after its answer left). */
async function judged(judge: { seen: ObservedExchange[] }, count: number): Promise<ObservedExchange[]> {
  for (let i = 0; i < 200 && judge.seen.length < count; i++) await new Promise((resolve) => setImmediate(resolve));
  return judge.seen;
}

const FORM = Buffer.from('data=Ab+/cD%2B==&x=1');

describe('the observe proxy', () => {
  it('forwards request and answer unchanged (headers in order, repeats, body bytes) and records both', async () => {
    const service = await upstream((_req, res) => {
      res.sendDate = false;
      res.writeHead(201, 'Made It', [
        'Content-Type',
        'application/json; charset=utf-8',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'X-Odd-Case',
        'v',
      ]);
      res.end('{"code":0,"data":"x+y/="}');
    });
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: `${service.url}/gw` }], judge);
    const answer = await request(`${observe.addresses[0]!.url}/api/v1/api/order/getEnergyMaxCount?trace=a%2Bb`, {
      headers: [
        'Content-Type',
        'application/x-www-form-urlencoded',
        'X-API-KEY',
        'key-1',
        'X-Repeat',
        'one',
        'X-Repeat',
        'two',
        'Content-Length',
        String(FORM.length),
      ],
      body: FORM,
    });

    const [seen] = service.seen;
    expect(seen!.method).toBe('POST');
    expect(seen!.url).toBe('/gw/api/v1/api/order/getEnergyMaxCount?trace=a%2Bb');
    expect(seen!.body.equals(FORM)).toBe(true);
    // Host names the upstream; everything else as sent, in order; the client's keep-alive Connection
    // is not passed on, and the upstream connection's own is undici's, as are the framing headers'
    // lower-case names (decision 0122); nothing is added.
    const { port } = new URL(service.url);
    expect(seen!.rawHeaders).toEqual([
      'host',
      `127.0.0.1:${port}`,
      'connection',
      'keep-alive',
      'Content-Type',
      'application/x-www-form-urlencoded',
      'X-API-KEY',
      'key-1',
      'X-Repeat',
      'one',
      'X-Repeat',
      'two',
      'content-length',
      String(FORM.length),
    ]);

    expect(answer.status).toBe(201);
    expect(answer.statusMessage).toBe('Made It');
    expect(answer.body.toString()).toBe('{"code":0,"data":"x+y/="}');
    expect(endToEndHeaders(answer.rawHeaders)).toEqual([
      'Content-Type',
      'application/json; charset=utf-8',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
      'X-Odd-Case',
      'v',
    ]);

    const [exchange] = await judged(judge, 1);
    expect(exchange).toMatchObject({
      v: 1,
      seq: 1,
      kind: 'energy',
      direction: 'merchant→service',
      request: {
        method: 'POST',
        path: '/api/v1/api/order/getEnergyMaxCount?trace=a%2Bb',
        bodyBase64: FORM.toString('base64'),
      },
      response: { status: 201, bodyBase64: Buffer.from('{"code":0,"data":"x+y/="}').toString('base64') },
    });
    expect(exchange!.request.headers).toMatchObject({
      'x-api-key': 'key-1',
      'x-repeat': 'one, two',
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(exchange!.response!.headers['set-cookie']).toBe('a=1, b=2');
    expect(exchange!.endedAt).toBeGreaterThanOrEqual(exchange!.startedAt);
    expect(exchange!.upstreamError).toBeUndefined();
  });

  it("carries a chunked body in either direction to the same bytes (framing is the connection's, the bytes are the message's)", async () => {
    const service = await upstream((_req, res, body) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(body.subarray(0, 3));
      res.end(body.subarray(3));
    });
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: service.url }], judge);
    const target = new URL(`${observe.addresses[0]!.url}/callback`);
    const answer = await new Promise<{ body: string; chunked: string | undefined }>((resolve, reject) => {
      const req = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent: false },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ body, chunked: res.headers['transfer-encoding'] }));
        },
      );
      req.on('error', reject);
      req.write('data=a+b');
      req.end('/c==');
    });
    expect(service.seen[0]!.body.toString()).toBe('data=a+b/c==');
    expect(answer).toEqual({ body: 'data=a+b/c==', chunked: 'chunked' });
    const [exchange] = await judged(judge, 1);
    expect(Buffer.from(exchange!.request.bodyBase64, 'base64').toString()).toBe('data=a+b/c==');
    expect(exchange!.request.headers['transfer-encoding']).toBe('chunked');
  });

  it('drops hop-by-hop headers and those Connection names, both ways', () => {
    expect(
      endToEndHeaders([
        'Connection',
        'close, X-Hop',
        'X-Hop',
        '1',
        'Keep-Alive',
        'timeout=5',
        'Transfer-Encoding',
        'chunked',
        'TE',
        'trailers',
        'Upgrade',
        'h2c',
        'Proxy-Authorization',
        'Basic x',
        'X-Keep',
        '2',
      ]),
    ).toEqual(['X-Keep', '2']);
    expect(upstreamPath(new URL('http://svc:1/base/'), '/card/close?a=1')).toBe('/base/card/close?a=1');
    expect(upstreamPath(new URL('http://svc:1'), 'http://elsewhere/card/close')).toBe('/card/close');
    // The target as received: no dot segments resolved, no decoding, no re-encoding.
    expect(upstreamPath(new URL('http://svc:1/gw'), '/a/../x/%2e%2e/y\\z?q="1"#f')).toBe(
      '/gw/a/../x/%2e%2e/y\\z?q="1"#f',
    );
  });

  it('numbers exchanges in the order they end, tells callbacks from orders, and routes card close to its own upstream', async () => {
    const service = await upstream((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0}'),
    );
    const card = await upstream((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"card":true}'),
    );
    const merchant = await upstream((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"errCode":0}'),
    );
    const judge = recordingJudge();
    const observe = await proxy(
      [
        { upstream: service.url, cardUpstream: `${card.url}/cards` },
        { direction: 'service→merchant', upstream: merchant.url },
      ],
      judge,
    );
    const [orders, callbacks] = observe.addresses;
    expect((await request(`${orders!.url}/card/close`, { body: FORM })).body.toString()).toBe('{"card":true}');
    expect(
      (await request(`${orders!.url}/api/v1/api/order/withdrawWithoutVerify`, { body: FORM })).body.toString(),
    ).toBe('{"code":0}');
    expect(
      (
        await request(`${callbacks!.url}/callback`, {
          body: Buffer.from('c2VhbGVk'),
          headers: ['Content-Type', 'text/plain'],
        })
      ).body.toString(),
    ).toBe('{"errCode":0}');
    expect(card.seen.map((seen) => seen.url)).toEqual(['/cards/card/close']);
    expect(merchant.seen.map((seen) => seen.body.toString())).toEqual(['c2VhbGVk']);
    const seen = await judged(judge, 3);
    expect(seen.map((exchange) => [exchange.seq, exchange.kind, exchange.direction])).toEqual([
      [1, 'card-close', 'merchant→service'],
      [2, 'withdraw', 'merchant→service'],
      [3, 'callback', 'service→merchant'],
    ]);
    expect(observe.exchanges).toBe(3);
  });

  it('answers 502 as a gateway when the upstream refuses, and records the failure without a response', async () => {
    const gone = await upstream(() => undefined);
    await cleanups.pop()!();
    const judge = recordingJudge();
    const observe = await proxy([{ direction: 'service→merchant', upstream: gone.url }], judge);
    const answer = await request(`${observe.addresses[0]!.url}/callback`, { body: Buffer.from('abc') });
    expect(answer.status).toBe(502);
    expect(answer.rawHeaders).toContain(OBSERVE_HEADER);
    // The body names no upstream (an internal address); the record does.
    expect(answer.body.toString()).toBe('observe: the upstream failed\n');
    const [exchange] = await judged(judge, 1);
    expect(exchange!.upstreamError!.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+ failed: ECONNREFUSED/);
    expect(exchange!.response).toBeUndefined();
    expect(exchange!.upstreamError).toMatchObject({
      gatewayStatus: 502,
      message: expect.stringMatching(/ECONNREFUSED/) as string,
    });
    expect(exchange!.request.bodyBase64).toBe(Buffer.from('abc').toString('base64'));
  });

  it('passes over an interim 1xx answer and relays the final one', async () => {
    const service = await upstream((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0}');
    });
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: service.url }], judge);
    const answer = await request(`${observe.addresses[0]!.url}/api/v1/api/order/getEnergyMaxCount`, { body: FORM });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('{"code":0}');
    const [exchange] = await judged(judge, 1);
    expect(exchange!.response?.status).toBe(200);
    expect(Buffer.from(exchange!.response!.bodyBase64, 'base64').toString()).toBe('{"code":0}');
  });

  it('answers 504 when the upstream gives no answer within --upstream-timeout', async () => {
    const held: http.ServerResponse[] = [];
    const silent = await upstream((_req, res) => void held.push(res));
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: silent.url }], judge, { upstreamTimeoutMs: 150 });
    const answer = await request(`${observe.addresses[0]!.url}/api/v1/api/order/getEnergyMaxCount`, { body: FORM });
    expect(answer.status).toBe(504);
    expect(answer.body.toString()).toBe('observe: the upstream gave no complete answer in time\n');
    const [exchange] = await judged(judge, 1);
    expect(exchange!.upstreamError?.gatewayStatus).toBe(504);
    expect(exchange!.upstreamError?.message).toMatch(/gave no complete answer within 150 ms \(--upstream-timeout\)/);
  });

  it('cuts the client off when the upstream dies mid-answer (never half an answer as a whole one)', async () => {
    const dying = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"errCode":');
      setImmediate(() => res.destroy());
    });
    const judge = recordingJudge();
    const observe = await proxy([{ direction: 'service→merchant', upstream: dying.url }], judge);
    await expect(request(`${observe.addresses[0]!.url}/callback`, { body: Buffer.from('x') })).rejects.toThrow();
    const [exchange] = await judged(judge, 1);
    expect(exchange!.upstreamError).toMatchObject({
      gatewayStatus: 502,
      message: expect.stringMatching(/cut its answer off|failed during its answer/) as string,
    });
  });

  it('forwards a body past the recording cap whole and marks the record truncated', async () => {
    const echo = await upstream((_req, res, body) => res.writeHead(200).end(body));
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: echo.url }], judge, { maxRecordedBodyBytes: 1000 });
    const big = Buffer.alloc(5000, 'a');
    const answer = await request(`${observe.addresses[0]!.url}/x`, { body: big });
    expect(answer.body.equals(big)).toBe(true);
    expect(echo.seen[0]!.body.equals(big)).toBe(true);
    const [exchange] = await judged(judge, 1);
    expect(exchange!.request.truncated).toBe(true);
    expect(Buffer.from(exchange!.request.bodyBase64, 'base64').length).toBe(1000);
    expect(exchange!.response!.truncated).toBe(true);
  });

  it('goes on forwarding when the judge throws', async () => {
    const service = await upstream((_req, res) => res.writeHead(200).end('ok'));
    const errors: unknown[] = [];
    const throwing: Judge = {
      accept: () => {
        throw new Error('judge bug');
      },
      finish: () => recordingJudge().finish(),
    };
    const observe = await proxy([{ upstream: service.url }], throwing, { onError: (error) => errors.push(error) });
    expect((await request(`${observe.addresses[0]!.url}/a`)).body.toString()).toBe('ok');
    expect((await request(`${observe.addresses[0]!.url}/b`)).body.toString()).toBe('ok');
    expect(errors.map((error) => (error as Error).message)).toEqual(['judge bug', 'judge bug']);
  });

  it('listens with TLS and reaches a TLS upstream it trusts through the network settings', async () => {
    const ca = makeThrowawayCa();
    const pair = ca.issue({ names: ['127.0.0.1'] });
    const service = await upstream((_req, res) => res.writeHead(200).end('secure'), pair);
    const judge = recordingJudge();
    const network = defaultNetwork();
    network.tls.extraCa = [ca.cert];
    const observe = await proxy([{ upstream: service.url, tls: pair }], judge, { network });
    expect(observe.addresses[0]!.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await request(`${observe.addresses[0]!.url}/card/close`, { ca: ca.cert })).body.toString()).toBe('secure');
    // Without trusting the upstream's CA the proxy answers 502 and says why.
    const untrustingJudge = recordingJudge();
    const untrusting = await proxy([{ upstream: service.url }], untrustingJudge);
    const refused = await request(`${untrusting.addresses[0]!.url}/card/close`);
    expect(refused.status).toBe(502);
    const [failed] = await judged(untrustingJudge, 1);
    expect(failed!.upstreamError!.message).toMatch(
      /TLS: the certificate of 127\.0\.0\.1:\d+ is signed by an unknown CA/,
    );
  });

  it('never sends a request again: a reset on a reused upstream connection is a 502, recorded once', async () => {
    const served = new WeakSet<object>();
    let received = 0;
    const server = http.createServer((req, res) => {
      received++;
      // The second request on a kept-alive connection is read, then the connection reset: the
      // upstream may have acted on it, so observe must not send it again.
      if (served.has(req.socket)) {
        req.socket.destroy();
        return;
      }
      served.add(req.socket);
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }], judge);
    expect(
      (
        await request(`${observe.addresses[0]!.url}/api/v1/api/order/withdrawWithoutVerify`, { body: FORM })
      ).body.toString(),
    ).toBe('ok');
    const second = await request(`${observe.addresses[0]!.url}/api/v1/api/order/withdrawWithoutVerify`, { body: FORM });
    expect(second.status).toBe(502);
    const seen = await judged(judge, 2);
    expect(received).toBe(2);
    expect(seen.map((exchange) => exchange.response?.status ?? exchange.upstreamError?.gatewayStatus)).toEqual([
      200, 502,
    ]);
  });

  it('forwards the request target exactly as received (no dot segments resolved, nothing decoded or re-encoded)', async () => {
    const service = await upstream((_req, res) => res.writeHead(200).end('ok'));
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: `${service.url}/gw` }], judge);
    const target = '/a/../api/v1/api/order/%2e%2e/withdrawWithoutVerify\\x?q="1"&r=%41';
    const socket = net.connect(Number(new URL(observe.addresses[0]!.url).port), '127.0.0.1');
    socket.write(`POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`);
    const raw = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200/);
    expect(service.seen.map((seen) => seen.url)).toEqual([`/gw${target}`]);
    const [exchange] = await judged(judge, 1);
    expect(exchange!.request.path).toBe(target);
  });

  it("never passes on an upstream's copy of observe's own failure header", async () => {
    const forging = await upstream((_req, res) =>
      res.writeHead(502, [OBSERVE_HEADER, 'upstream-failed', 'X-Other', '1']).end('no'),
    );
    const observe = await proxy([{ upstream: forging.url }], recordingJudge());
    const answer = await request(`${observe.addresses[0]!.url}/card/close`, { body: FORM });
    expect(answer.status).toBe(502);
    expect(answer.rawHeaders.map((name) => name.toLowerCase())).not.toContain(OBSERVE_HEADER);
    expect(answer.rawHeaders).toContain('X-Other');
  });

  it('records an exchange whose client left after sending its whole request (the upstream had it)', async () => {
    let answerNow!: () => void;
    const held = new Promise<void>((resolve) => (answerNow = resolve));
    let reached!: () => void;
    const upstreamHasIt = new Promise<void>((resolve) => (reached = resolve));
    const service = await upstream((_req, res) => {
      reached();
      void held.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0}'));
    });
    const judge = recordingJudge();
    const observe = await proxy([{ upstream: service.url }], judge);
    const socket = net.connect(Number(new URL(observe.addresses[0]!.url).port), '127.0.0.1');
    socket.write(
      `POST /api/v1/api/order/withdrawWithoutVerify HTTP/1.1\r\nHost: x\r\nContent-Length: ${FORM.length}\r\n\r\n`,
    );
    socket.write(FORM);
    await upstreamHasIt;
    // The client leaves; its socket closes only once the proxy ended its side, which the proxy's
    // server does as it drops the client's exchange: the upstream answers after that.
    socket.end();
    await once(socket, 'close');
    answerNow();
    const [exchange] = await judged(judge, 1);
    expect(exchange).toMatchObject({
      clientGone: true,
      response: { status: 200, bodyBase64: Buffer.from('{"code":0}').toString('base64') },
    });
  });

  it('closes within its grace period, cutting exchanges still waiting for their upstream, and says how many', async () => {
    const silent = await upstream(() => undefined);
    const judge = recordingJudge();
    const observe = await startObserveProxy({
      listeners: [{ direction: 'merchant→service', host: '127.0.0.1', port: 0, upstream: silent.url }],
      onExchange: (exchange) => void judge.accept(exchange),
    });
    const pending = request(`${observe.addresses[0]!.url}/card/close`, { body: FORM });
    for (let i = 0; i < 200 && silent.seen.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(silent.seen).toHaveLength(1);
    // The client's request fails while the proxy closes: its rejection is awaited from before.
    const cutOff = expect(pending).rejects.toThrow();
    expect(await observe.close({ graceMs: 50 })).toEqual({ cut: 1 });
    await cutOff;
    expect(judge.seen).toEqual([]);
  });

  it('starts all listeners or none: a port in use rejects and frees the other one', async () => {
    const busy = await upstream(() => undefined);
    const port = Number(new URL(busy.url).port);
    await expect(
      startObserveProxy({
        listeners: [
          { direction: 'merchant→service', host: '127.0.0.1', port: 0, upstream: busy.url },
          { direction: 'service→merchant', host: '127.0.0.1', port, upstream: busy.url },
        ],
        onExchange: () => undefined,
      }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
