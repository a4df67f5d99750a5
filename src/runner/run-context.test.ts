// A run opens its network once and closes what it opened when it ends: its kept-alive connections
// and its CONNECT tunnels. Loopback servers count the connections they see open.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceTarget } from '../../test/support/check-context.js';
import { startTestProxy, type TestProxy } from '../../test/support/network.js';
import { makeThrowawayCa, type ThrowawayCa } from '../crypto/throwaway-certificates.js';
import { defaultNetwork } from '../net/network-config.js';
import { proxyFromEnv } from '../net/proxy.js';
import { runSuites } from './engine.js';
import { openConnections } from './http-client.js';
import { openRun } from './run-context.js';
import type { Transport } from './transport.js';

/** A server that counts the connections open on its side; `held` answers only when released. */
interface Counting {
  url: string;
  open: Set<Socket>;
  /** Connections accepted in all. */
  seen(): number;
  /** Resolves once no connection is open, or rejects after `ms`. */
  allClosed(ms?: number): Promise<void>;
  close(): Promise<void>;
}

async function counting(server: http.Server | https.Server, scheme: 'http' | 'https'): Promise<Counting> {
  const open = new Set<Socket>();
  let seen = 0;
  server.on(scheme === 'https' ? 'secureConnection' : 'connection', (socket: Socket) => {
    seen++;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `${scheme}://${scheme === 'https' ? 'localhost' : '127.0.0.1'}:${(server.address() as AddressInfo).port}`,
    open,
    seen: () => seen,
    allClosed: async (ms = 2000) => {
      const until = Date.now() + ms;
      while (open.size > 0) {
        if (Date.now() > until) throw new Error(`${open.size} connection(s) still open after ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const answer404: http.RequestListener = (_req, res) =>
  void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route"}');

describe('a run closes what it opened', () => {
  let ca: ThrowawayCa;
  let proxy: TestProxy;
  beforeAll(async () => {
    ca = makeThrowawayCa('run-context test CA');
    proxy = await startTestProxy();
  });
  afterAll(() => proxy.close());

  it('keeps its connections alive while it runs, in a pool of its own, and close() ends them', async () => {
    const server = await counting(http.createServer(answer404), 'http');
    const base = defaultNetwork();
    const run = openRun(base);
    try {
      const first = await run.transport.send({ method: 'GET', url: `${server.url}/a`, headers: {} });
      await run.transport.send({ method: 'GET', url: `${server.url}/b`, headers: {} });
      expect(first.status).toBe(404);
      // One kept-alive connection served both requests; it is the run's, not the base network's.
      expect([server.open.size, openConnections(run.network), openConnections(base)]).toEqual([1, 1, 0]);
      expect(run.network.session).toBe(base.session);
      run.close();
      expect(openConnections(run.network)).toBe(0);
      await server.allClosed();
    } finally {
      run.close();
      await server.close();
    }
  });

  it('closes a CONNECT tunnel still open when the run ends', async () => {
    let release: (() => void) | undefined;
    const held = https.createServer(ca.issue({ names: ['localhost'] }), (_req, res) => {
      release = () => res.writeHead(200).end('late');
    });
    const server = await counting(held, 'https');
    const run = openRun(
      defaultNetwork({ tls: { extraCa: [ca.cert], insecure: false }, proxy: proxyFromEnv({ HTTPS_PROXY: proxy.url }) }),
    );
    try {
      const pending = run.transport.send({ method: 'GET', url: `${server.url}/held`, headers: {} });
      const settled = pending.then(
        () => 'answered',
        () => 'cut',
      );
      const until = Date.now() + 5000;
      while (!release && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(release, 'the request reached the server through the tunnel').toBeDefined();
      // The tunnel: the socket to the proxy and the TLS session over it.
      expect(openConnections(run.network)).toBe(2);
      run.close();
      expect(openConnections(run.network)).toBe(0);
      await server.allClosed();
      expect(await settled).toBe('cut');
    } finally {
      release?.();
      run.close();
      await server.close();
    }
  });

  it('runSuites reads the network it is given and closes the connections of its run when it ends', async () => {
    const server = await counting(http.createServer(answer404), 'http');
    const network = defaultNetwork();
    network.session.stop('run-timeout', 'cut by the test before the run');
    const given = defaultNetwork();
    try {
      // The capability probe asks the control API (seven routes) over the run's connections.
      const report = await runSuites({
        target: { ...serviceTarget, baseUrl: server.url, controlToken: 'ct', userId: 1 },
        suites: [],
        rules: [],
        network: given,
      });
      expect(report.notes).toEqual([]);
      expect(server.seen()).toBeGreaterThan(0);
      // Kept alive while the run ran (the server would hold them 5 s): closed by the run's end.
      await server.allClosed();
      // Whose session the run reads: the given network's, not the process's.
      const cut = await runSuites({
        target: { ...serviceTarget, baseUrl: server.url },
        suites: [],
        rules: [],
        network,
      });
      expect(cut.notes).toEqual(['cut by the test before the run']);
    } finally {
      await server.close();
    }
  });

  it("runSuites sends through the transport of the options, else the target's own", async () => {
    const seen: string[] = [];
    const recording = (name: string): Transport => ({
      send: async (request) => {
        seen.push(`${name} ${request.method} ${new URL(request.url).pathname}`);
        return { status: 404, headers: {}, body: Buffer.from('{}'), durationMs: 0 };
      },
    });
    const target = {
      ...serviceTarget,
      baseUrl: 'http://127.0.0.1:9',
      controlToken: 'ct',
      userId: 1,
      transport: recording('target'),
    };
    await runSuites({ target, suites: [], rules: [], network: defaultNetwork() });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((line) => line.startsWith('target '))).toBe(true);
    seen.length = 0;
    await runSuites({ target, suites: [], rules: [], network: defaultNetwork(), transport: recording('options') });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((line) => line.startsWith('options '))).toBe(true);
  });
});
