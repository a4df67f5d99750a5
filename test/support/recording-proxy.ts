/**
 * A tiny loopback recording proxy for the judge's tests: forwards each request to one upstream byte
 * for byte, answers with the upstream's answer, and records both as an ObservedExchange
 * (src/observe/exchange.ts). It is the test's stand-in for the observe proxy, not that proxy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExchangeKind, ObservedExchange } from '../../src/observe/exchange.js';

/** Where the exchanges of one or more proxies go, numbered in one sequence in the order they finish (as the observe proxy numbers them: a judge and a capture take them in `seq` order). */
export class Recording {
  readonly exchanges: ObservedExchange[] = [];
  #seq = 0;
  next(): number {
    return ++this.#seq;
  }
}

/** The kind of an exchange by its path and direction (as the observe proxy classifies it). */
export function kindOf(path: string, direction: ObservedExchange['direction']): ExchangeKind {
  if (direction === 'service→merchant') return 'callback';
  const bare = path.split('?')[0]!;
  if (bare.endsWith('/getEnergyMaxCount')) return 'energy';
  if (bare.endsWith('/withdrawWithoutVerify')) return 'withdraw';
  if (bare.endsWith('/card/close')) return 'card-close';
  return 'other';
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** A running recording proxy. */
export interface RecordingProxy {
  url: string;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port forwarding to `upstream` (an origin, optionally with a path prefix). */
export async function startRecordingProxy(
  upstream: string,
  direction: ObservedExchange['direction'],
  recording: Recording,
): Promise<RecordingProxy> {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const headers = flatHeaders(req.headers);
      const request = { method: req.method ?? 'GET', path, headers, bodyBase64: body.toString('base64') };
      const forward = { ...headers, host: target.host };
      const upstreamPath = `${target.pathname.replace(/\/$/, '')}${path}`;
      const out = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: upstreamPath, headers: forward },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            const answerBody = Buffer.concat(answerChunks);
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(answerBody);
            recording.exchanges.push({
              v: 1,
              seq: recording.next(),
              kind: kindOf(path, direction),
              direction,
              startedAt,
              endedAt: Date.now(),
              request,
              response: {
                status: answer.statusCode ?? 0,
                headers: flatHeaders(answer.headers),
                bodyBase64: answerBody.toString('base64'),
              },
            });
          });
        },
      );
      out.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        recording.exchanges.push({
          v: 1,
          seq: recording.next(),
          kind: kindOf(path, direction),
          direction,
          startedAt,
          endedAt: Date.now(),
          request,
          upstreamError: { message: error.message, gatewayStatus: 502 },
        });
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
