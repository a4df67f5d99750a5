import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { DEFAULT_BODY_LIMIT, readBody, sendJson } from '../platform/http-io.js';
import { DEFAULT_PROFILE, type CryptoProfile } from '../core/profile.js';
import { validateSchema } from '../core/schemas.js';
import { assertKeyHalf, openJson, type OpenedJson } from '../crypto/codec.js';
import { CryptoError } from '../crypto/errors.js';
import type { RsaKey } from '../crypto/keys.js';
import { compileApiKeys, type ApiKeySpec } from './api-keys.js';
import { callbackType, idempotencyKey } from './idempotency.js';
import { every, realScheduler, type Scheduler } from '../core/scheduler.js';
import type { IdempotencyStore, StoreTransaction } from './store.js';

/** One event handed to the merchant's business processing. */
export interface CallbackEvent {
  /** Callback type: a number of the callback type table (src/spec/callback-types.ts). */
  type: number;
  /** The decrypted payload, numbers exact (LosslessNumber). */
  payload: { [field: string]: ExactJson };
  /** The decrypted JSON text exactly as received. */
  text: string;
  /** The idempotency key (CB-ID-DEPOSIT, CB-ID-WITHDRAW, CB-ID-OTHER). */
  key: string;
  /** This delivery's id: for logs only, never for idempotency (CB-UUID). */
  requestUUID: string | undefined;
  /**
   * Aborted when this delivery lost its claim (its lease could not be renewed and another delivery
   * took the event over): stop early, the answer will be non-zero whatever `process` does.
   */
  signal: AbortSignal;
}

/**
 * The merchant's business processing; throwing (or rejecting) means "not processed, retry". In
 * transactional mode (`transactional: true`) it receives the store's transaction as `tx`: writes
 * made through it commit together with the event's `done` mark, or not at all.
 */
export type ProcessCallback = (event: CallbackEvent, tx?: StoreTransaction) => unknown;

/** Everything the receiver needs. */
export interface CallbackHandlerOptions {
  /** Valid `X-API-KEY` values (CB-KEY-SAME), each optionally with a validity window. */
  apiKeys: readonly ApiKeySpec[];
  /** The key that opens callbacks: the merchant's public key under the default profile (CB-DECRYPT). */
  publicKey: RsaKey;
  /** The crypto profile of the callbacks (default: pkcs1, callbacks encrypted with the private key). */
  profile?: CryptoProfile;
  store: IdempotencyStore;
  process: ProcessCallback;
  /**
   * Transactional mode: `process(event, tx)` writes its business effect through the store's
   * transaction, which also marks the event done, so the effect happens exactly once even when a
   * holder stalls past its lease or crashes mid-way. Needs a store with `completeInTransaction`.
   */
  transactional?: boolean;
  /** Largest accepted body in bytes (default 64 KiB). */
  bodyLimit?: number;
  /** How long a delivery waits for a concurrent delivery of the same event (default 5 s). */
  busyWaitMs?: number;
  /** Receives one line per delivery: processed, duplicate, rejected, ... */
  log?: (line: string) => void;
  /** The clock for key validity windows (ms since the epoch). */
  now?: () => number;
  /**
   * The timers of the receiver's own waits: a delivery waiting for a concurrent one (`busyWaitMs`,
   * the re-checks of a shared store) and the lease renewal while `process` runs. Default: real
   * time. Tests pass a ManualScheduler (`core/manual-scheduler.ts`) and move its time by hand.
   */
  scheduler?: Scheduler;
}

/** The body of every answer: `errCode` 0 means processed or duplicate (CB-ERRCODE). */
interface MerchantAnswer {
  errCode: number;
  message: string;
}

/** What happened to one delivery. */
type CallbackOutcome =
  'processed' | 'duplicate' | 'unauthorized' | 'too-large' | 'rejected' | 'failed' | 'busy' | 'lost' | 'error';

/** One delivery's answer: HTTP status, JSON body, and what happened (for logs and tests). */
interface CallbackAnswer {
  status: number;
  body: MerchantAnswer;
  outcome: CallbackOutcome;
}

/** A request whose body was already read as raw bytes (by the node:http handler or an adapter). */
interface RawCallbackRequest {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

/**
 * The receiver's non-zero errCodes (U-CB-RESPONSE: the interface fixes only errCode 0 = success).
 * They mirror the HTTP status of the same meaning so a log reader needs no table.
 */
export const ERR_CODES = {
  ok: 0,
  /** Bad Base64, wrong key, bad padding, not JSON, invalid payload: HTTP 400. */
  rejected: 400,
  /** X-API-KEY missing, unknown or outside its validity window: HTTP 401 (CB-KEY-401). */
  unauthorized: 401,
  /** Not POST: HTTP 405. */
  methodNotAllowed: 405,
  /**
   * Another delivery of the event is still processing after the wait, or this delivery lost its
   * claim to another one (its lease ran out): HTTP 200, retry later.
   */
  busy: 409,
  /** Body over the size limit: HTTP 413. */
  tooLarge: 413,
  /** Business processing threw (HTTP 200, retry later), or the receiver failed (HTTP 500). */
  failed: 500,
} as const;

/** How often a delivery that found the event busy in another process re-checks the store. */
const BUSY_POLL_MS = 20;
/** The same with a store that notifies: only a holder that died goes unnoticed, and its lease is long. */
const NOTIFIED_POLL_MS = 250;
const DEFAULT_BUSY_WAIT_MS = 5_000;

/** The transport-free core of the receiver; adapters feed it raw bytes. */
interface CallbackReceiver {
  /** Checks `X-API-KEY` (CB-KEY-FIRST): a 401 answer, or undefined when the key is valid. */
  authorize(headers: RawCallbackRequest['headers']): CallbackAnswer | undefined;
  /** The key check, then decode, decrypt, validate and process exactly once. Never throws. */
  handle(request: RawCallbackRequest): Promise<CallbackAnswer>;
  /** The same after a successful `authorize` (the body is not looked at before it). */
  receive(body: Buffer): Promise<CallbackAnswer>;
  /** Logs and builds the answer to a failure outside the pipeline (e.g. an unreadable body). */
  answer(outcome: CallbackOutcome, status: number, errCode: number, message: string, detail?: string): CallbackAnswer;
  /** The body limit in bytes. */
  readonly bodyLimit: number;
}

/** What the receiver's steps share: the options resolved once, the answer builder, the deliveries in flight. */
interface ReceiverScope {
  options: CallbackHandlerOptions;
  profile: CryptoProfile;
  busyWaitMs: number;
  scheduler: Scheduler;
  /** Deliveries of an event being processed in this process, so concurrent twins wait on it directly. */
  inFlight: Map<string, Promise<void>>;
  answer: CallbackReceiver['answer'];
}

/**
 * Builds the transport-free receiver: pass it a raw body from any framework.
 *
 * @example const answer = await createCallbackReceiver(options).handle({ headers: req.headers, body: rawBytes })
 */
export function createCallbackReceiver(options: CallbackHandlerOptions): CallbackReceiver {
  const profile = options.profile ?? DEFAULT_PROFILE;
  // A key of the wrong half would reject every callback: refuse it at start-up instead.
  assertKeyHalf(options.publicKey, 'callback', 'decrypt', profile);
  const checkKey = compileApiKeys(options.apiKeys);
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => undefined);
  const busyWaitMs = options.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS;
  const scheduler = options.scheduler ?? realScheduler;
  if (options.transactional && !options.store.completeInTransaction) {
    throw new TypeError(
      'transactional mode needs a store with completeInTransaction (the SQLite, PostgreSQL and memory stores have it)',
    );
  }
  const answer: CallbackReceiver['answer'] = (outcome, status, errCode, message, detail) => {
    log(`${outcome}${detail ? ` ${oneLine(detail)}` : message ? `: ${oneLine(message)}` : ''}`);
    return { status, body: { errCode, message }, outcome };
  };
  const scope: ReceiverScope = { options, profile, busyWaitMs, scheduler, inFlight: new Map(), answer };

  const authorize: CallbackReceiver['authorize'] = (headers) => {
    const verdict = checkKey(headerValue(headers, 'x-api-key'), now());
    // CB-KEY-401; the answer never says which part of the check failed, the log does.
    return verdict.ok
      ? undefined
      : answer('unauthorized', 401, ERR_CODES.unauthorized, 'unauthorized', `(${verdict.why})`);
  };

  const receive = async (body: Buffer): Promise<CallbackAnswer> => {
    try {
      if (body.length > receiver.bodyLimit)
        return answer('too-large', 413, ERR_CODES.tooLarge, `the body exceeds ${receiver.bodyLimit} bytes`);
      const event = openEvent(scope, body);
      if ('outcome' in event) return event;
      return await exactlyOnce(scope, event);
    } catch (error) {
      // Never crash, never a stack trace to the sender: a bug or a store failure is a 500 (CB-AVAILABLE).
      return answer(
        'error',
        500,
        ERR_CODES.failed,
        'internal error: the event was not processed',
        `(${(error as Error)?.message ?? String(error)})`,
      );
    }
  };

  const receiver: CallbackReceiver = {
    authorize,
    receive,
    answer,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    async handle(request) {
      return authorize(request.headers) ?? receive(request.body);
    },
  };
  return receiver;
}

/** A 400 answer: the body did not open, or what it holds is not a valid callback. */
function reject(scope: ReceiverScope, reason: string, message: string): CallbackAnswer {
  return scope.answer('rejected', 400, ERR_CODES.rejected, `${reason}: ${message}`);
}

/** Decrypts and validates a body into the event it carries, with its idempotency key; or the 400 answer. */
function openEvent(scope: ReceiverScope, body: Buffer): CallbackEvent | CallbackAnswer {
  const { options, profile } = scope;
  let opened: OpenedJson;
  try {
    // CB-RAW-BODY, CB-DECRYPT: the raw bytes are the Base64 text itself. Strict: no trimming of
    // a trailing line end or whitespace, because the interface's Base64 has none and a lenient
    // reference would hide exactly the sender bugs a conformance run must show. latin1 maps
    // every byte to one character, so a stray byte is reported, never silently replaced.
    opened = openJson(body.toString('latin1'), 'callback', options.publicKey, { profile });
  } catch (error) {
    if (error instanceof CryptoError) return reject(scope, error.reason, error.message);
    throw error;
  }
  const payload = opened.value;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload) || payload instanceof LosslessNumber) {
    return reject(scope, 'invalid-payload', 'the decrypted JSON is not an object');
  }
  const issues = validateSchema('CallbackPayload', payload);
  if (issues.length > 0) {
    const first = issues
      .slice(0, 3)
      .map((issue) => `${issue.message}${issue.rules.length ? ` [${issue.rules.join(', ')}]` : ''}`);
    return reject(
      scope,
      'invalid-payload',
      first.join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : ''),
    );
  }
  try {
    const requestUUID = typeof payload.requestUUID === 'string' ? payload.requestUUID : undefined;
    return {
      type: callbackType(payload),
      payload,
      text: opened.text,
      key: idempotencyKey(payload),
      requestUUID,
      signal: new AbortController().signal,
    };
  } catch (error) {
    return reject(scope, 'invalid-payload', (error as Error).message);
  }
}

/** Claims the event and processes it once; a duplicate is acknowledged, a busy twin waited for. */
async function exactlyOnce(scope: ReceiverScope, event: CallbackEvent): Promise<CallbackAnswer> {
  const { options, scheduler, inFlight, answer } = scope;
  const about = `${event.key} (type ${event.type}, requestUUID ${event.requestUUID ?? '-'})`;
  const deadline = scheduler.now() + scope.busyWaitMs;
  for (;;) {
    const claim = await options.store.claim(event.key, event.text);
    // CB-DUP-ACK: a duplicate is acknowledged at once and not processed again.
    if (claim.state === 'processed') return answer('duplicate', 200, ERR_CODES.ok, '', about);
    if (claim.state === 'claimed') return run(scope, event, claim.token, about);
    // Busy: another delivery of this event is processing it. Waiting for it (rather than answering
    // a non-zero errCode at once) turns a burst of concurrent twins into duplicates acknowledged
    // with errCode 0 as soon as the first one finishes; if that one fails, a waiter claims the
    // event and processes it itself. Only when the wait runs out is the answer non-zero (409), so
    // the service retries and nothing is lost or falsely acknowledged (CB-NO-FALSE-ACK).
    const remaining = deadline - scheduler.now();
    if (remaining <= 0) {
      return answer(
        'busy',
        200,
        ERR_CODES.busy,
        'another delivery of this event is still being processed; retry later',
        about,
      );
    }
    const local = inFlight.get(event.key);
    // In another process there is nothing to wait on but the store: its notification when it has
    // one (PostgreSQL), with a slower poll behind it for a holder that died or a notification
    // sent just before this wait began; else a fast poll.
    const notified = local ? undefined : options.store.settled?.(event.key, remaining);
    let cancel = (): void => undefined;
    const pause = new Promise<void>(
      (resolve) =>
        (cancel = scheduler.after(
          local ? remaining : Math.min(notified ? NOTIFIED_POLL_MS : BUSY_POLL_MS, remaining),
          resolve,
        )),
    );
    await Promise.race([local ?? notified ?? pause, pause]);
    cancel();
  }
}

/** Processes a claimed event under a renewed lease, then marks it done (or releases it when processing failed). */
async function run(
  scope: ReceiverScope,
  claimed: CallbackEvent,
  token: number,
  about: string,
): Promise<CallbackAnswer> {
  const { options, scheduler, inFlight, answer } = scope;
  let settle = () => undefined as void;
  const mine = new Promise<void>((resolve) => (settle = resolve));
  inFlight.set(claimed.key, mine);
  const lost = new AbortController();
  const event = { ...claimed, signal: lost.signal };
  const store = options.store;
  // Keep the claim alive while process runs: renew at a third of the lease, so two renewals may
  // fail before another delivery can take it over. A failed renewal means the claim is gone.
  const stopRenewal = every(scheduler, Math.max(1, Math.floor(store.leaseMs / 3)), () => {
    store.renew(event.key, token).then(
      (held) => (held ? undefined : lost.abort(new Error('the claim was lost'))),
      () => undefined,
    );
  });
  const lostAnswer = () =>
    answer(
      'lost',
      200,
      ERR_CODES.busy,
      'this delivery lost its claim on the event to another delivery (lease expired); retry later',
      `${about}: claim lost`,
    );
  try {
    let committed: boolean | undefined;
    try {
      if (options.transactional) {
        // Exactly-once: the business writes and the fenced done mark commit together or not at all.
        committed =
          (await store.completeInTransaction!(event.key, token, (tx) => options.process(event, tx))).state === 'done';
      } else {
        await options.process(event);
      }
    } catch (error) {
      stopRenewal();
      // Not processed: end the claim so the service's retry processes it (CB-ERRCODE). A stale
      // token releases nothing, so a slow holder never frees another delivery's claim.
      await store.release(event.key, token);
      const why = oneLine((error as Error)?.message ?? String(error));
      return answer('failed', 200, ERR_CODES.failed, `processing failed: ${why}`, `${about}: ${why}`);
    }
    stopRenewal();
    committed ??= await store.complete(event.key, token);
    // CB-NO-FALSE-ACK: errCode 0 only when this delivery's done mark is durable.
    if (!committed) return lostAnswer();
    return answer('processed', 200, ERR_CODES.ok, '', about);
  } finally {
    stopRenewal();
    // Waiters re-claim only after complete/release, so they see the settled state. A holder
    // that lost its claim leaves the entry of the delivery that took it over.
    if (inFlight.get(event.key) === mine) inFlight.delete(event.key);
    settle();
  }
}

/** A node:http request that a framework may have read already (see adapters.ts). */
type MaybeParsedRequest = IncomingMessage & { rawBody?: unknown; body?: unknown };

/**
 * The receiver as a node:http request handler (also an Express handler). It never throws and never
 * leaves a request unanswered.
 *
 * @example createServer(createCallbackHandler({ apiKeys: ['k'], publicKey, store, process: async (e) => save(e) }))
 */
export function createCallbackHandler(
  options: CallbackHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const receiver = createCallbackReceiver(options);
  return (req, res) => {
    serveCallback(receiver, req, res).catch((error: unknown) => {
      // serveCallback answers every failure itself; this is the last guard against a crash.
      if (!res.headersSent) sendJson(res, 500, { errCode: ERR_CODES.failed, message: 'internal error' });
      else res.destroy(error as Error);
    });
  };
}

/** Serves one request with a receiver: method, key first, raw body, then the pipeline. */
export async function serveCallback(
  receiver: CallbackReceiver,
  req: MaybeParsedRequest,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'POST') {
    req.resume();
    return send(
      res,
      receiver.answer(
        'rejected',
        405,
        ERR_CODES.methodNotAllowed,
        `method ${req.method ?? '?'} not allowed; callbacks are POST`,
      ),
      {
        allow: 'POST',
      },
    );
  }
  // The Content-Type is not checked: CB-HEADERS binds the sender, and the raw body is what counts.
  // CB-KEY-FIRST: the key is checked before a byte of the body is read or decoded.
  const denied = receiver.authorize(req.headers);
  if (denied) {
    req.resume();
    return send(res, denied, { connection: 'close' });
  }
  const body = await rawBody(receiver, req);
  if (!Buffer.isBuffer(body)) {
    if (body === 'aborted') {
      receiver.answer('rejected', 400, ERR_CODES.rejected, 'the sender closed the connection before the body ended');
      res.destroy();
      return;
    }
    return send(res, body, { connection: 'close' });
  }
  return send(res, await receiver.receive(body));
}

/** The raw body bytes, from a framework that kept them or from the stream itself. */
async function rawBody(
  receiver: CallbackReceiver,
  req: MaybeParsedRequest,
): Promise<Buffer | CallbackAnswer | 'aborted'> {
  // A global parser that kept the raw bytes (Express `verify`, Fastify `parseAs: 'buffer'`).
  if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
  // `express.raw()` puts the bytes in req.body.
  if (Buffer.isBuffer(req.body)) return req.body;
  if (req.readableEnded) {
    // A body parser consumed the stream and kept no raw bytes: a form parser turned '+' into ' ',
    // so the body is gone (CB-RAW-BODY). The application must be fixed: say how.
    return receiver.answer(
      'error',
      500,
      ERR_CODES.failed,
      'raw body unavailable: a body parser consumed the request; mount express.raw({ type: "*/*" }) on the callback route before any global parser, or keep the bytes as req.rawBody',
    );
  }
  const read = await readBody(req, receiver.bodyLimit);
  if (read.ok) return read.body;
  if (read.reason === 'aborted') return 'aborted';
  return receiver.answer('too-large', 413, ERR_CODES.tooLarge, `the body exceeds ${receiver.bodyLimit} bytes`);
}

function send(res: ServerResponse, answer: CallbackAnswer, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  sendJson(res, answer.status, answer.body, headers);
}

/** The value of a header, looked up case-insensitively for adapters whose headers are not lower-cased. */
function headerValue(headers: RawCallbackRequest['headers'], name: string): string | string[] | undefined {
  if (name in headers) return headers[name];
  const found = Object.keys(headers).find((key) => key.toLowerCase() === name);
  return found === undefined ? undefined : headers[found];
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 500);
}
