import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { Scheduler } from '../core/scheduler.js';

/** The answer to a POST, or why there was none (status 0). */
export interface PostAnswer {
  /** HTTP status; 0 when no answer arrived (refused, reset, timed out). */
  status: number;
  /** The answer body, cut at the limit. */
  body: Buffer;
  /** Why there is no answer. */
  error?: string;
}

/** How one exchange ended: `sent` says whether the request was let out (and so counts as an attempt). */
export interface PostOutcome extends PostAnswer {
  sent: boolean;
}

/** Keep-alive agents of one emulator's callback dispatcher. */
export interface PostAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/** Sockets per callback target; the dispatcher starts no more attempts per target than this, so none waits in the agent's queue. */
export const MAX_SOCKETS_PER_TARGET = 128;

/** Agents that reuse connections to callback targets (at most MAX_SOCKETS_PER_TARGET each); `ca` is trusted besides the system roots. */
export function createPostAgents(ca?: string[]): PostAgents {
  const http = new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_TARGET });
  const https = new HttpsAgent({
    keepAlive: true,
    maxSockets: MAX_SOCKETS_PER_TARGET,
    ...(ca?.length ? { ca: [...rootCertificates, ...ca] } : {}),
  });
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}

/** One exchange under way. */
export interface PostHandle {
  /** Settles once: the answer, or why there is none, and whether the request went out. */
  readonly done: Promise<PostOutcome>;
  /** Lets the request out once it is on a socket (`onSocket` was called); `false` drops it unsent with `why`. */
  release(go: boolean, why?: string): void;
  /** Ends the exchange now (shutdown): an unsent request stays unsent; a sent one fails with `why`. */
  abort(why: string): void;
}

/** What one exchange needs. */
interface PostOptions {
  agents: PostAgents;
  /** The deadline of the whole exchange once the request is released onto its socket: a connect still under way, headers and body. */
  timeoutMs: number;
  /** How long the request may wait for a socket (the agent's queue); then it is dropped unsent, not charged to the receiver. */
  socketWaitMs: number;
  /** Bytes of the answer kept; the rest is read and dropped (the deadline still cuts an endless body). */
  limit: number;
  /** The timers: the deadline and the socket wait are plain timer handles held until the exchange settles. */
  timers: Pick<Scheduler, 'after'>;
  /** Called once the request is on a socket: nothing is written until `release(true)`. */
  onSocket(): void;
}

/**
 * POSTs a body exactly as given (no form encoding: CB-RAW-BODY) and reads at most `limit` bytes of
 * the answer, in two steps: the request waits for a socket (bounded by `socketWaitMs`), then for
 * `release` (the caller counts the attempt first), then goes out. The deadline starts at the release
 * (neither the wait for a socket nor the caller's count is the receiver's time) and covers the rest of
 * the exchange: a connect still under way, the answer's headers and its whole body. It is a timer
 * handle this exchange holds until it settles, so no garbage collection can lose it (an
 * `AbortSignal.timeout` held by nothing can be collected before it fires). Never rejects.
 */
export function startPost(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): PostHandle {
  const exchange = new PostExchange(Buffer.from(body, 'utf8'), options);
  exchange.open(url, headers);
  return exchange;
}

/** One POST from the wait for a socket to its outcome; `done` settles exactly once. */
class PostExchange implements PostHandle {
  readonly done: Promise<PostOutcome>;
  readonly #payload: Buffer;
  readonly #options: PostOptions;
  #resolveDone!: (outcome: PostOutcome) => void;
  #settled = false;
  #released = false;
  #hasSocket = false;
  /** An error before the release (a refused connect, a bad URL): the attempt's outcome once released. */
  #earlyError: string | undefined;
  #cancelWait: (() => void) | undefined;
  #cancelDeadline: (() => void) | undefined;
  #request: ClientRequest | undefined;
  #response: IncomingMessage | undefined;

  constructor(payload: Buffer, options: PostOptions) {
    this.#payload = payload;
    this.#options = options;
    this.done = new Promise<PostOutcome>((resolve) => (this.#resolveDone = resolve));
  }

  release(go: boolean, why?: string): void {
    if (this.#settled || this.#released) return;
    if (!go) return this.#finish(0, Buffer.alloc(0), why ?? 'not sent', false);
    this.#released = true;
    // An error before the release (a refused connect) is this attempt's outcome.
    if (this.#earlyError !== undefined) return this.#fail(this.#earlyError);
    const { timers, timeoutMs } = this.#options;
    this.#cancelDeadline = timers.after(timeoutMs, () =>
      this.#fail(
        this.#response
          ? `timed out: HTTP ${this.#response.statusCode ?? '?'} arrived, but its body did not end within the callback timeout (${timeoutMs} ms)`
          : `timed out: no answer within the callback timeout (${timeoutMs} ms)`,
      ),
    );
    this.#request?.end(this.#payload);
  }

  abort(why: string): void {
    this.#fail(this.#released ? `cut: ${why}` : `not sent: ${why}`);
  }

  /** Creates the request and waits for a socket; a URL or request that cannot be made is an early error. */
  open(url: string, headers: Record<string, string>): void {
    const options = this.#options;
    const target = targetOf(url);
    if (!target) {
      this.#earlyError = `not a URL: ${url}`;
      queueMicrotask(() => options.onSocket());
      return;
    }
    const send = target.secure ? httpsRequest : httpRequest;
    let request: ClientRequest;
    try {
      request = send({
        ...target.options,
        method: 'POST',
        agent: target.secure ? options.agents.https : options.agents.http,
        headers: { ...headers, 'content-length': String(this.#payload.length) },
      });
    } catch (error) {
      this.#earlyError = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      queueMicrotask(() => options.onSocket());
      return;
    }
    this.#request = request;
    this.#cancelWait = options.timers.after(options.socketWaitMs, () => {
      if (!this.#hasSocket)
        this.#finish(
          0,
          Buffer.alloc(0),
          `not sent: no free connection to ${target.origin} within ${options.socketWaitMs} ms`,
          false,
        );
    });
    request.on('socket', () => {
      if (this.#settled) return;
      this.#socketReady();
    });
    request.on('response', (response) => this.#read(response));
    request.on('error', (error) => this.#requestError(error));
    request.on('close', () => {
      if (this.#released && !this.#response) this.#fail('connection closed without an answer');
    });
  }

  /** The request has a socket (or failed before getting one): the caller counts it, then releases it. */
  #socketReady(): void {
    this.#hasSocket = true;
    this.#cancelWait?.();
    this.#cancelWait = undefined;
    this.#options.onSocket();
  }

  /** Reads the answer, keeping at most `limit` bytes; the rest is read and dropped. */
  #read(response: IncomingMessage): void {
    this.#response = response;
    const { limit } = this.#options;
    const chunks: Buffer[] = [];
    let received = 0;
    response.on('data', (chunk: Buffer) => {
      if (received >= limit) return;
      received += chunk.length;
      chunks.push(chunk);
    });
    response.on('end', () => this.#finish(response.statusCode ?? 0, Buffer.concat(chunks).subarray(0, limit)));
    response.on('error', (error) => this.#fail((error as NodeJS.ErrnoException).code ?? error.message));
    response.on('aborted', () => this.#fail('answer aborted'));
  }

  #requestError(error: Error): void {
    const why = (error as NodeJS.ErrnoException).code ?? error.message;
    if (this.#released) return this.#fail(why);
    this.#earlyError ??= why;
    // Failed before any socket was handed out: still an attempt, counted once released.
    if (!this.#hasSocket && !this.#settled) this.#socketReady();
  }

  #fail(error: string): void {
    this.#finish(0, Buffer.alloc(0), error);
  }

  #finish(status: number, answer: Buffer, error?: string, sent = this.#released): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancelWait?.();
    this.#cancelDeadline?.();
    this.#cancelWait = undefined;
    this.#cancelDeadline = undefined;
    if (status === 0) {
      this.#response?.destroy();
      this.#request?.destroy();
    }
    this.#resolveDone({ status, body: answer, sent, ...(error === undefined ? {} : { error }) });
  }
}

/** A callback URL as request options, parsed once per URL (a delivery's every attempt goes to the same few URLs). */
interface Target {
  secure: boolean;
  origin: string;
  options: { protocol: string; hostname: string; port: string; path: string };
}

const TARGETS = new Map<string, Target | null>();
const TARGET_CACHE = 256;

function targetOf(url: string): Target | undefined {
  let target = TARGETS.get(url);
  if (target === undefined) {
    try {
      const parsed = new URL(url);
      // A bracketed IPv6 host is given to node:http without its brackets.
      const hostname = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
      target = {
        secure: parsed.protocol === 'https:',
        origin: parsed.origin,
        options: { protocol: parsed.protocol, hostname, port: parsed.port, path: `${parsed.pathname}${parsed.search}` },
      };
    } catch {
      target = null;
    }
    if (TARGETS.size >= TARGET_CACHE) TARGETS.clear();
    TARGETS.set(url, target);
  }
  return target ?? undefined;
}
