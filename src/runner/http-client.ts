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
  const count = (sockets: NodeJS.ReadOnlyDict<unknown[]>) =>
    Object.values(sockets).reduce((n, list) => n + (list?.length ?? 0), 0);
  return (
    count(pool.http.sockets) +
    count(pool.http.freeSockets) +
    count(pool.https.sockets) +
    count(pool.https.freeSockets) +
    pool.tunnels.size
  );
}

const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A request `send` checked, with what it derived from it. */
interface Outgoing {
  request: WireRequest;
  network: NetworkConfig;
  started: number;
  url: URL;
  secure: boolean;
  /** The URL's host without IPv6 brackets. */
  hostname: string;
  port: number;
  /** `METHOD url`, as messages name the request. */
  what: string;
  proxy: URL | undefined;
  body: Buffer | undefined;
  headers: Record<string, string | string[] | number>;
  idleMs: number;
  /** The cap on the answer's bytes. */
  cap: number;
}

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
    return Promise.reject(
      new TransportError('bad-url', `only http:// and https:// targets are supported, not ${url.protocol}`),
    );
  const secure = url.protocol === 'https:';
  const what = `${request.method} ${request.url}`;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  network.session.sending(what, body);
  const headers: Record<string, string | string[] | number> = { ...request.headers };
  if (body !== undefined) headers['content-length'] = body.length;
  const outgoing: Outgoing = {
    request,
    network,
    started,
    url,
    secure,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || (secure ? 443 : 80)),
    what,
    proxy: proxyFor(url, network.proxy),
    body,
    headers,
    idleMs: request.timeoutMs ?? network.idleTimeoutMs,
    cap: request.maxBodyBytes ?? network.maxBodyBytes,
  };
  return new Promise((resolve, reject) => new RequestInFlight(outgoing, resolve, reject).start());
}

/**
 * One request on its way: the connection it goes over (direct, through a proxy, or a CONNECT
 * tunnel), its answer read up to the cap, and the one outcome it settles with (an answer, or a
 * TransportError for a failure, the deadline or a run cut short).
 */
class RequestInFlight {
  private settled = false;
  private current: http.ClientRequest | undefined;
  // TLS 1.3 servers judge the client certificate after the client's handshake ended: a refusal may
  // reach us as a bare reset of the fresh connection before any answer.
  private freshHandshake = false;
  // A kept-alive socket the target closed while idle (RFC 9112 §9.5 lets it) can meet our request
  // as a reset before any answer: that is the connection's end, not the target's verdict. Such a
  // request is sent once more, on a new connection (Node's documented pattern, `reusedSocket`).
  private reissue: (() => void) | undefined;
  private reset: NodeJS.ErrnoException | undefined;
  private answered = false;
  private readonly untrack: () => void;
  private readonly deadline: ReturnType<typeof setTimeout>;

  constructor(
    private readonly out: Outgoing,
    private readonly resolve: (response: WireResponse) => void,
    private readonly reject: (error: Error) => void,
  ) {
    const { network, what } = out;
    this.untrack = network.session.track(this.fail);
    this.deadline = setTimeout(
      () =>
        this.fail(
          new TransportError(
            'deadline',
            `${what}: no complete answer within ${network.requestDeadlineMs} ms (the overall deadline of a request)`,
          ),
        ),
      network.requestDeadlineMs,
    );
    this.deadline.unref();
  }

  private finish(outcome: { error: Error } | { response: WireResponse }): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.deadline);
    this.untrack();
    if ('error' in outcome) {
      this.current?.destroy();
      this.reject(outcome.error);
    } else this.resolve(outcome.response);
  }

  private readonly fail = (error: Error): void => this.finish({ error });

  /** Sends the request over the connection its URL and the network's proxy call for. */
  start(): void {
    const { url, secure, proxy, hostname, port, network, headers } = this.out;
    const path = `${url.pathname}${url.search}`;
    if (secure && proxy) this.tunnel(proxy);
    else if (proxy)
      // Absolute-form through an HTTP proxy; Host stays the target's.
      this.issue({
        host: proxy.hostname.replace(/^\[|\]$/g, ''),
        port: Number(proxy.port || 80),
        path: url.href,
        agent: connectionsOf(network).http,
        headers: { host: url.host, ...headers, ...proxyAuthorization(proxy) },
      });
    else if (secure)
      this.issue(
        {
          host: hostname,
          port,
          path,
          agent: connectionsOf(network).https,
          ...(isIP(hostname) ? {} : { servername: hostname }),
        },
        true,
      );
    else this.issue({ host: hostname, port, path, agent: connectionsOf(network).http });
  }

  /** HTTPS through a proxy: a CONNECT tunnel, TLS over it, the request over that. */
  private tunnel(proxy: URL): void {
    const { url, hostname, port, network } = this.out;
    openTunnel(proxy, `${url.hostname}:${port}`, (req) => (this.current = req)).then(
      (socket) => {
        if (this.settled) return socket.destroy();
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
        this.issue({ host: hostname, port, path: `${url.pathname}${url.search}`, createConnection: () => secured });
      },
      (error: TransportError) => {
        const status = (error.cause as { status?: number } | undefined)?.status;
        if (status !== undefined && status >= 502 && status <= 504 && network.session.hasAnswered(url.origin)) {
          return this.fail(
            network.session.stop(
              'target-gone',
              `${url.origin} stopped answering: the proxy answered ${status} to CONNECT (it answered earlier in the run)`,
            ),
          );
        }
        this.fail(error);
      },
    );
  }

  private issue(options: https.RequestOptions, viaTls = false): void {
    if (this.settled) return;
    const { request, headers, what, idleMs, body } = this.out;
    // Once per request, and only through a pooled agent (a tunnel's socket is never reused).
    this.reissue = options.agent
      ? () =>
          this.issue(
            {
              ...options,
              agent: viaTls ? new https.Agent({ ...(options.agent as https.Agent).options, keepAlive: false }) : false,
            },
            viaTls,
          )
      : undefined;
    let req: http.ClientRequest;
    try {
      req = (viaTls ? https : http).request(
        { ...options, method: request.method, headers: options.headers ?? headers },
        this.onResponse,
      );
    } catch (error) {
      // A header value Node refuses (e.g. a control character a case put there) is a transport error, not a crash.
      return this.fail(new TransportError('transport', `${what}: ${(error as Error).message}`));
    }
    this.current = req;
    req.once('socket', (socket) => {
      if (req.reusedSocket) return;
      const mark = () => (this.freshHandshake = true);
      socket.once('secureConnect', mark);
      req.once('close', () => socket.off('secureConnect', mark));
    });
    req.once('response', () => (this.freshHandshake = false));
    req.setTimeout(idleMs, () =>
      req.destroy(Object.assign(new Error(`no answer within ${idleMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', this.onError);
    req.end(body);
  }

  private readonly onError = (failure: NodeJS.ErrnoException): void => {
    if (this.settled) return;
    const isReset = failure.code === 'ECONNRESET' || failure.code === 'EPIPE';
    if (this.reissue && !this.reset && this.current?.reusedSocket && !this.answered && isReset) {
      this.reset = failure;
      return this.reissue();
    }
    // Sent again and the target is gone: the reset was its last word, and is what is judged.
    const error = this.reset && REFUSED.has(failure.code ?? '') ? this.reset : failure;
    const { secure, url, network, proxy, what, hostname, port } = this.out;
    const tlsLine = secure ? describeTlsFailure(error, url.host) : undefined;
    if (tlsLine) return this.fail(new TransportError('tls', tlsLine));
    if (secure && this.freshHandshake && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
      const hint = network.tls.cert
        ? 'did it refuse the client certificate (--cert)?'
        : 'does it require a client certificate (--cert FILE --key FILE)?';
      return this.fail(
        new TransportError(
          'tls',
          `TLS: ${url.host} closed the connection right after the handshake [${error.code}]: ${hint}`,
        ),
      );
    }
    if (REFUSED.has(error.code ?? '') && network.session.hasAnswered(url.origin)) {
      return this.fail(
        network.session.stop(
          'target-gone',
          `${url.origin} stopped answering: ${error.code} (it answered earlier in the run)`,
        ),
      );
    }
    const reason = error.code === 'ECONNREFUSED' ? 'unreachable' : 'transport';
    const plainLine = new TransportError(reason, `${what}: ${error.code ?? ''} ${error.message}`.replace(/\s+/g, ' '));
    // A plain request to a TLS port is dropped without an answer ("socket hang up"): one handshake tells it from a target that reset.
    if (!secure && !proxy && error.code === 'ECONNRESET' && !network.session.hasAnswered(url.origin)) {
      void speaksTls(hostname, port).then((isTls) =>
        this.fail(isTls ? new TransportError('tls', plainToTlsLine(url.host, error.code ?? 'ECONNRESET')) : plainLine),
      );
      return;
    }
    this.fail(plainLine);
  };

  private readonly onResponse = (res: http.IncomingMessage): void => {
    this.answered = true;
    const { network, url, what, cap, request, started } = this.out;
    network.session.answered(url.origin);
    const declared = Number(res.headers['content-length']);
    const tooLarge = () =>
      this.fail(
        new TransportError('too-large', `${what}: the answer is larger than the cap of ${cap} bytes (--max-body)`),
      );
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
      for (const [name, value] of Object.entries(res.headers))
        if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
      this.finish({
        response: {
          status: res.statusCode ?? 0,
          headers: flat,
          body: Buffer.concat(chunks),
          durationMs: performance.now() - started,
        },
      });
    });
    res.on('error', (error) => this.fail(new TransportError('aborted', `${what}: ${error.message}`)));
    res.on('aborted', () => this.fail(new TransportError('aborted', `${what}: the answer was cut off`)));
  };
}
