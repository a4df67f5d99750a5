/**
 * What both observe benches put beside observe, in the same run: issue 34's yardstick, a plain
 * node:http forwarding proxy (pipe in, pipe out, kept-alive upstream connections), no recording,
 * no header work, what any proxy costs on this machine; and the bare upstream, which does no work
 * of its own, so the proxy's cost is as large as the upstream's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free loopback port and forwards everything to `upstream`. */
export async function startPlainProxy(upstream: string): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(upstream);
  const keepAlive = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const forward = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: keepAlive,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        keepAlive.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Listens on a free loopback port and answers every request, once read, with `answer` (JSON, 200). */
export async function startBareUpstream(answer: string): Promise<{ url: string; close: () => Promise<void> }> {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) };
  const server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200, headers).end(answer)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
