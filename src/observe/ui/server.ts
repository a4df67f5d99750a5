/**
 * The server of observe's live page (`--ui [HOST:]PORT`): the page itself (plain HTML, CSS and JS
 * files of assets/observe-ui/, read once at start: no build step, nothing from another origin), its event
 * stream (`/events`, server-sent events), an exchange's detail (`/api/exchanges/SEQ`, payloads
 * opened on demand), and `/metrics` and `/healthz` as the metrics server serves them. Its own
 * server, so a browser never holds a forwarding socket.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { PACKAGE_ROOT } from '../../platform/package-paths.js';
import { answerMetrics, type ObserveMetrics } from '../metrics.js';
import type { LiveFeed } from './feed.js';

/** The page's files (the package ships them: package.json `files`). */
const STATIC_DIR = resolve(PACKAGE_ROOT, 'assets', 'observe-ui');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** Only this origin: the page loads nothing from elsewhere, so it works offline and leaks nothing. */
const SECURITY = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** How often an idle event stream gets a comment line. */
const PING_MS = 15_000;

function readStatic(): Map<string, { body: Buffer; type: string }> {
  return new Map(
    Object.entries(FILES).map(([path, { file, type }]) => [
      path,
      { body: readFileSync(resolve(STATIC_DIR, file)), type },
    ]),
  );
}

function answer(res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { ...SECURITY, 'content-type': type }).end(body);
}

function route(feed: LiveFeed, metrics: ObserveMetrics, files: ReturnType<typeof readStatic>) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    const path = (req.url ?? '/').split('?')[0]!;
    const file = files.get(path);
    if (file) return answer(res, 200, file.type, file.body);
    if (path === '/events') {
      if (!feed.attach(res)) answer(res, 503, 'text/plain; charset=utf-8', 'too many pages open\n');
      return;
    }
    const detail = /^\/api\/exchanges\/(\d{1,15})$/.exec(path);
    if (detail) {
      const shown = feed.detail(Number(detail[1]));
      if (!shown) return answer(res, 404, 'application/json', JSON.stringify({ error: 'no longer on the page' }));
      return answer(res, 200, 'application/json', JSON.stringify(shown));
    }
    if (!answerMetrics(metrics, req, res)) answer(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  };
}

interface LivePageServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the page's server on `host:port` (0: any free port); rejects with the listen error. */
export async function startLivePage(
  feed: LiveFeed,
  metrics: ObserveMetrics,
  host: string,
  port: number,
): Promise<LivePageServer> {
  const server = http.createServer(route(feed, metrics, readStatic()));
  // A request that is not read whole in time is dropped; event streams are long-lived responses, not slow requests.
  server.requestTimeout = 10_000;
  await new Promise<void>((done, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), done()));
  });
  const ping = setInterval(() => feed.ping(), PING_MS);
  ping.unref();
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((done) => {
        clearInterval(ping);
        feed.close();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
