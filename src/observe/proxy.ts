import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { defaultNetwork, trustedCa, type NetworkConfig } from '../net/network-config.js';
import { createWebServer, type ServerTls } from '../net/server-tls.js';
import { describeTlsFailure } from '../net/tls-failure.js';
import { classify } from './classify.js';
import { DEFAULT_MAX_RECORDED_BODY_BYTES, DEFAULT_UPSTREAM_TIMEOUT_MS } from './defaults.js';
import type { ObservedExchange, ObservedMessage } from './exchange.js';
import { keepExchangesYoung } from './young-heap.js';

/**
 * The forwarding half of `wallet-conformance observe`: listeners that pass every request to an
 * upstream and its answer back, unchanged, and hand each finished exchange (request and answer as
 * they crossed, bodies as Base64) to `onExchange` once the answer has left, so judging never adds
 * to the latency the two sides see.
 *
 * What "unchanged" means here: method, path and query, every end-to-end header (names, values,
 * order and repeats, from the raw header list), the body bytes; the answer's status, reason
 * phrase, headers and body. What a proxy must change it changes: the hop-by-hop headers of RFC 9110
 * §7.6.1 (Connection and the headers it names, Keep-Alive, Transfer-Encoding, TE, Trailer,
 * Upgrade, Proxy-*) are the connection's, not the message's, and `Host` names the upstream (as a
 * gateway's does); `Expect` is answered by the proxy itself. Nothing else is added (no Via, no
 * X-Forwarded-*). Upstream, undici writes `Host`, `Content-Length` (value and place kept) and its
 * connection's `connection: keep-alive` in lower case: field names are case-insensitive (RFC 9110
 * §5.1), and it is the price of its client (decision 0122).
 */

/** One listener: where it listens, what it forwards to, which direction its traffic is. */
export interface ProxyListener {
  direction: ObservedExchange['direction'];
  host: string;
  port: number;
  tls?: ServerTls;
  /** The upstream's base URL: a request's path and query are appended to its path. */
  upstream: string;
  /** Card close goes here when given ({card_base_url} on another host), else to `upstream`. */
  cardUpstream?: string;
}

interface ObserveProxyOptions {
  listeners: readonly ProxyListener[];
  /** TLS trust and client certificate of upstream connections (--ca, --cert/--key, --insecure). */
  network?: NetworkConfig;
  /** No complete answer from the upstream within this long: 504 (default 30 s). */
  upstreamTimeoutMs?: number;
  /** How much of one body is recorded; longer bodies are forwarded whole, recorded cut (`truncated`). */
  maxRecordedBodyBytes?: number;
  /** Each finished exchange, in the order they finish (`seq` counts them from 1). */
  onExchange: (exchange: ObservedExchange) => void;
  /** `onExchange` threw: the proxy goes on forwarding. */
  onError?: (error: unknown) => void;
  /** Clock of startedAt/endedAt (ms since the epoch). */
  now?: () => number;
}

export interface ObserveProxy {
  /** Each listener's own URL (the port bound, when 0 was asked) and where it forwards to. */
  addresses: Array<{ direction: ObservedExchange['direction']; url: string; upstream: string; cardUpstream?: string }>;
  /** Exchanges handed to onExchange so far. */
  readonly exchanges: number;
  /**
   * Stops listening, ends idle connections and waits for exchanges in flight, at most `graceMs`
   * (default 3 s) or until `signal` aborts; those still open then are cut, not judged, counted in
   * `cut`, and nothing more is handed to `onExchange`.
   */
  close(options?: { graceMs?: number; signal?: AbortSignal }): Promise<{ cut: number }>;
}

export { DEFAULT_UPSTREAM_TIMEOUT_MS };
/**
 * How long `close` waits for exchanges in flight before it cuts them: short enough that the judge's
 * end and the reports fit well inside a container stop's 10 s before SIGKILL.
 */
const DEFAULT_CLOSE_GRACE_MS = 3_000;

/** Headers of one hop (RFC 9110 §7.6.1), never forwarded. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);
/** Dropped towards the upstream besides the hop-by-hop ones: Host is the upstream's, Expect was answered here. */
const REPLACED_ON_REQUEST = new Set(['host', 'expect']);
/** The header that marks the proxy's own answers (a gateway failure), never an upstream's. */
export const OBSERVE_HEADER = 'x-wallet-conformance-observe';
/** Removed from upstream answers: only observe's own answers carry its header. */
const OWN_HEADERS: ReadonlySet<string> = new Set([OBSERVE_HEADER]);

/** The raw header list without hop-by-hop headers (and those Connection names) and without `drop`. */
export function endToEndHeaders(raw: readonly string[], drop: ReadonlySet<string> = new Set()): string[] {
  return readHeaders(raw, drop).endToEnd;
}

/** One message's headers read in one pass: the seam's form and the list to pass on. */
interface ReadHeaders {
  /** Header names lower-case, repeats joined by ", " (the seam's form). */
  flat: Record<string, string>;
  /** The raw list without hop-by-hop headers (and those Connection names) and without `drop`. */
  endToEnd: string[];
}

/** Reads a raw header list once (every message crosses here: one pass, names lower-cased once). */
function readHeaders(raw: readonly string[], drop: ReadonlySet<string>): ReadHeaders {
  const flat: Record<string, string> = {};
  const endToEnd: string[] = [];
  let connection: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    flat[name] = name in flat ? `${flat[name]}, ${value}` : value;
    if (name === 'connection') (connection ??= []).push(...value.split(',').map((token) => token.trim().toLowerCase()));
    if (!HOP_BY_HOP.has(name) && !drop.has(name)) endToEnd.push(raw[i]!, value);
  }
  if (!connection) return { flat, endToEnd };
  // Connection names more headers of this hop (rare): they leave the list too.
  const named = new Set(connection);
  const kept: string[] = [];
  for (let i = 0; i < endToEnd.length; i += 2)
    if (!named.has(endToEnd[i]!.toLowerCase())) kept.push(endToEnd[i]!, endToEnd[i + 1]!);
  return { flat, endToEnd: kept };
}

/** Keeps the first `cap` bytes of a body, and whether there was more. */
class BodyRecorder {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  add(chunk: Buffer): void {
    if (this.truncated) return;
    if (this.size + chunk.length > this.cap) {
      this.chunks.push(chunk.subarray(0, this.cap - this.size));
      this.size = this.cap;
      this.truncated = true;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }
  bytes(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
  message(headers: Record<string, string>): ObservedMessage {
    return {
      headers,
      bodyBase64: this.bytes().toString('base64'),
      ...(this.truncated ? { truncated: true as const } : {}),
    };
  }
}

/**
 * The request target sent upstream: the base URL's path, then the request's target exactly as it
 * arrived. No URL parser touches the target: WHATWG normalisation would turn `/a/../x` into `/x`,
 * decode `%2e%2e`, turn `\` into `/` and re-encode quotes, so the service would get another path
 * than the one the judge read (and classified). An absolute-form target (a client that treats us
 * as a forward proxy) loses only its scheme and authority, by text.
 */
export function upstreamPath(base: URL, requestTarget: string): string {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(requestTarget);
  const target = absolute ? requestTarget.slice(absolute[0].length) : requestTarget;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (target === '') return prefix === '' ? '/' : prefix;
  return `${prefix}${target.startsWith('/') ? '' : '/'}${target}`;
}

/**
 * The upstream connections: undici's dispatcher (Node's own HTTP client, maintained by the Node.js
 * project). On the forwarding thread it costs about two thirds of what node:http's client does
 * per request (decision 0122). Idle connections are closed after 4 s, before a server's usual
 * 5 s keep-alive, so a request is rarely sent on a connection the upstream is closing; undici's
 * own header and body timers are off, the exchange's deadline (--upstream-timeout) is the one
 * that counts, and a connection attempt outlives it, so a silent upstream is a 504 as before.
 */
function dispatcherFor(network: NetworkConfig, timeoutMs: number): Agent {
  const ca = trustedCa(network.tls);
  return new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 4_000,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      timeout: timeoutMs + 1_000,
      rejectUnauthorized: !network.tls.insecure,
      ...(ca ? { ca } : {}),
      ...(network.tls.cert ? { cert: network.tls.cert } : {}),
      ...(network.tls.key ? { key: network.tls.key } : {}),
    },
  });
}

/** What relaying an answer needs of its exchange. */
interface RelayContext {
  cap: number;
  /** The client left after sending its whole request: the answer is read for the record only. */
  clientGone: () => boolean;
  record: (outcome: Pick<ObservedExchange, 'response'>) => void;
  fail: (gatewayStatus: 502, message: string) => void;
}

/**
 * Passes a request body on by hand rather than piped (fewer listeners per exchange), with pipe's
 * back-pressure, recording each chunk; it is read whole even once `sink` is gone, so the record
 * holds the request the client sent whatever became of the upstream.
 */
function passOn(source: Readable, sink: Writable, body: BodyRecorder): void {
  source.on('data', (chunk: Buffer) => {
    body.add(chunk);
    if (!sink.destroyed && !sink.write(chunk)) source.pause();
  });
  sink.on('drain', () => source.resume());
  source.once('end', () => {
    if (!sink.destroyed) sink.end();
  });
}

/** A raw header list as text, whichever form undici gives it in (Latin-1 keeps every byte, as node:http does). */
function headerTexts(raw: ReadonlyArray<Buffer | string>): string[] {
  return raw.map((item) => (typeof item === 'string' ? item : item.toString('latin1')));
}

/** Why the upstream request failed, in one line: the TLS failure worded, or the error's code and message. */
function upstreamFailure(target: URL, error: Error & { code?: string }): string {
  if (error.code === 'UND_ERR_INVALID_ARG') return `cannot send to ${target.origin}: ${error.message}`;
  const tls = target.protocol === 'https:' ? describeTlsFailure(error, target.host) : undefined;
  return tls ?? `${target.origin} failed: ${`${error.code ?? ''} ${error.message}`.trim()}`;
}

/**
 * undici's handler of one upstream request: passes the answer to the client unchanged (but for
 * observe's own header) with back-pressure, records it once it has left, and words a failure.
 * The request is never sent again, not even after a reused connection's reset: the upstream may
 * have read it and acted on it (one order reaching the service twice). The client decides.
 */
function answerRelay(
  target: URL,
  res: http.ServerResponse,
  state: Crossing,
  context: RelayContext,
): Dispatcher.DispatchHandler {
  const { origin } = target;
  const { record, fail } = context;
  const responseBody = new BodyRecorder(context.cap);
  let answered: { status: number; headers: Record<string, string> } | undefined;
  const answer = () => ({ response: { status: answered!.status, ...responseBody.message(answered!.headers) } });
  return {
    onConnect(abort) {
      // The exchange ended (its deadline, its client) before a connection was free: nothing is sent.
      if (state.finished) return abort();
      state.abort = abort;
    },
    onHeaders(status, rawHeaders, resume, statusText) {
      // An interim answer (1xx) is the connection's: node:http's server sends its own 100 Continue.
      if (status < 200) return true;
      // The failure header is observe's own: an upstream's copy would pass its answer off as observe's.
      const headers = readHeaders(headerTexts(rawHeaders as Array<Buffer | string>), OWN_HEADERS);
      answered = { status, headers: headers.flat };
      if (context.clientGone()) return true;
      res.sendDate = false;
      try {
        res.writeHead(status, statusText, headers.endToEnd);
      } catch (error) {
        fail(502, `${origin} answered a header the proxy cannot pass on: ${(error as Error).message}`);
        return false;
      }
      res.once('finish', () => record(answer()));
      res.on('drain', () => resume());
      // The client left while the answer was on its way: the rest is read for the record.
      res.once('close', () => {
        if (!res.writableFinished && context.clientGone()) resume();
      });
      return true;
    },
    onData(chunk) {
      responseBody.add(chunk);
      if (context.clientGone() || res.destroyed) return true;
      return res.write(chunk);
    },
    onComplete() {
      if (context.clientGone() || res.destroyed) record(answer());
      else res.end();
    },
    onError(error: Error & { code?: string }) {
      if (state.finished) return;
      if (!answered) return fail(502, upstreamFailure(target, error));
      fail(
        502,
        error.code === 'UND_ERR_SOCKET'
          ? `${origin} cut its answer off after ${responseBody.bytes().length} bytes`
          : `${origin} failed during its answer: ${error.message}`,
      );
    },
  };
}

/** The proxy's own answer to a failed upstream. Its body names no upstream (an internal address is not the client's business): the record holds the details. */
function answerGatewayFailure(res: http.ServerResponse, gatewayStatus: 502 | 504): void {
  const text = `observe: ${gatewayStatus === 504 ? 'the upstream gave no complete answer in time' : 'the upstream failed'}\n`;
  res.writeHead(gatewayStatus, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    [OBSERVE_HEADER]: 'upstream-failed',
  });
  res.end(text);
}

/**
 * The recorder: numbers each finished exchange and hands it to `onExchange`, once. After `stop`
 * nothing more is handed over: the judge may have finished.
 */
function recorder(options: Pick<ObserveProxyOptions, 'onExchange' | 'onError'>) {
  let seq = 0;
  let stopped = false;
  return {
    get count() {
      return seq;
    },
    stop: () => void (stopped = true),
    /** `make` builds the exchange with its number (so `seq` comes second in it, after `v`). */
    emit(make: (seq: number) => ObservedExchange): void {
      if (stopped) return;
      const numbered = make(++seq);
      try {
        options.onExchange(numbered);
      } catch (error) {
        options.onError?.(error);
      }
    },
  };
}

/** What forwarding one exchange needs of the proxy. */
interface Forwarding {
  dispatcher: Agent;
  /** An upstream's base URL parsed (once per upstream, not per request). */
  upstreamUrl: (base: string) => URL;
  timeoutMs: number;
  cap: number;
  now: () => number;
  emit: (make: (seq: number) => ObservedExchange) => void;
}

/** The state of one exchange on its way: what the client did, and how it ended. */
interface Crossing {
  requestEnded: boolean;
  finished: boolean;
  /**
   * The client closed its connection after sending its whole request: the upstream may act on it,
   * so its answer is still awaited and recorded (with `clientGone`), just not delivered.
   */
  clientGone: boolean;
  /** Ends the upstream request (undici gives it once a connection is had). */
  abort?: () => void;
  deadline?: NodeJS.Timeout;
}

/** The forwarder: passes one request to its upstream and the answer back, and records the exchange once it ended. */
function forward(
  context: Forwarding,
  listener: ProxyListener,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  settle: () => void,
): void {
  const startedAt = context.now();
  const method = req.method ?? 'GET';
  const path = req.url ?? '/';
  const kind = classify(listener.direction, method, path);
  const target = context.upstreamUrl(
    kind === 'card-close' && listener.cardUpstream ? listener.cardUpstream : listener.upstream,
  );
  const requestHeaders = readHeaders(req.rawHeaders, REPLACED_ON_REQUEST);
  const requestBody = new BodyRecorder(context.cap);
  const state: Crossing = { requestEnded: false, finished: false, clientGone: false };

  const record = (outcome: Pick<ObservedExchange, 'response' | 'upstreamError'>) => {
    if (state.finished) return;
    state.finished = true;
    clearTimeout(state.deadline);
    const request = { method, path, ...requestBody.message(requestHeaders.flat) };
    const endedAt = context.now();
    const { direction } = listener;
    context.emit((seq) => ({
      v: 1,
      seq,
      kind,
      direction,
      startedAt,
      endedAt,
      request,
      ...outcome,
      ...(state.clientGone ? { clientGone: true as const } : {}),
    }));
    settle();
  };
  const gatewayFailure = (gatewayStatus: 502 | 504, message: string) => {
    if (state.finished) return;
    // With the client gone there is nobody to answer: only the record. With part of the answer out
    // already, the connection is cut, as a gateway does, so no one takes half an answer for a whole one.
    if (!state.clientGone && !res.headersSent) answerGatewayFailure(res, gatewayStatus);
    else if (!state.clientGone) res.destroy();
    record({ upstreamError: { message, gatewayStatus } });
    // Ended after the record: the upstream request's own failure (undici reports the abort) then
    // finds the exchange finished.
    state.abort?.();
  };
  state.deadline = setTimeout(
    () =>
      gatewayFailure(
        504,
        `${target.origin} gave no complete answer within ${context.timeoutMs} ms (--upstream-timeout)`,
      ),
    context.timeoutMs,
  );
  res.once('close', () => {
    if (!res.writableFinished) abandon(state, settle);
  });
  const relay: RelayContext = {
    cap: context.cap,
    clientGone: () => state.clientGone,
    record,
    fail: gatewayFailure,
  };
  req.on('end', () => (state.requestEnded = true));
  sendUpstream(context, { target, method, path, endToEnd: requestHeaders.endToEnd }, state, relay, res, {
    req,
    recorded: requestBody,
    headers: requestHeaders.flat,
  });
}

/**
 * The client went away before its answer was out. With its request whole, the upstream has it
 * (and may act on it): the exchange goes on without a client. Otherwise nothing crossed whole.
 */
function abandon(state: Crossing, settle: () => void): void {
  if (state.finished) return;
  if (state.requestEnded) {
    state.clientGone = true;
    return;
  }
  state.finished = true;
  clearTimeout(state.deadline);
  state.abort?.();
  settle();
}

/**
 * Opens the upstream request; its answer is relayed, its failure answered. The body is read as it
 * comes and recorded whatever the upstream does; a request without one (no Content-Length, no
 * Transfer-Encoding) goes on without one, where a body stream would have undici frame it as chunked.
 */
function sendUpstream(
  context: Forwarding,
  request: { target: URL; method: string; path: string; endToEnd: string[] },
  state: Crossing,
  relay: RelayContext,
  res: http.ServerResponse,
  body: { req: http.IncomingMessage; recorded: BodyRecorder; headers: Record<string, string> },
): void {
  const { target } = request;
  const { req, recorded, headers } = body;
  const framed = headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
  const sink = framed ? new PassThrough() : undefined;
  if (sink) passOn(req, sink, recorded);
  else req.resume();
  context.dispatcher.dispatch(
    {
      origin: target.origin,
      method: request.method,
      path: upstreamPath(target, request.path),
      headers: ['Host', target.host, ...request.endToEnd],
      body: sink ?? null,
    },
    answerRelay(target, res, state, relay),
  );
}

/** The listeners: every server listening (all or none: one that cannot listen closes the others and rejects with its error). */
async function listen(
  listeners: readonly ProxyListener[],
  handler: (listener: ProxyListener) => http.RequestListener,
): Promise<{ servers: http.Server[]; addresses: ObserveProxy['addresses'] }> {
  const servers: http.Server[] = [];
  const addresses: ObserveProxy['addresses'] = [];
  try {
    for (const listener of listeners) {
      const server = createWebServer(listener.tls, {}, handler(listener));
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(listener.port, listener.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const { address, port } = server.address() as AddressInfo;
      const host = address.includes(':') ? `[${address}]` : address;
      addresses.push({
        direction: listener.direction,
        url: `${listener.tls ? 'https' : 'http'}://${host}:${port}`,
        upstream: listener.upstream,
        ...(listener.cardUpstream ? { cardUpstream: listener.cardUpstream } : {}),
      });
    }
  } catch (error) {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    throw error;
  }
  return { servers, addresses };
}

/** Exchanges between their request and their record: counted, so a stop can wait for them. */
class InFlight {
  size = 0;
  #onIdle: Array<() => void> = [];
  /** One exchange began; the function returned ends it (once). */
  begin(): () => void {
    this.size++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.size === 0) for (const resolve of this.#onIdle.splice(0)) resolve();
    };
  }
  /** Waits until none is in flight, at most `graceMs` or until `signal` aborts; how many were still open. */
  async settle(graceMs: number, signal?: AbortSignal): Promise<number> {
    if (this.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      // Referenced until it settles: it is what ends the wait.
      timer = setTimeout(resolve, graceMs);
      if (signal?.aborted) resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
      this.#onIdle.push(resolve);
    });
    clearTimeout(timer);
    return this.size;
  }
}

/** Starts every listener (all or none: one that cannot listen closes the others and rejects with its error). */
export async function startObserveProxy(options: ObserveProxyOptions): Promise<ObserveProxy> {
  keepExchangesYoung();
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const dispatcher = dispatcherFor(options.network ?? defaultNetwork(), timeoutMs);
  const records = recorder(options);
  const parsed = new Map<string, URL>();
  const context: Forwarding = {
    dispatcher,
    upstreamUrl: (base) => parsed.get(base) ?? parsed.set(base, new URL(base)).get(base)!,
    timeoutMs,
    cap: options.maxRecordedBodyBytes ?? DEFAULT_MAX_RECORDED_BODY_BYTES,
    now: options.now ?? Date.now,
    emit: records.emit,
  };
  const inFlight = new InFlight();
  const handler = (listener: ProxyListener) => (req: http.IncomingMessage, res: http.ServerResponse) =>
    forward(context, listener, req, res, inFlight.begin());
  // What still runs upstream at the end is cut: its exchange was counted as cut already.
  const destroyDispatcher = () => dispatcher.destroy().catch(() => undefined);
  const { servers, addresses } = await listen(options.listeners, handler).catch(async (error: unknown) => {
    await destroyDispatcher();
    throw error;
  });
  return {
    addresses,
    get exchanges() {
      return records.count;
    },
    async close({ graceMs = DEFAULT_CLOSE_GRACE_MS, signal } = {}) {
      const closed = Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      for (const server of servers) server.closeIdleConnections();
      const cut = await inFlight.settle(graceMs, signal);
      records.stop();
      for (const server of servers) server.closeAllConnections();
      await closed;
      await destroyDispatcher();
      return { cut };
    },
  };
}
