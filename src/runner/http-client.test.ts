import http from 'node:http';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeThrowawayCa, type ThrowawayCa } from '../crypto/throwaway-certificates.js';
import { defaultNetwork, type NetworkConfig } from '../net/network-config.js';
import { proxyFromEnv } from '../net/proxy.js';
import { RunCutError } from '../net/run-session.js';
import { startTestProxy, type TestProxy } from '../../test/support/network.js';
import { freePort } from '../../test/support/ports.js';
import { send } from './http-client.js';

/** A TLS server that records the raw request head and answers 200 with an empty body. */
async function recordingTlsServer(ca: ThrowawayCa): Promise<{ port: number; heads: string[]; close(): void }> {
  const heads: string[] = [];
  const server = tls.createServer(ca.issue({ names: ['localhost', '127.0.0.1'] }), (socket) => {
    let raw = '';
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      heads.push(raw.slice(0, end));
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { port: (server.address() as AddressInfo).port, heads, close: () => server.close() };
}

/** A plain HTTP server whose answer is given by `answer`. */
async function httpServer(answer: http.RequestListener, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(answer);
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe('send: the wire stays byte-exact over TLS, answers are capped, requests have deadlines', () => {
  let ca: ThrowawayCa;
  let proxy: TestProxy;
  beforeAll(async () => {
    ca = makeThrowawayCa('http-client test CA');
    proxy = await startTestProxy();
  });
  afterAll(() => proxy.close());

  const trusting = (overrides: Partial<Omit<NetworkConfig, 'session'>> = {}) =>
    defaultNetwork({ tls: { extraCa: [ca.cert], insecure: false }, ...overrides });
  const headerNames = (head: string) =>
    head
      .split('\r\n')
      .slice(1)
      .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());

  it('adds only Host and Connection to the headers a case gave, directly and through a CONNECT tunnel', async () => {
    const server = await recordingTlsServer(ca);
    try {
      const request = {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-API-KEY': 'k' },
        body: 'data=a+b',
      };
      await send({ ...request, url: `https://localhost:${server.port}/callback`, network: trusting() });
      await send({
        ...request,
        url: `https://localhost:${server.port}/callback`,
        network: trusting({ proxy: proxyFromEnv({ HTTPS_PROXY: proxy.url }) }),
      });
      expect(proxy.connects).toEqual([`localhost:${server.port}`]);
      expect(server.heads).toHaveLength(2);
      for (const head of server.heads) {
        expect(head.split('\r\n')[0]).toBe('POST /callback HTTP/1.1');
        expect(headerNames(head).sort()).toEqual(['connection', 'content-length', 'content-type', 'host', 'x-api-key']);
        expect(head).toContain('Content-Type: application/x-www-form-urlencoded');
        expect(head).toContain(`Host: localhost:${server.port}`);
      }
    } finally {
      server.close();
    }
  });

  it('sends once more on a new connection when a kept-alive socket is reset before any answer, never when a fresh one is', async () => {
    const seen = new Set<unknown>();
    let posts = 0;
    // A server that drops a connection it kept alive when it is used again (as one closing idle
    // sockets does, in the race), and answers on new ones; /always resets every request.
    const server = await httpServer((req, res) => {
      posts++;
      if (req.url === '/always' || seen.has(req.socket)) return req.socket.destroy();
      seen.add(req.socket);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    try {
      const network = defaultNetwork();
      expect((await send({ method: 'POST', url: `${server.url}/once`, headers: {}, body: 'a', network })).status).toBe(
        200,
      );
      posts = 0;
      const again = await send({ method: 'POST', url: `${server.url}/once`, headers: {}, body: 'b', network });
      expect(again.status).toBe(200);
      expect(posts).toBe(2); // the reset one and the one sent again
      posts = 0;
      await expect(
        send({ method: 'POST', url: `${server.url}/always`, headers: {}, body: 'c', network: defaultNetwork() }),
      ).rejects.toThrow(/ECONNRESET|socket hang up/);
      expect(posts).toBe(1); // a fresh connection reset is the target's doing: not sent again
    } finally {
      server.close();
    }
  });

  it.each([407, 502])(
    "a proxy refusing CONNECT with %i is a transport error naming the proxy, never the target's answer",
    async (status) => {
      // A proxy agent that replays the proxy's answer as the target's would make a service "answer"
      // 502 here (docs/decisions/0077-proxies-our-own-connect-tunnel.md): the verdict must name the proxy.
      const refusing = http.createServer();
      refusing.on('connect', (_req, socket) => socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Length: 0\r\n\r\n`));
      await new Promise<void>((listening) => refusing.listen(0, '127.0.0.1', listening));
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      try {
        const answer = send({
          method: 'GET',
          url: 'https://service.invalid/api',
          headers: {},
          network: defaultNetwork({ proxy: proxyFromEnv({ HTTPS_PROXY: url }) }),
        });
        await expect(answer).rejects.toThrow(`the proxy ${url} answered ${status} to CONNECT service.invalid:443`);
      } finally {
        refusing.close();
      }
    },
  );

  it('refuses an answer bigger than the cap, declared or chunked, naming the cap', async () => {
    const big = Buffer.alloc(4096, 'a');
    const server = await httpServer((req, res) => {
      if (req.url === '/declared') res.writeHead(200, { 'content-length': big.length }).end(big);
      else {
        res.writeHead(200);
        res.write(big);
        res.end(big);
      }
    });
    try {
      const network = defaultNetwork({ maxBodyBytes: 5000 });
      await expect(send({ method: 'GET', url: `${server.url}/declared`, headers: {}, network })).resolves.toMatchObject(
        { status: 200 },
      );
      await expect(send({ method: 'GET', url: `${server.url}/chunked`, headers: {}, network })).rejects.toThrow(
        /larger than the cap of 5000 bytes \(--max-body\)/,
      );
      await expect(
        send({
          method: 'GET',
          url: `${server.url}/declared`,
          headers: {},
          network: defaultNetwork({ maxBodyBytes: 100 }),
        }),
      ).rejects.toMatchObject({
        reason: 'too-large',
      });
    } finally {
      await server.close();
    }
  });

  it('does not hold a HEAD answer to the cap: it declares a length it does not carry', async () => {
    const server = await httpServer((_req, res) => res.writeHead(200, { 'content-length': 10_000 }).end());
    try {
      await expect(
        send({ method: 'HEAD', url: server.url, headers: {}, network: defaultNetwork({ maxBodyBytes: 100 }) }),
      ).resolves.toMatchObject({
        status: 200,
      });
    } finally {
      await server.close();
    }
  });

  it('ends a request that trickles bytes past its overall deadline, though it is never idle', async () => {
    const server = await httpServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const network = defaultNetwork({ requestDeadlineMs: 300, idleTimeoutMs: 10_000 });
      await expect(send({ method: 'GET', url: server.url, headers: {}, network })).rejects.toMatchObject({
        reason: 'deadline',
      });
    } finally {
      await server.close();
    }
  });

  it('cuts the run when a target that answered refuses connections, and fails every later request at once', async () => {
    // Off the ephemeral range: once closed, no other test's listen(0) is given its port.
    const server = await httpServer(
      (_req, res) => res.writeHead(200, { connection: 'close' }).end('{}'),
      await freePort(),
    );
    const network = defaultNetwork();
    await send({ method: 'GET', url: server.url, headers: {}, network });
    await server.close();
    const gone = await send({ method: 'GET', url: server.url, headers: {}, network }).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(RunCutError);
    expect(gone).toMatchObject({
      reason: 'target-gone',
      message: expect.stringMatching(/stopped answering: ECONNREFUSED \(it answered earlier in the run\)/),
    });
    expect(network.session.stopped).toBe(gone);
    await expect(send({ method: 'GET', url: 'http://127.0.0.1:9/', headers: {}, network })).rejects.toBe(gone);
  });

  it('a target that never answered is unreachable, not gone', async () => {
    const network = defaultNetwork();
    await expect(send({ method: 'GET', url: 'http://127.0.0.1:9/', headers: {}, network })).rejects.toMatchObject({
      reason: 'unreachable',
    });
    expect(network.session.stopped).toBeUndefined();
  });

  it('--timeout aborts the requests in flight and stops the run', async () => {
    const server = await httpServer(() => undefined);
    try {
      const network = defaultNetwork();
      network.session.setDeadline(200);
      const error = await send({ method: 'GET', url: server.url, headers: {}, network }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ reason: 'run-timeout', message: 'the run was cut after --timeout 0.2 s' });
    } finally {
      await server.close();
    }
  });
});
