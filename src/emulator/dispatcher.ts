import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { realScheduler, type Scheduler } from '../core/scheduler.js';
import { readAcknowledgement } from '../wire/acknowledgement.js';
import { callbackHeaders, sealCallback, spelledHeaders, withRequestUUID } from '../wire/callback-delivery.js';
import type { EmulatorConfig, EmulatorMerchant } from './config.js';
import { merchantKey, type EmulatorClock, type EmulatorLog, type EmulatorRandom } from './context.js';
import { createPostAgents, postRaw, type PostAnswer } from './http-post.js';
import type { AttemptRecord, DeliveryUpdate, DueDelivery, EmulatorStore } from './store.js';
import type { DeliveryVariant } from './variant.js';

/**
 * Sets the dispatcher's timer: calls `run` once, `ms` from now, and returns its cancel (the shared
 * Scheduler's `after`). Default: `setTimeout`. A test passes a ManualScheduler together with `now`,
 * so no test waits on a lease.
 */
export type DispatcherScheduler = Pick<Scheduler, 'after'>;

/** Real time: `setTimeout`. */
const realTimers: DispatcherScheduler = realScheduler;

/** What the dispatcher works with. */
export interface DispatcherOptions {
  store: EmulatorStore;
  merchants: ReadonlyMap<number, EmulatorMerchant>;
  callbacks: EmulatorConfig['callbacks'];
  /** Seams of a deliberately different dispatcher (the toolkit's own tests); absent: none. */
  variant?: DeliveryVariant | undefined;
  now: EmulatorClock;
  /** The timer for the next due delivery, set `nextDueAt - now()` ahead (default: real timers). */
  scheduler?: DispatcherScheduler | undefined;
  random: EmulatorRandom;
  log?: EmulatorLog | undefined;
}

/** Deliveries claimed per tick; the next tick follows at once when more are due. */
const BATCH = 256;
/** Attempts of one delivery that may go unrecorded before this process stops sending it. */
const MAX_UNRECORDED = 3;
/** Bytes of a merchant's answer kept for the verdict and the log. */
const ANSWER_LIMIT = 64 * 1024;

/**
 * The callback dispatcher: a durable queue in the store, a timer for the next due delivery, and one
 * POST per attempt, sealed and addressed as src/wire/callback-delivery.ts says. CB-HEADERS,
 * CB-RAW-BODY, CB-KEY-SAME; a fresh requestUUID per attempt (CB-UUID) and one trackingId per event;
 * CB-ERRCODE: an answer with errCode the number 0 ends a delivery (`judgeAttempt`), anything else is
 * retried on the schedule (U-RETRY), never after an acknowledgement.
 */
export class CallbackDispatcher {
  readonly #o: DispatcherOptions;
  readonly #agents: ReturnType<typeof createPostAgents>;
  readonly #inFlight = new Map<string, AbortController>();
  readonly #running = new Set<Promise<void>>();
  /** Deliveries whose attempts could not be recorded, with how many times in a row. */
  readonly #unrecorded = new Map<string, number>();
  /** Cancels the timer for the next due delivery, while one is set. */
  #timer: (() => void) | undefined;
  #timerAt = Infinity;
  #closed = false;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#agents = createPostAgents(options.callbacks.ca);
  }

  /** Looks for due work again (after a new event, or at start to resume the durable queue). */
  wake(): void {
    if (this.#closed) return;
    const next = this.#o.store.nextDueAt();
    if (next === undefined) return;
    if (this.#timer !== undefined && this.#timerAt <= next) return;
    this.#timer?.();
    this.#timerAt = next;
    this.#timer = (this.#o.scheduler ?? realTimers).after(Math.min(Math.max(0, next - this.#o.now()), 2 ** 31 - 1), () => this.#tick());
  }

  /** Deliveries being sent right now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Stops: no new attempts; sends in flight are cancelled and stay queued (delivered after a restart). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.();
    this.#timer = undefined;
    for (const controller of this.#inFlight.values()) controller.abort();
    await Promise.allSettled([...this.#running]);
    this.#agents.destroy();
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#closed) return;
    const now = this.#o.now();
    const due = this.#o.store.claimDue(now, BATCH, now + this.#o.callbacks.timeoutMs + 1_000);
    for (const delivery of due) {
      if ((this.#unrecorded.get(`${delivery.eventId}:${delivery.idx}`) ?? 0) < MAX_UNRECORDED) this.#start(delivery);
    }
    this.wake();
  }

  #start(delivery: DueDelivery): void {
    const key = `${delivery.eventId}:${delivery.idx}`;
    const controller = new AbortController();
    this.#inFlight.set(key, controller);
    const running: Promise<void> = this.#deliver(delivery, controller.signal)
      .catch((error: unknown) => this.#o.log?.(`callback ${delivery.trackingId}: internal error ${(error as Error).message}`))
      .finally(() => {
        this.#inFlight.delete(key);
        this.#running.delete(running);
      });
    this.#running.add(running);
  }

  async #deliver(delivery: DueDelivery, cancel: AbortSignal): Promise<void> {
    const { store, now, random } = this.#o;
    const at = new Date(now()).toISOString();
    const merchant = this.#o.merchants.get(delivery.merchant);
    if (!merchant) {
      store.recordAttempt(delivery, { at, requestUUID: '', status: 0, answer: null, verdict: 'failed', error: `merchant ${delivery.merchant} is no longer configured` }, { state: 'exhausted' }, now());
      return;
    }
    // CB-UUID: every attempt is a delivery with its own requestUUID.
    const fresh = random.uuid();
    let requestUUID = this.#o.variant?.requestUUID ? this.#o.variant.requestUUID(fresh, delivery) : fresh;
    let answer: PostAnswer;
    try {
      const built = this.#payload(delivery, requestUUID);
      requestUUID = built.requestUUID;
      answer = await postRaw(delivery.callbackUrl, this.#headers(merchant), this.#body(merchant, built.text), {
        agents: this.#agents,
        signal: AbortSignal.any([cancel, AbortSignal.timeout(this.#o.callbacks.timeoutMs)]),
        limit: ANSWER_LIMIT,
      });
    } catch (error) {
      answer = { status: 0, body: Buffer.alloc(0), error: `cannot send: ${(error as Error).message}` };
    }
    if (cancel.aborted) {
      // Shutting down: not an answer; the delivery stays queued for the next start.
      store.releaseDelivery(delivery.eventId, delivery.idx, now());
      return;
    }
    const judged = judgeAttempt(at, requestUUID, answer);
    const { note } = judged;
    let { attempt } = judged;
    const reading = this.#o.variant?.acknowledgement;
    if (reading) attempt = { ...attempt, verdict: reading(attempt.verdict, { status: answer.status, body: answer.body.toString('utf8') }) };
    if (!this.#record(delivery, attempt)) return;
    this.#o.log?.(
      `callback ${delivery.trackingId} delivery ${delivery.idx + 1}/${delivery.deliveries} attempt ${delivery.attempts + 1} -> ${attempt.status || '-'} ${attempt.verdict}${attempt.error ? ` (${attempt.error})` : ''}${note ? ` (${note})` : ''}`,
    );
    this.wake();
  }

  /**
   * Records an attempt. An answer the store cannot hold is recorded without it; when even that
   * fails (SQLITE_BUSY, a full disk), the delivery's lease runs out and it is sent again, but only
   * MAX_UNRECORDED times per process: an unrecordable delivery must not be retried forever.
   */
  #record(delivery: DueDelivery, attempt: AttemptRecord): boolean {
    const { store, now } = this.#o;
    const update = this.#next(delivery, attempt.verdict);
    const key = `${delivery.eventId}:${delivery.idx}`;
    let failure: unknown;
    for (const record of [attempt, { ...attempt, answer: null, error: `${attempt.error ? `${attempt.error}; ` : ''}the answer could not be recorded` }]) {
      try {
        store.recordAttempt(delivery, record, update, now());
        this.#unrecorded.delete(key);
        return true;
      } catch (error) {
        failure = error;
      }
    }
    const count = (this.#unrecorded.get(key) ?? 0) + 1;
    this.#unrecorded.set(key, count);
    this.#o.log?.(
      `callback ${delivery.trackingId} delivery ${delivery.idx + 1}: attempt not recorded (${(failure as Error)?.message ?? String(failure)})` +
        (count >= MAX_UNRECORDED ? `; given up after ${count} unrecorded attempts until the emulator restarts` : '; it is sent again when its lease ends'),
    );
    return false;
  }

  /** The payload text of one attempt: the stored event with this attempt's requestUUID. */
  #payload(delivery: DueDelivery, fresh: string): { text: string; requestUUID: string } {
    const { type, requestUUID: pinned, ...rest } = parseExactJson(delivery.payload) as Record<string, ExactJson>;
    // A requestUUID in the control API's `fields` pins it (for deliberately odd events).
    const requestUUID = typeof pinned === 'string' ? pinned : fresh;
    let payload: Record<string, ExactJson | undefined> = withRequestUUID({ type, ...rest }, requestUUID);
    if (this.#o.variant?.payload) payload = this.#o.variant.payload(payload, this.#o.random, delivery);
    return { text: stringifyExact(payload), requestUUID };
  }

  /** CB-HEADERS and CB-KEY-SAME: the merchant's own main key. */
  #headers(merchant: EmulatorMerchant): Record<string, string> {
    const headers = callbackHeaders(merchant.apiKey);
    return spelledHeaders(this.#o.variant?.headers ? this.#o.variant.headers(headers, merchant) : headers);
  }

  /** CB-RAW-BODY: the Base64 text itself, encrypted with the half the profile names (CB-DECRYPT). */
  #body(merchant: EmulatorMerchant, text: string): string {
    const sealed = sealCallback(text, merchantKey(merchant, 'private'), merchant.profile);
    return this.#o.variant?.body ? this.#o.variant.body(sealed, { text, merchant }) : sealed;
  }

  /** What follows an attempt (CB-ERRCODE, U-RETRY). */
  #next(delivery: DueDelivery, verdict: AttemptRecord['verdict']): DeliveryUpdate {
    const update = this.#conformingNext(delivery, verdict);
    const hook = this.#o.variant?.next;
    return hook ? hook(update, { delivery, verdict, now: this.#o.now(), delayMs: this.#delay(delivery, delivery.attempts + 1) }) : update;
  }

  #conformingNext(delivery: DueDelivery, verdict: AttemptRecord['verdict']): DeliveryUpdate {
    const { now } = this.#o;
    const attempt = delivery.attempts + 1;
    const max = delivery.retryDelaysMs ? delivery.retryDelaysMs.length + 1 : this.#o.callbacks.retry.maxAttempts;
    // A delivery acknowledged once stays acknowledged, whatever a later attempt got (never retried after an acknowledgement).
    if (verdict === 'acknowledged' || delivery.acked) return { state: 'acknowledged' };
    if (attempt >= max) return { state: 'exhausted' };
    return { state: 'pending', nextAt: now() + this.#delay(delivery, attempt) };
  }

  /** The wait after attempt n: the event's retryDelaysMs, else min(initial × factor^(n-1), max). */
  #delay(delivery: DueDelivery, attempt: number): number {
    if (delivery.retryDelaysMs) return delivery.retryDelaysMs[attempt - 1] ?? delivery.retryDelaysMs.at(-1) ?? 0;
    const { initialDelayMs, factor, maxDelayMs } = this.#o.callbacks.retry;
    return Math.min(maxDelayMs, Math.round(initialDelayMs * factor ** (attempt - 1)));
  }
}

/**
 * One attempt as the emulator records it (CB-ERRCODE, read by src/wire/acknowledgement.ts), with a
 * note for the log when the answer is ambiguous. The emulator's reading of U-CB-RESPONSE: an
 * ambiguous answer (errCode the number 0 with another status than 200, or 0 written `0.0`) is
 * counted as acknowledged, since the rule asks only for errCode equal to 0; the note says so, and
 * the record keeps the status and the answer as written, so the reading stays visible.
 */
export function judgeAttempt(at: string, requestUUID: string, answer: PostAnswer): { attempt: AttemptRecord; note?: string } {
  if (answer.status === 0) return { attempt: { at, requestUUID, status: 0, answer: null, verdict: 'failed', error: answer.error ?? 'no answer' } };
  const text = answer.body.toString('utf8');
  let json: ExactJson | undefined;
  try {
    if (text.length > 0) json = parseExactJson(text);
  } catch {
    // Not JSON: the record keeps the text.
  }
  const read = readAcknowledgement({ status: answer.status, body: text, json });
  const attempt: AttemptRecord = { at, requestUUID, status: answer.status, answer: text.length === 0 ? null : json === undefined ? text : json, verdict: read.verdict === 'not-acknowledged' ? 'rejected' : 'acknowledged' };
  return read.verdict === 'ambiguous' ? { attempt, note: `counted as acknowledged, ambiguous under U-CB-RESPONSE: ${read.reason}` } : { attempt };
}
