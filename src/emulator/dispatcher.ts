import { randomBytes } from 'node:crypto';
import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { realScheduler, type Scheduler } from '../core/scheduler.js';
import { readAcknowledgement } from '../wire/acknowledgement.js';
import { callbackHeaders, spelledHeaders, withRequestUUID } from '../wire/callback-delivery.js';
import type { EmulatorConfig, EmulatorMerchant } from './config.js';
import { merchantKey, type EmulatorClock, type EmulatorLog, type EmulatorRandom } from './emulator-context.js';
import {
  createPostAgents,
  MAX_SOCKETS_PER_TARGET,
  startPost,
  type PostAnswer,
  type PostHandle,
  type PostOutcome,
} from './http-post.js';
import type {
  AttemptRecord,
  ClaimDecision,
  ClaimedDelivery,
  DeliveryUpdate,
  DueDelivery,
  SendVerdict,
} from './outbox.js';
import { OutboxWriter, WRITE_RETRY_MS, type WriteResult } from './outbox-writer.js';
import type { EmulatorStore } from './store.js';
import { SealerStopped, SealPool, type CallbackSealer } from './seal-pool.js';
import type { DeliveryVariant } from './variant.js';

/**
 * Sets the dispatcher's timer: calls `run` once, `ms` from now, and returns its cancel (the shared
 * Scheduler's `after`). Default: `setTimeout`. A test passes a ManualScheduler together with `now`,
 * so no test waits on a lease.
 */
type DispatcherScheduler = Pick<Scheduler, 'after'>;

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
  /**
   * Where callbacks are sealed (default: a SealPool of worker threads with a low-priority spare,
   * started with the dispatcher and stopped by `close`). A sealer passed in is the caller's to close.
   */
  sealer?: CallbackSealer | undefined;
}

/**
 * Due deliveries claimed per tick: each is sealed in the tick, so a small chunk lets answers and
 * sends of other attempts run between chunks; the next tick follows at once when more are due.
 */
const CLAIM_CHUNK = 16;
/** Events whose payload text is kept ready (all but the requestUUID), so an attempt does not parse and write the JSON again. */
const TEMPLATE_CACHE = 1_024;
/** Bytes of a merchant's answer kept for the verdict and the log. */
const ANSWER_LIMIT = 64 * 1024;
/** While every due delivery waits for a free connection, look again this often (a settled attempt wakes it sooner). */
const BLOCKED_POLL_MS = 250;
/** An attempt that never went out (no connection within the wait) is due again after this long. */
const UNSENT_RETRY_MS = 1_000;

/** One attempt from its claim until its outcome is written. */
interface Attempt {
  key: string;
  origin: string;
  delivery: ClaimedDelivery;
  merchant: EmulatorMerchant;
  requestUUID: string;
  /** Why it cannot go out (a payload that could not be built): recorded as a failed attempt once counted. */
  early?: string;
  post?: PostHandle;
  sentAt?: number;
  /** queued: claimed; counting: its send is in the outbox; sent: out; settling: its outcome is in the outbox. */
  phase: 'queued' | 'counting' | 'sent' | 'settling' | 'done';
  /** The store refused to count it (acknowledged, capped, changed): its row is already written. */
  refused?: SendVerdict;
}

/**
 * The callback dispatcher: a durable queue in the store, a timer for the next due delivery, and one
 * POST per attempt, sealed and addressed as src/wire/callback-delivery.ts says. CB-HEADERS,
 * CB-RAW-BODY, CB-KEY-SAME; a fresh requestUUID per attempt (CB-UUID) and one trackingId per event;
 * CB-ERRCODE: an answer with errCode the number 0 ends a delivery (`judgeAttempt`, over
 * src/wire/acknowledgement.ts), anything else is retried on the schedule (U-RETRY), never after an
 * acknowledgement.
 *
 * Each attempt is a row from its claim: `queued`, then `sent` once it is on a socket and counted
 * against maxAttempts (the store counts it only while the delivery is still pending, unchanged since
 * the claim and under the cap, so an acknowledged delivery is never sent again and the cap is hard),
 * then its outcome. Sealing (RSA, the main cost per attempt) runs in worker threads (`SealPool`),
 * so this thread only sends, reads answers and writes the store; it claims no more deliveries than
 * the sealer's queue takes. No more attempts per target are started than the agent has sockets, so no
 * request waits in the agent's queue; the deadline starts when the request is let out (after its
 * count) and covers a connect still under way, headers and body. Writes are batched: one
 * transaction per turn of the event loop, not one per attempt, and under load at most one per
 * BATCH_WINDOW_MS.
 */
export class CallbackDispatcher {
  readonly #options: DispatcherOptions;
  readonly #agents: ReturnType<typeof createPostAgents>;
  readonly #timers: DispatcherScheduler;
  /** Attempts from claim until their outcome is written, by `eventId:idx`: such a delivery is never claimed again by this process. */
  readonly #inFlight = new Map<string, Attempt>();
  /** Attempts under way per target origin (at most MAX_SOCKETS_PER_TARGET). */
  readonly #perOrigin = new Map<string, number>();
  readonly #running = new Set<Promise<void>>();
  readonly #outbox: OutboxWriter<Attempt>;
  /** The headers of every attempt, by the merchant's API key. */
  readonly #headersOf = new Map<string, Record<string, string>>();
  /** An event's payload text around its requestUUID, by event id. */
  readonly #templates = new Map<number, { before: string; after: string; pinned?: string }>();
  /** The last tick left due deliveries for want of a free connection. */
  #blocked = false;
  /** The last tick took as many due deliveries as it looked for: more may be due now (the next wake need not ask the store when). */
  #moreDue = false;
  /** Cancels the timer for the next due delivery, while one is set. */
  #timer: (() => void) | undefined;
  #timerAt = Infinity;
  #closed = false;
  readonly #sealer: CallbackSealer;
  readonly #ownSealer: boolean;
  /** The last tick found too little room in the sealer's queue: a finished seal wakes the dispatcher once there is enough. */
  #sealWait = false;
  /** The most room the sealer's queue was seen with (its size, when idle). */
  #sealCapacity = 0;
  #warm: Promise<void> = Promise.resolve();

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#timers = options.scheduler ?? realTimers;
    this.#ownSealer = options.sealer === undefined;
    if (options.sealer) this.#sealer = options.sealer;
    else {
      // The spare thread seals the overflow on CPU nothing else wants (docs/decisions/0097-spare-sealing-thread.md).
      const pool = new SealPool({ spare: true });
      // The threads load while the emulator starts, not when the first callback is due.
      this.#warm = pool.warm();
      this.#sealer = pool;
    }
    this.#sealCapacity = this.#sealer.free;
    this.#sealer.onFree(() => {
      if (!this.#sealWait || this.#sealer.free < this.#claimAtLeast()) return;
      this.#sealWait = false;
      this.wake();
    });
    this.#agents = createPostAgents(options.callbacks.ca);
    this.#outbox = new OutboxWriter<Attempt>({
      store: options.store,
      now: options.now,
      timers: this.#timers,
      log: options.log,
      underWay: () => this.#inFlight.size,
      maxAttempts: (delivery) => this.#maxAttempts(delivery),
      onWritten: (result) => this.#written(result),
    });
    // What an earlier process left open: a sent attempt's outcome is unknown (it counts), a queued one never left.
    const recovered = options.store.recoverOpenAttempts(options.now());
    if (recovered.sent + recovered.queued > 0) {
      options.log?.(
        `callback queue resumed: ${recovered.sent} attempt(s) sent before the last stop have no known outcome (recorded as failed), ${recovered.queued} queued one(s) were never sent`,
      );
    }
  }

  /**
   * Looks for due work again (after a new event, a settled attempt, or at start to resume the durable
   * queue). `dueAt`: the new event's first due instant; when the timer is already set at or before
   * it, nothing can come sooner and the store is not asked (one query less per order under load).
   */
  wake(dueAt?: number): void {
    if (this.#closed) return;
    if (dueAt !== undefined && this.#timer !== undefined && this.#timerAt <= dueAt) return;
    // Nothing can be claimed before the sealer has room: a finished seal wakes the dispatcher then
    // (one due query less per settled attempt while the sealing threads are the bottleneck).
    if (this.#sealer.free < this.#claimAtLeast()) {
      this.#sealWait = true;
      return;
    }
    const now = this.#options.now();
    let next: number | undefined;
    try {
      // After a full chunk, look again at once (a tick that finds nothing clears this and asks the store).
      next = this.#moreDue && !this.#blocked ? now : this.#options.store.nextDueAt(this.#fullMerchants());
    } catch (error) {
      this.#options.log?.(
        `callback queue: cannot read the store (${(error as Error).message}); trying again in ${WRITE_RETRY_MS} ms`,
      );
      next = now + WRITE_RETRY_MS;
    }
    if (next === undefined) return;
    if (this.#blocked && next <= now) next = now + BLOCKED_POLL_MS;
    if (this.#timer !== undefined && this.#timerAt <= next) return;
    this.#timer?.();
    this.#timerAt = next;
    this.#timer = this.#timers.after(Math.min(Math.max(0, next - now), 2 ** 31 - 1), () => this.#tick());
  }

  /** Settles once the sealing threads have loaded (at most `limitMs` from now): a start that awaits it sends its first callback without waiting for a thread. */
  async ready(limitMs = 5_000): Promise<void> {
    let cancel: (() => void) | undefined;
    await Promise.race([this.#warm, new Promise<void>((resolve) => (cancel = this.#timers.after(limitMs, resolve)))]);
    cancel?.();
  }

  /** Where this dispatcher seals callbacks (its own pool, or the caller's sealer). */
  get sealer(): CallbackSealer {
    return this.#sealer;
  }

  /** Deliveries being sent right now (claimed, outcome not yet written). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Stops: no new attempts; attempts under way are cut at once. One not sent yet is released
   * uncounted; one sent is recorded as failed ("cut: the emulator shut down") and counts, since the
   * merchant may have processed it. Either way the delivery stays pending for the next start
   * unless that attempt was its last. Keep-alive sockets are closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#timer?.();
    this.#timer = undefined;
    this.#outbox.close();
    for (const attempt of this.#inFlight.values()) {
      if (attempt.post) attempt.post.abort('the emulator shut down');
      // Counting, or still being sealed: never sent.
      else if (attempt.phase === 'counting' || attempt.phase === 'queued')
        this.#unsent(attempt, 'not sent: the emulator shut down');
    }
    // Seals not done yet are dropped (their attempts were released above); the threads stop.
    const sealerClosed = this.#ownSealer ? this.#sealer.close() : undefined;
    await Promise.allSettled([...this.#running]);
    this.#outbox.flush();
    this.#agents.destroy();
    await sealerClosed;
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#closed) return;
    const { store, now: clock, callbacks } = this.#options;
    const now = clock();
    const reserved = new Map<string, number>();
    let skipped = 0;
    let looked = 0;
    let claimed: ClaimedDelivery[];
    // No more claims than the sealer's queue takes. A queue with little room waits until half of it
    // is free: claiming one delivery per finished seal cost a transaction (and a due query) per
    // delivery; the half still queued keeps the sealing threads busy meanwhile.
    const free = this.#sealer.free;
    this.#sealCapacity = Math.max(this.#sealCapacity, free);
    const room = Math.min(CLAIM_CHUNK, free);
    if (room <= 0 || room < this.#claimAtLeast()) {
      this.#sealWait = true;
      return;
    }
    try {
      const leaseUntil = now + callbacks.timeoutMs * 2 + 1_000;
      claimed = store.claimDue(
        now,
        room,
        leaseUntil,
        (delivery) => {
          looked++;
          const decision = this.#decide(delivery, reserved);
          if (decision === 'skip') skipped++;
          return decision;
        },
        this.#fullMerchants(),
      );
    } catch (error) {
      this.#options.log?.(
        `callback queue: cannot claim due deliveries (${(error as Error).message}); trying again in ${WRITE_RETRY_MS} ms`,
      );
      this.#timerAt = now + WRITE_RETRY_MS;
      this.#timer = this.#timers.after(WRITE_RETRY_MS, () => this.#tick());
      return;
    }
    for (const delivery of claimed) this.#start(delivery);
    this.#blocked = skipped > 0;
    this.#moreDue = looked >= room;
    this.wake();
  }

  /** The fewest deliveries a tick claims while the sealer is busy: half its queue, at most a chunk, at least one. */
  #claimAtLeast(): number {
    return Math.max(1, Math.min(CLAIM_CHUNK, Math.floor(this.#sealCapacity / 2)));
  }

  /** Merchants whose callback target has every connection in use: their due deliveries are not even read until one frees. */
  #fullMerchants(): number[] {
    const full = new Set<string>();
    for (const [origin, count] of this.#perOrigin) if (count >= MAX_SOCKETS_PER_TARGET) full.add(origin);
    if (full.size === 0) return [];
    const merchants = new Set<number>();
    for (const attempt of this.#inFlight.values())
      if (full.has(attempt.origin)) merchants.add(attempt.delivery.merchant);
    return [...merchants];
  }

  /** Whether to send a due delivery now: not while this process has it under way or its target has no free connection; never past the cap. */
  #decide(delivery: DueDelivery, reserved: Map<string, number>): ClaimDecision {
    const key = keyOf(delivery);
    if (this.#inFlight.has(key)) return 'skip';
    if (!this.#options.merchants.has(delivery.merchant))
      return { finish: `not sent: merchant ${delivery.merchant} is no longer configured` };
    const max = this.#maxAttempts(delivery);
    if (delivery.attempts >= max) return { finish: `not sent: maxAttempts (${max}) reached` };
    const origin = originOf(delivery.callbackUrl);
    const taken = (this.#perOrigin.get(origin) ?? 0) + (reserved.get(origin) ?? 0);
    if (taken >= MAX_SOCKETS_PER_TARGET) return 'skip';
    reserved.set(origin, (reserved.get(origin) ?? 0) + 1);
    return 'send';
  }

  #start(delivery: ClaimedDelivery): void {
    const merchant = this.#options.merchants.get(delivery.merchant)!;
    const attempt: Attempt = {
      key: keyOf(delivery),
      origin: originOf(delivery.callbackUrl),
      delivery,
      merchant,
      requestUUID: '',
      phase: 'queued',
    };
    this.#inFlight.set(attempt.key, attempt);
    this.#perOrigin.set(attempt.origin, (this.#perOrigin.get(attempt.origin) ?? 0) + 1);
    // CB-UUID: every attempt is a delivery with its own requestUUID.
    const fresh = this.#options.random.uuid();
    attempt.requestUUID = this.#options.variant?.requestUUID
      ? this.#options.variant.requestUUID(fresh, delivery)
      : fresh;
    let text: string;
    let headers: Record<string, string>;
    try {
      const built = this.#payload(delivery, attempt.requestUUID);
      attempt.requestUUID = built.requestUUID;
      text = built.text;
      headers = this.#headers(merchant);
    } catch (error) {
      this.#cannotSend(attempt, error);
      return;
    }
    // Sealed off the event loop; the attempt stays queued (uncounted) until its body is ready.
    const sealing: Promise<void> = this.#sealer
      .seal(text, merchantKey(merchant, 'private'), merchant.profile)
      .then(
        (sealed) => {
          if (attempt.phase !== 'queued' || this.#closed) return;
          let body: string;
          try {
            body = this.#options.variant?.body ? this.#options.variant.body(sealed, { text, merchant }) : sealed;
          } catch (error) {
            return this.#cannotSend(attempt, error);
          }
          this.#send(attempt, headers, body);
        },
        (error: unknown) => {
          if (attempt.phase !== 'queued' || this.#closed) return;
          // A sealing thread that died: the attempt never went out (not counted), the delivery is due again.
          if (error instanceof SealerStopped) this.#unsent(attempt, `not sent: ${error.message}`);
          else this.#cannotSend(attempt, error);
        },
      )
      .finally(() => this.#running.delete(sealing));
    this.#running.add(sealing);
  }

  /** A payload that cannot be built or sealed: a failed attempt, once counted. */
  #cannotSend(attempt: Attempt, error: unknown): void {
    attempt.early = `cannot send: ${(error as Error).message}`;
    this.#count(attempt);
  }

  /** The sealed attempt onto a socket (counted when it gets one). */
  #send(attempt: Attempt, headers: Record<string, string>, body: string): void {
    const { delivery } = attempt;
    const post = startPost(delivery.callbackUrl, headers, body, {
      agents: this.#agents,
      timeoutMs: this.#options.callbacks.timeoutMs,
      socketWaitMs: this.#options.callbacks.timeoutMs,
      limit: ANSWER_LIMIT,
      timers: this.#timers,
      onSocket: () => this.#count(attempt),
    });
    attempt.post = post;
    const running: Promise<void> = post.done
      .then((outcome) => this.#outcome(attempt, outcome))
      .catch((error: unknown) =>
        this.#options.log?.(`callback ${delivery.trackingId}: internal error ${(error as Error).message}`),
      )
      .finally(() => this.#running.delete(running));
    this.#running.add(running);
  }

  /** On a socket: the send is counted in the next outbox write, and goes out after it. */
  #count(attempt: Attempt): void {
    if (attempt.phase !== 'queued') return;
    attempt.phase = 'counting';
    this.#outbox.count(attempt);
  }

  #outcome(attempt: Attempt, outcome: PostOutcome): void {
    if (!outcome.sent) {
      if (attempt.refused) return this.#done(attempt);
      return this.#unsent(attempt, outcome.error ?? 'not sent');
    }
    this.#settle(attempt, outcome);
  }

  /** An attempt that never went out: not counted; the delivery is due again (at once after a shutdown: at the next start). */
  #unsent(attempt: Attempt, reason: string): void {
    this.#outbox.withdraw(attempt);
    attempt.phase = 'settling';
    const now = this.#options.now();
    const { delivery } = attempt;
    this.#outbox.unsend({
      attempt,
      unsent: {
        attemptId: delivery.attemptId,
        delivery,
        reason,
        dueAt: this.#closed ? now : now + UNSENT_RETRY_MS,
        settledAt: now,
      },
      line: `callback ${delivery.trackingId} delivery ${delivery.idx + 1}/${delivery.deliveries}: ${reason} (not counted as an attempt)`,
    });
  }

  /** An attempt that went out (or failed once counted): its outcome, judged, and what follows it. */
  #settle(attempt: Attempt, answer: PostAnswer): void {
    const { delivery } = attempt;
    const now = this.#options.now();
    const at = new Date(attempt.sentAt ?? now).toISOString();
    const judged = judgeAttempt(at, attempt.requestUUID, answer);
    const { note } = judged;
    let { attempt: record } = judged;
    const reading = this.#options.variant?.acknowledgement;
    if (reading)
      record = {
        ...record,
        verdict: reading(record.verdict, { status: answer.status, body: answer.body.toString('utf8') }),
      };
    attempt.phase = 'settling';
    this.#outbox.settle({
      attempt,
      settlement: {
        attemptId: delivery.attemptId,
        delivery,
        attempt: record,
        update: this.#next(delivery, record.verdict),
        settledAt: now,
      },
      line: `callback ${delivery.trackingId} delivery ${delivery.idx + 1}/${delivery.deliveries} attempt ${delivery.attempts + 1} -> ${record.status || '-'} ${record.verdict}${record.error ? ` (${record.error})` : ''}${note ? ` (${note})` : ''}`,
    });
  }

  /** After an outbox write: written outcomes free their attempts; counted sends go out, refused ones are released. */
  #written(result: WriteResult<Attempt>): void {
    let freed = false;
    for (const item of [...result.settled, ...result.unsent]) {
      this.#options.log?.(item.line);
      this.#done(item.attempt);
      freed = true;
    }
    for (const { attempt, verdict } of result.sends) {
      if (verdict === 'sent') {
        attempt.phase = 'sent';
        attempt.sentAt = result.now;
        if (attempt.post) attempt.post.release(true);
        else this.#settle(attempt, { status: 0, body: Buffer.alloc(0), error: attempt.early ?? 'not sent' });
        continue;
      }
      this.#refused(attempt, verdict);
      freed = true;
    }
    if (freed) {
      this.#blocked = false;
      this.wake();
    }
  }

  /** A send the store did not count: it never goes out. */
  #refused(attempt: Attempt, verdict: Exclude<SendVerdict, 'sent'> | Error): void {
    const { delivery } = attempt;
    if (verdict instanceof Error) {
      // Not counted, so not sent: the delivery is due again when its lease ends.
      this.#options.log?.(
        `callback ${delivery.trackingId} delivery ${delivery.idx + 1}: not sent, the attempt could not be counted (${verdict.message})`,
      );
      attempt.refused = 'changed';
    } else {
      attempt.refused = verdict;
      const why =
        verdict === 'acknowledged'
          ? 'already acknowledged'
          : verdict === 'capped'
            ? 'maxAttempts reached'
            : 'changed since it was claimed';
      this.#options.log?.(
        `callback ${delivery.trackingId} delivery ${delivery.idx + 1}/${delivery.deliveries}: not sent (${why})`,
      );
    }
    if (attempt.post) attempt.post.release(false, 'not sent');
    else this.#done(attempt);
  }

  #done(attempt: Attempt): void {
    if (attempt.phase === 'done') return;
    attempt.phase = 'done';
    if (this.#inFlight.get(attempt.key) === attempt) this.#inFlight.delete(attempt.key);
    const left = (this.#perOrigin.get(attempt.origin) ?? 1) - 1;
    if (left > 0) this.#perOrigin.set(attempt.origin, left);
    else this.#perOrigin.delete(attempt.origin);
  }

  /** The hard cap: the event's retryDelaysMs length + 1, else the configured maxAttempts. */
  #maxAttempts(delivery: DueDelivery): number {
    return delivery.retryDelaysMs ? delivery.retryDelaysMs.length + 1 : this.#options.callbacks.retry.maxAttempts;
  }

  /** The payload text of one attempt: the stored event with this attempt's requestUUID. */
  #payload(delivery: DueDelivery, fresh: string): { text: string; requestUUID: string } {
    if (!this.#options.variant?.payload) {
      // The same text as below, from the event's template: parsed and written once per event, not per attempt.
      const template = this.#template(delivery);
      if (template) {
        const requestUUID = template.pinned ?? fresh;
        return { text: `${template.before}${JSON.stringify(requestUUID).slice(1, -1)}${template.after}`, requestUUID };
      }
    }
    const { type, requestUUID: pinned, ...rest } = parseExactJson(delivery.payload) as Record<string, ExactJson>;
    // A requestUUID in the control API's `fields` pins it (for deliberately odd events).
    const requestUUID = typeof pinned === 'string' ? pinned : fresh;
    let payload: Record<string, ExactJson | undefined> = withRequestUUID({ type, ...rest }, requestUUID);
    if (this.#options.variant?.payload)
      payload = this.#options.variant.payload(payload, this.#options.random, delivery);
    return { text: stringifyExact(payload), requestUUID };
  }

  /** The event's payload written once with a marker where the requestUUID goes (CB-UUID: the marker is replaced per attempt). */
  #template(delivery: DueDelivery): { before: string; after: string; pinned?: string } | undefined {
    const cached = this.#templates.get(delivery.eventId);
    if (cached) return cached;
    const { type, requestUUID: pinned, ...rest } = parseExactJson(delivery.payload) as Record<string, ExactJson>;
    // A random marker (not the emulator's injected randomness, which tests may count): no field can hold it by chance.
    const marker = `requestUUID-${randomBytes(16).toString('hex')}`;
    const text = stringifyExact(withRequestUUID({ type, ...rest }, marker));
    const at = text.indexOf(`"${marker}"`);
    if (at < 0) return undefined;
    const template = {
      before: text.slice(0, at + 1),
      after: text.slice(at + 1 + marker.length),
      ...(typeof pinned === 'string' ? { pinned } : {}),
    };
    if (this.#templates.size >= TEMPLATE_CACHE) this.#templates.clear();
    this.#templates.set(delivery.eventId, template);
    return template;
  }

  /** CB-HEADERS and CB-KEY-SAME: the merchant's own main key (the same for every attempt, so built once per merchant). */
  #headers(merchant: EmulatorMerchant): Record<string, string> {
    if (this.#options.variant?.headers)
      return spelledHeaders(this.#options.variant.headers(callbackHeaders(merchant.apiKey), merchant));
    const key = merchant.apiKey;
    let headers = this.#headersOf.get(key);
    if (!headers) this.#headersOf.set(key, (headers = spelledHeaders(callbackHeaders(merchant.apiKey))));
    return headers;
  }

  /** What follows an attempt (CB-ERRCODE, U-RETRY). */
  #next(delivery: DueDelivery, verdict: AttemptRecord['verdict']): DeliveryUpdate {
    const update = this.#conformingNext(delivery, verdict);
    const hook = this.#options.variant?.next;
    return hook
      ? hook(update, {
          delivery,
          verdict,
          now: this.#options.now(),
          delayMs: this.#delay(delivery, delivery.attempts + 1),
        })
      : update;
  }

  #conformingNext(delivery: DueDelivery, verdict: AttemptRecord['verdict']): DeliveryUpdate {
    const { now } = this.#options;
    const attempt = delivery.attempts + 1;
    // A delivery acknowledged once stays acknowledged, whatever a later attempt got (never retried after an acknowledgement).
    if (verdict === 'acknowledged' || delivery.acked) return { state: 'acknowledged' };
    if (attempt >= this.#maxAttempts(delivery)) return { state: 'exhausted' };
    return { state: 'pending', nextAt: now() + this.#delay(delivery, attempt) };
  }

  /** The wait after attempt n: the event's retryDelaysMs, else min(initial × factor^(n-1), max). */
  #delay(delivery: DueDelivery, attempt: number): number {
    if (delivery.retryDelaysMs) return delivery.retryDelaysMs[attempt - 1] ?? delivery.retryDelaysMs.at(-1) ?? 0;
    const { initialDelayMs, factor, maxDelayMs } = this.#options.callbacks.retry;
    return Math.min(maxDelayMs, Math.round(initialDelayMs * factor ** (attempt - 1)));
  }
}

function keyOf(delivery: DueDelivery): string {
  return `${delivery.eventId}:${delivery.idx}`;
}

/** Where a callback goes, as the agent pools its sockets. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * One attempt as the emulator records it (CB-ERRCODE, read by src/wire/acknowledgement.ts), with a
 * note for the log when the answer is ambiguous. The emulator's reading of U-CB-RESPONSE: an
 * ambiguous answer (errCode the number 0 with another status than 200, or 0 written `0.0`) is
 * counted as acknowledged, since the rule asks only for errCode equal to 0; the note says so, and
 * the record keeps the status and the answer as written, so the reading stays visible.
 */
export function judgeAttempt(
  at: string,
  requestUUID: string,
  answer: PostAnswer,
): { attempt: AttemptRecord; note?: string } {
  if (answer.status === 0)
    return {
      attempt: { at, requestUUID, status: 0, answer: null, verdict: 'failed', error: answer.error ?? 'no answer' },
    };
  const text = answer.body.toString('utf8');
  let json: ExactJson | undefined;
  try {
    if (text.length > 0) json = parseExactJson(text);
  } catch {
    // Not JSON: the record keeps the text.
  }
  const read = readAcknowledgement({ status: answer.status, body: text, json });
  const attempt: AttemptRecord = {
    at,
    requestUUID,
    status: answer.status,
    answer: text.length === 0 ? null : json === undefined ? text : json,
    verdict: read.verdict === 'not-acknowledged' ? 'rejected' : 'acknowledged',
  };
  return read.verdict === 'ambiguous'
    ? { attempt, note: `counted as acknowledged, ambiguous under U-CB-RESPONSE: ${read.reason}` }
    : { attempt };
}
