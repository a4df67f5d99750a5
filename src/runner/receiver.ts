import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../platform/http-io.js';
import type { ReceivedCallback } from './observation.js';
import type { Answer } from './model.js';

export type { Answer };

/** A local callback receiver that plays a merchant for the service-side callback suites. */
export interface Receiver {
  url: string;
  port: number;
  /** Everything received since start (or the last reset), oldest first. */
  received: ReceivedCallback[];
  /** Sets how the next deliveries are answered: in turn, the last one repeating. */
  script(answers: Answer[]): void;
  /** Resolves when `count` deliveries matching `filter` arrived, or after `timeoutMs`. */
  waitFor(
    count: number,
    filter: (callback: ReceivedCallback) => boolean,
    timeoutMs: number,
  ): Promise<ReceivedCallback[]>;
  close(): Promise<void>;
}

/** What each scripted answer sends: HTTP status and body. */
export const ANSWERS: Readonly<Record<Answer, { status: number; body: string }>> = {
  ack: { status: 200, body: '{"errCode":0,"message":""}' },
  'errcode-1': { status: 200, body: '{"errCode":1,"message":"not processed (scripted by wallet-conformance)"}' },
  'http-500': { status: 500, body: '{"errCode":500,"message":"scripted failure"}' },
  'string-zero': { status: 200, body: '{"errCode":"0","message":""}' },
  // HTTP 200 and an object, but no errCode at all.
  'no-errcode': { status: 200, body: '{"message":"ok"}' },
  // 0 under another name than errCode.
  'code-zero': { status: 200, body: '{"code":0}' },
  // A text body a merchant might mean as success.
  'text-body': { status: 200, body: 'success' },
};

/**
 * Starts the receiver on `port` (0: a free one) on loopback, on every interface for `--listen`, or
 * on `host` (`--listen-host`). Its `url` (what the service is told) is `publicUrl` when given
 * (`--public-url`: a service on another host reaches the runner by that name), else the bound address.
 */
export async function startReceiver(port = 0, host = '127.0.0.1', publicUrl?: string): Promise<Receiver> {
  const received: ReceivedCallback[] = [];
  let answers: Answer[] = ['ack'];
  let answered = 0;
  const waiters = new Set<() => void>();
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req, 1024 * 1024);
    const answer = ANSWERS[answers[Math.min(answered, answers.length - 1)] ?? 'ack'];
    answered++;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    received.push({
      at: Date.now(),
      method: req.method ?? '',
      url: req.url ?? '',
      headers,
      body: body.ok ? body.body : Buffer.alloc(0),
      answeredStatus: answer.status,
      answeredBody: answer.body,
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    for (const wake of waiters) wake();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url:
      publicUrl ??
      `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${actual}/wallet-conformance/callback`,
    port: actual,
    received,
    script(next) {
      answers = next.length > 0 ? next : ['ack'];
      answered = 0;
    },
    waitFor(count, filter, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          const matching = received.filter(filter);
          if (matching.length >= count) finish(matching);
        };
        const finish = (matching: ReceivedCallback[]) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(matching);
        };
        const timer = setTimeout(() => finish(received.filter(filter)), timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
