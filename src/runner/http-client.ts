import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import tls from 'node:tls';
import { TransportError } from '../core/errors.js';
import { defaultNetwork, trustedCa, type NetworkConfig } from '../net/network-config.js';
import { proxyFor } from '../net/proxy.js';
import { describeTlsFailure, plainToTlsLine, speaksTls } from '../net/tls-failure.js';
import { openTunnel, proxyAuthorization } from '../net/tunnel.js';

/** A request exactly as it goes on the wire: no header is added that is not listed (but Host and Connection). */
export interface WireRequest {
  method: string;
  url: string;
  /** A list is the field sent once per value, in order (a header given twice). */
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Idle timeout: no byte for this long ends the request (default: the network's). */
  timeoutMs?: number;
  /** TLS, proxy and limits of the run (default: the process's, `currentNetwork()`). */
  network?: NetworkConfig;
  /** The cap on this answer's bytes (default: the network's `maxBodyBytes`). */
  maxBodyBytes?: number;
}

/** The answer as received. */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  durationMs: number;
}

let processNetwork: NetworkConfig | undefined;

/**
 * The network of requests that name none, and of runs given none: what the CLI set with
 * `useNetwork` for this command, else direct, verifying, default limits (NODE_EXTRA_CA_CERTS
 * trusted). A run reads it once, as its default (`RunOptions.network`), and passes its own on.
 */
export function currentNetwork(): NetworkConfig {
  return (processNetwork ??= defaultNetwork());
}

/** Makes `network` the default of every request and run that names none (one CLI command). */
export function useNetwork(network: NetworkConfig): void {
  processNetwork = network;
}

/** What a network opened: its keep-alive agents and the CONNECT tunnels still open. */
interface Connections {
  http: http.Agent;
  https: https.Agent;
  tunnels: Set<Socket>;
}

const opened = new WeakMap<NetworkConfig, Connections>();

function connectionsOf(network: NetworkConfig): Connections {
  let pool = opened.get(network);
  if (!pool) {
    const ca = trustedCa(network.tls);
    pool = {
      http: new http.Agent({ keepAlive: true, maxSockets: 256 }),
      https: new https.Agent({
        keepAlive: true,
        maxSockets: 256,
        rejectUnauthorized: !network.tls.insecure,
        ...(ca ? { ca } : {}),
        ...(network.tls.cert ? { cert: network.tls.cert } : {}),
        ...(network.tls.key ? { key: network.tls.key } : {}),
      }),
      tunnels: new Set(),
    };
    opened.set(network, pool);
  }
  return pool;
}

/**
 * Closes what requests over `network` opened: the keep-alive connections of its agents and the
 * CONNECT tunnels still open (the end of a run: `openRun` in run-context.ts). A later request over
 * the same network opens new ones.
 */
export function closeNetwork(network: NetworkConfig): void {
  const pool = opened.get(network);
  if (!pool) return;
  opened.delete(network);
  pool.http.destroy();
  pool.https.destroy();
  for (const tunnel of pool.tunnels) tunnel.destroy();
  pool.tunnels.clear();
}

/** How many sockets `network` holds open now (kept-alive or in use, and a tunnel's two): for tests. */
export function openConnections(network: NetworkConfig): number {
  const pool = opened.get(network);
  if (!pool) return 0;
  const count = (sockets: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(sockets).reduce((n, list) => n + (list?.length ?? 0), 0);
  return count(pool.http.sockets) + count(pool.http.freeSockets) + count(pool.https.sockets) + count(pool.https.freeSockets) + pool.tunnels.size;
}

const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Sends one HTTP(S) request with node:http, so that a case can omit Content-Type or send bytes that
 * fetch would normalise. Honours the network's TLS settings, proxies (CONNECT for https), answer cap,
 * idle timeout and overall deadline. Failures are TransportErrors; a refused connection to an origin
 * that answered before cuts the run (RunCutError 'target-gone': the target stopped answering, which
 * the engine reports as the target's failure).
 */
export function send(request: WireRequest): Promise<WireResponse> {
  const network = request.network ?? currentNetwork();
  const started = performance.now();
  const stopped = network.session.stopped;
  if (stopped) return Promise.reject(stopped);
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.reject(new TransportError('bad-url', `not a URL: ${request.url}`));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.reject(new TransportError('bad-url', `only http:// and https:// targets are supported, not ${url.protocol}`));
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (secure ? 443 : 80));
  const what = `${request.method} ${request.url}`;
  const proxy = proxyFor(url, network.proxy);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  network.session.sending(what, body);
  const headers: Record<string, string | string[] | number> = { ...request.headers };
  if (body !== undefined) headers['content-length'] = body.length;
  const idleMs = request.timeoutMs ?? network.idleTimeoutMs;
  const cap = request.maxBodyBytes ?? network.maxBodyBytes;

  return new Promise((resolve, reject) => {
    let settled = false;
    let current: http.ClientRequest | undefined;
    const finish = (outcome: { error: Error } | { response: WireResponse }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      untrack();
      if ('error' in outcome) {
        current?.destroy();
        reject(outcome.error);
      } else resolve(outcome.response);
    };
    const fail = (error: Error) => finish({ error });
    const untrack = network.session.track(fail);
    const deadline = setTimeout(
      () => fail(new TransportError('deadline', `${what}: no complete answer within ${network.requestDeadlineMs} ms (the overall deadline of a request)`)),
      network.requestDeadlineMs,
    );
    deadline.unref();

    // TLS 1.3 servers judge the client certificate after the client's handshake ended: a refusal may
    // reach us as a bare reset of the fresh connection before any answer.
    let freshHandshake = false;
    // A kept-alive socket the target closed while idle (RFC 9112 §9.5 lets it) can meet our request
    // as a reset before any answer: that is the connection's end, not the target's verdict. Such a
    // request is sent once more, on a new connection (Node's documented pattern, `reusedSocket`).
    let reissue: (() => void) | undefined;
    let reset: NodeJS.ErrnoException | undefined;
    const onError = (failure: NodeJS.ErrnoException) => {
      if (settled) return;
      if (reissue && !reset && current?.reusedSocket && !answered && (failure.code === 'ECONNRESET' || failure.code === 'EPIPE')) {
        reset = failure;
        return reissue();
      }
      // Sent again and the target is gone: the reset was its last word, judged as before.
      const error = reset && REFUSED.has(failure.code ?? '') ? reset : failure;
      const tlsLine = secure ? describeTlsFailure(error, url.host) : undefined;
      if (tlsLine) return fail(new TransportError('tls', tlsLine));
      if (secure && freshHandshake && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        const hint = network.tls.cert ? 'did it refuse the client certificate (--cert)?' : 'does it require a client certificate (--cert FILE --key FILE)?';
        return fail(new TransportError('tls', `TLS: ${url.host} closed the connection right after the handshake [${error.code}]: ${hint}`));
      }
      if (REFUSED.has(error.code ?? '') && network.session.hasAnswered(url.origin)) {
        return fail(network.session.stop('target-gone', `${url.origin} stopped answering: ${error.code} (it answered earlier in the run)`));
      }
      const reason = error.code === 'ECONNREFUSED' ? 'unreachable' : 'transport';
      const plainLine = new TransportError(reason, `${what}: ${error.code ?? ''} ${error.message}`.replace(/\s+/g, ' '));
      // A plain request to a TLS port is dropped without an answer ("socket hang up"): one handshake tells it from a target that reset.
      if (!secure && !proxy && error.code === 'ECONNRESET' && !network.session.hasAnswered(url.origin)) {
        void speaksTls(hostname, port).then((isTls) =>
          fail(isTls ? new TransportError('tls', plainToTlsLine(url.host, error.code ?? 'ECONNRESET')) : plainLine),
        );
        return;
      }
      fail(plainLine);
    };

    let answered = false;
    const onResponse = (res: http.IncomingMessage) => {
      answered = true;
      network.session.answered(url.origin);
      const declared = Number(res.headers['content-length']);
      const tooLarge = () => fail(new TransportError('too-large', `${what}: the answer is larger than the cap of ${cap} bytes (--max-body)`));
      // A HEAD answer (or 204/304) declares a length it does not carry.
      const bodyless = request.method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304;
      if (!bodyless && Number.isFinite(declared) && declared > cap) return tooLarge();
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > cap) return tooLarge();
        chunks.push(chunk);
      });
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        finish({ response: { status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks), durationMs: performance.now() - started } });
      });
      res.on('error', (error) => fail(new TransportError('aborted', `${what}: ${error.message}`)));
      res.on('aborted', () => fail(new TransportError('aborted', `${what}: the answer was cut off`)));
    };

    const issue = (options: https.RequestOptions, viaTls = false) => {
      if (settled) return;
      // Once per request, and only through a pooled agent (a tunnel's socket is never reused).
      reissue = options.agent
        ? () => issue({ ...options, agent: viaTls ? new https.Agent({ ...(options.agent as https.Agent).options, keepAlive: false }) : false }, viaTls)
        : undefined;
      let req: http.ClientRequest;
      try {
        req = (viaTls ? https : http).request({ ...options, method: request.method, headers: options.headers ?? headers }, onResponse);
      } catch (error) {
        // A header value Node refuses (e.g. a control character a case put there) is a transport error, not a crash.
        return fail(new TransportError('transport', `${what}: ${(error as Error).message}`));
      }
      current = req;
      req.once('socket', (socket) => {
        if (req.reusedSocket) return;
        const mark = () => (freshHandshake = true);
        socket.once('secureConnect', mark);
        req.once('close', () => socket.off('secureConnect', mark));
      });
      req.once('response', () => (freshHandshake = false));
      req.setTimeout(idleMs, () => req.destroy(Object.assign(new Error(`no answer within ${idleMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', onError);
      req.end(body);
    };

    if (secure && proxy) {
      const authority = `${url.hostname}:${port}`;
      openTunnel(proxy, authority, (req) => (current = req)).then(
        (socket) => {
          if (settled) return socket.destroy();
          const ca = trustedCa(network.tls);
          const secured = tls.connect({
            socket,
            host: hostname,
            ...(isIP(hostname) ? {} : { servername: hostname }),
            rejectUnauthorized: !network.tls.insecure,
            ...(ca ? { ca } : {}),
            ...(network.tls.cert ? { cert: network.tls.cert } : {}),
            ...(network.tls.key ? { key: network.tls.key } : {}),
          });
          // The tunnel is the network's until it closes: the end of the run closes one still open.
          const { tunnels } = connectionsOf(network);
          for (const open of [socket, secured]) {
            tunnels.add(open);
            open.once('close', () => tunnels.delete(open));
          }
          issue({ host: hostname, port, path: `${url.pathname}${url.search}`, createConnection: () => secured });
        },
        (error: TransportError) => {
          const status = (error.cause as { status?: number } | undefined)?.status;
          if (status !== undefined && status >= 502 && status <= 504 && network.session.hasAnswered(url.origin)) {
            return fail(
              network.session.stop('target-gone', `${url.origin} stopped answering: the proxy answered ${status} to CONNECT (it answered earlier in the run)`),
            );
          }
          fail(error);
        },
      );
    } else if (proxy) {
      // Absolute-form through an HTTP proxy; Host stays the target's.
      issue({
        host: proxy.hostname.replace(/^\[|\]$/g, ''),
        port: Number(proxy.port || 80),
        path: url.href,
        agent: connectionsOf(network).http,
        headers: { host: url.host, ...headers, ...proxyAuthorization(proxy) },
      });
    } else if (secure) {
      const agent = connectionsOf(network).https;
      issue({ host: hostname, port, path: `${url.pathname}${url.search}`, agent, ...(isIP(hostname) ? {} : { servername: hostname }) }, true);
    } else issue({ host: hostname, port, path: `${url.pathname}${url.search}`, agent: connectionsOf(network).http });
  });
}
