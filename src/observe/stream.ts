/**
 * The judge's memory across exchanges (docs/decisions/0072-observe-judge.md): the events of the callback
 * stream (their deliveries, identity, answers), the withdrawals waiting for their order callback,
 * recent requestUUIDs, and what the merchant's answers say about how it reads a body. All of it is
 * bounded: events past a window (count, age) are forgotten and counted.
 *
 * Time is the observed time (`startedAt`/`endedAt` of the exchanges), never the clock: a capture
 * replays to the same verdict however fast it is read.
 */
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { IDENTITY_FIELDS, fail, pass } from '../runner/api.js';
import { callbackField, callbackTypeEntry } from '../spec/callback-types.js';
import type { ObservedExchange } from './exchange.js';
import type { DeliveryFacts } from './judge-callbacks.js';
import type { OrderFacts } from './judge-orders.js';
import type { Evidence, Judgement } from './tally.js';

/** How long the judge waits, in observed time, and how much it remembers. */
export interface StreamLimits {
  /** Events remembered at most (oldest forgotten first). */
  maxEvents: number;
  /** An event not seen for this long (ms) is forgotten. */
  maxEventAgeMs: number;
  /** After an answer that is not an acknowledgement, how long (ms) before a missing retry is reported. */
  retryWaitMs: number;
  /** After an accepted withdrawal, how long (ms) before a missing order callback is reported. */
  orderCallbackWaitMs: number;
}

export const DEFAULT_LIMITS: StreamLimits = {
  maxEvents: 10_000,
  maxEventAgeMs: 3_600_000,
  retryWaitMs: 300_000,
  orderCallbackWaitMs: 600_000,
};

interface EventState {
  key: string;
  type: string;
  trackingId?: string;
  identity: Map<string, string>;
  deliveries: number;
  lastSeq: number;
  lastAt: number;
  /** The last delivery's answer: acknowledged, or not (ambiguous counts as possibly acknowledged). */
  lastAcknowledged: boolean;
  lastEvidence: Evidence;
}

interface Deadline {
  key: string;
  deliveries: number;
  due: number;
}

interface PendingOrder {
  callBackId: string;
  seq: number;
  at: number;
  evidence: Evidence;
}

const RETRY = {
  check: 'callback-retry',
  title: 'the service retries a delivery that was not acknowledged, and only such a delivery (CB-ERRCODE)',
  labels: ['CB-ERRCODE'],
};
/** Records one judgement of the service's delivery (the stream's verdicts are about the service). */
type JudgeService = (check: string, title: string, labels: string[], finding: Judgement['finding']) => void;

const ORDER_CALLBACK = {
  check: 'order-callback',
  title: 'an accepted withdrawal is followed by its order callback (ORDER-KIND)',
  labels: ['ORDER-KIND'],
};

/** The text of a field for comparison: exact digits for numbers, the string itself, else its JSON. */
function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : stringifyExact(value);
}

/** The fields an event is known by: the runner's identity fields plus the type table's key fields. */
function identityFields(type: string): string[] {
  const entry = callbackTypeEntry(Number(type));
  return [...new Set([...IDENTITY_FIELDS, ...(entry?.key.fields ?? []), ...(entry?.key.optional ?? [])])].filter(
    (field) => field !== 'trackingId',
  );
}

/** The key of a type's own idempotency recipe (deposits, withdrawals), when its fields are present. */
function ownKeyOf(payload: Record<string, ExactJson>, type: string): string | undefined {
  const entry = callbackTypeEntry(Number(type));
  if (!entry || entry.key.fields.includes('trackingId')) return undefined;
  const values = entry.key.fields.map((field) => textOf(callbackField(payload, field)));
  return values.every((value) => value !== undefined) ? `${type}|${values.join('|')}` : undefined;
}

/** The stream state of one judge. */
export class Stream {
  readonly #events = new Map<string, EventState>();
  readonly #uuids = new Map<string, number>();
  /** Own idempotency key (deposit, withdrawal) → the trackingId first seen with it. */
  readonly #trackingByKey = new Map<string, string>();
  #deadlines: Deadline[] = [];
  #orders = new Map<string, PendingOrder>();
  /** callBackId → the first order request that used it (ORDER-CALLBACK-ID). */
  readonly #callBackIds = new Map<string, { seq: number; plain: string }>();
  #now = 0;
  #callbacksSeen = 0;
  forgotten = 0;
  // How the merchant answers valid deliveries, by whether their body holds '+' (CB-RAW-BODY: a form parser turns it into ' ').
  #ackedPlus = 0;
  #ackedPlain = 0;
  #refusedPlus: Array<{ seq: number; evidence: Evidence }> = [];
  #formParsing: 'open' | 'proven' | 'disproven' = 'open';

  constructor(private readonly limits: StreamLimits) {}

  /** Moves observed time forward; returns what came due (missing retries, missing order callbacks) and forgets old events. */
  advance(now: number): Judgement[] {
    if (now <= this.#now) return [];
    this.#now = now;
    const out: Judgement[] = [];
    let head = 0;
    while (head < this.#deadlines.length && this.#deadlines[head]!.due <= now) {
      const judged = this.#missingRetry(this.#deadlines[head]!, false);
      if (judged) out.push(judged);
      head++;
    }
    if (head > 0) this.#deadlines = this.#deadlines.slice(head);
    // Oldest first, and only those due: a Map's iteration survives deleting the entry it is on, so
    // nothing is copied per exchange however many withdrawals wait.
    for (const order of this.#orders.values()) {
      if (order.at + this.limits.orderCallbackWaitMs > now) break;
      out.push(...this.#missingOrderCallback(order, false));
    }
    for (const event of this.#events.values()) {
      if (event.lastAt + this.limits.maxEventAgeMs > now) break;
      this.#forget(event, out);
    }
    return out;
  }

  /** Judges one delivery in the stream: CB-UUID, CB-ONCE across resends, the trackingId, the retry, the order callback, the merchant's body reading. */
  delivery(observed: ObservedExchange, facts: DeliveryFacts): Judgement[] {
    this.#callbacksSeen++;
    const out: Judgement[] = [];
    const at: JudgeService = (check, title, labels, finding) =>
      out.push({ check, title, labels, side: 'service', finding, seq: observed.seq, evidence: facts.evidence });
    out.push(...this.#bodyReading(observed, facts));
    const payload = facts.payload;
    if (!payload) return out;
    this.#requestUuid(payload, observed.seq, at);
    const type = textOf(payload.type) ?? '?';
    const trackingId = textOf(payload.trackingId);
    this.#orderCallback(textOf(callbackField(payload, 'callBackId')), type, at);
    const ownKey = ownKeyOf(payload, type);
    if (ownKey !== undefined && trackingId !== undefined) this.#trackingId(ownKey, trackingId, type, at);
    const key = trackingId !== undefined ? `t|${type}|${trackingId}` : ownKey !== undefined ? `k|${ownKey}` : undefined;
    if (key === undefined) return out;
    const identity = new Map<string, string>();
    for (const field of identityFields(type)) {
      const value = textOf(callbackField(payload, field));
      if (value !== undefined) identity.set(field, value);
    }
    const acknowledged = facts.ack.verdict !== 'not-acknowledged';
    const seen = {
      lastSeq: observed.seq,
      lastAt: observed.startedAt,
      lastAcknowledged: acknowledged,
      lastEvidence: facts.evidence,
    };
    const event = this.#events.get(key);
    if (!event) {
      this.#events.set(key, {
        key,
        type,
        ...(trackingId === undefined ? {} : { trackingId }),
        identity,
        deliveries: 1,
        ...seen,
      });
      this.#evictOverflow(out);
    } else {
      this.#resend(event, identity, trackingId ?? ownKey, at);
      this.#events.delete(key);
      Object.assign(event, { deliveries: event.deliveries + 1, ...seen });
      this.#events.set(key, event);
    }
    if (!acknowledged) this.#awaitRetry(key, observed.endedAt);
    return out;
  }

  /** CB-UUID: a fresh requestUUID on every delivery, as far as the window remembers. */
  #requestUuid(payload: Record<string, ExactJson>, seq: number, at: JudgeService): void {
    const uuid = textOf(payload.requestUUID);
    if (uuid === undefined) return;
    const before = this.#uuids.get(uuid);
    at(
      'callback-request-uuid',
      'a fresh requestUUID on every delivery (CB-UUID)',
      ['CB-UUID'],
      before === undefined
        ? pass()
        : fail(`requestUUID ${uuid} was already sent on the delivery of seq ${before}`, ['CB-UUID']),
    );
    this.#uuids.delete(uuid);
    this.#uuids.set(uuid, seq);
    while (this.#uuids.size > this.limits.maxEvents * 4) this.#uuids.delete(this.#uuids.keys().next().value as string);
  }

  /** ORDER-KIND: a callback carrying the callBackId of an accepted withdrawal settles its wait. */
  #orderCallback(callBackId: string | undefined, type: string, at: JudgeService): void {
    if (callBackId === undefined || !this.#orders.has(callBackId)) return;
    const order = this.#orders.get(callBackId)!;
    this.#orders.delete(callBackId);
    at(
      ORDER_CALLBACK.check,
      ORDER_CALLBACK.title,
      ORDER_CALLBACK.labels,
      pass(`a type ${type} callback carries the callBackId of the withdrawal of seq ${order.seq}`),
    );
  }

  /** One trackingId per deposit or withdrawal (known by its own key fields): another one warns (U-CB-FIELDS). */
  #trackingId(ownKey: string, trackingId: string, type: string, at: JudgeService): void {
    const first = this.#trackingByKey.get(ownKey);
    if (first !== undefined && first !== trackingId) {
      at(
        'callback-tracking-id',
        'one trackingId across the deliveries of one event',
        ['CB-ID-OTHER'],
        fail(
          `the same ${callbackTypeEntry(Number(type))?.name ?? `type ${type}`} (its idempotency key fields) arrives under trackingId ${trackingId}, first seen under ${first}: trackingId is the toolkit's payload model, not named by the interface (U-CB-FIELDS), and a merchant keys this type on its own fields`,
          ['U-CB-FIELDS'],
        ),
      );
    }
    if (first === undefined) {
      this.#trackingByKey.set(ownKey, trackingId);
      while (this.#trackingByKey.size > this.limits.maxEvents)
        this.#trackingByKey.delete(this.#trackingByKey.keys().next().value as string);
    }
  }

  /** A later delivery of a remembered event: the same identity fields (CB-ONCE), and a retry only after a refusal (CB-ERRCODE). */
  #resend(event: EventState, identity: Map<string, string>, id: string | undefined, at: JudgeService): void {
    const differing: string[] = [];
    for (const field of new Set([...event.identity.keys(), ...identity.keys()])) {
      const was = event.identity.get(field);
      const now = identity.get(field);
      if (was !== now) differing.push(`${field}: ${was ?? '(absent)'} → ${now ?? '(absent)'}`);
    }
    at(
      'callback-same-event',
      'identical identity fields on every delivery of an event (CB-ONCE)',
      ['CB-ONCE'],
      differing.length
        ? fail(
            `delivery ${event.deliveries + 1} of event ${id} differs from the first in ${differing.join('; ')}: to the merchant's idempotency key it is another event`,
          )
        : pass(),
    );
    at(
      RETRY.check,
      RETRY.title,
      RETRY.labels,
      event.lastAcknowledged
        ? fail(
            `delivery ${event.deliveries + 1} of event ${id} follows an acknowledgement (seq ${event.lastSeq}): CB-ERRCODE retries only a failed delivery, CB-ONCE allows an identical resend, and traffic cannot tell which this is (U-RETRY)`,
            ['U-RETRY'],
          )
        : pass(`delivery ${event.deliveries + 1} retries a delivery that was not acknowledged`),
    );
  }

  /** A delivery that was not acknowledged: its retry is awaited until the retry wait has passed. */
  #awaitRetry(key: string, endedAt: number): void {
    const current = this.#events.get(key)!;
    this.#deadlines.push({ key, deliveries: current.deliveries, due: endedAt + this.limits.retryWaitMs });
    if (this.#deadlines.length > this.limits.maxEvents * 2)
      this.#deadlines = this.#deadlines.filter((d) => this.#events.get(d.key)?.deliveries === d.deliveries);
  }

  /**
   * ORDER-CALLBACK-ID: the merchant keeps callBackId unique. Another order under a callBackId seen
   * before fails; the same plain request again (a resubmission of one order) does not.
   */
  #callBackIdUse(observed: ObservedExchange, facts: OrderFacts, evidence: Evidence): Judgement[] {
    if (facts.requestCallBackId === undefined || facts.requestPlain === undefined) return [];
    const id = facts.requestCallBackId;
    const before = this.#callBackIds.get(id);
    this.#callBackIds.delete(id);
    this.#callBackIds.set(id, before ?? { seq: observed.seq, plain: facts.requestPlain });
    while (this.#callBackIds.size > this.limits.maxEvents)
      this.#callBackIds.delete(this.#callBackIds.keys().next().value as string);
    const finding =
      before === undefined || before.plain === facts.requestPlain
        ? pass(
            before === undefined
              ? 'a callBackId not seen before'
              : `the same order as seq ${before.seq}, submitted again`,
          )
        : fail(
            `callBackId ${id} was already used by another order (seq ${before.seq}): the merchant keeps callBackId unique`,
            ['ORDER-CALLBACK-ID'],
          );
    return [
      {
        check: 'order-callback-id',
        title: 'the merchant keeps callBackId unique (ORDER-CALLBACK-ID)',
        labels: ['ORDER-CALLBACK-ID'],
        side: 'merchant',
        finding,
        seq: observed.seq,
        evidence,
      },
    ];
  }

  /** Remembers an accepted withdrawal: its order callback should follow (ORDER-KIND); judges the callBackId's uniqueness. */
  order(observed: ObservedExchange, facts: OrderFacts, evidence: Evidence): Judgement[] {
    const used = this.#callBackIdUse(observed, facts, evidence);
    if (facts.acceptedWithdrawal === undefined) return used;
    this.#orders.delete(facts.acceptedWithdrawal);
    this.#orders.set(facts.acceptedWithdrawal, {
      callBackId: facts.acceptedWithdrawal,
      seq: observed.seq,
      at: observed.endedAt,
      evidence,
    });
    const out: Judgement[] = [...used];
    while (this.#orders.size > this.limits.maxEvents) {
      const oldest = this.#orders.values().next().value as PendingOrder;
      this.#orders.delete(oldest.callBackId);
      this.forgotten++;
      out.push({
        ...ORDER_CALLBACK,
        side: 'service',
        finding: {
          status: 'skipped',
          message: 'not judged: the withdrawal was forgotten by the stream window before its callback was due',
        },
        seq: oldest.seq,
      });
    }
    return out;
  }

  /** The end of the stream: what is still waiting is judged now (due) or skipped (the observation ended first). */
  finish(): Judgement[] {
    const out: Judgement[] = [];
    for (const deadline of this.#deadlines) {
      const judged = this.#missingRetry(deadline, true);
      if (judged) out.push(judged);
    }
    this.#deadlines = [];
    for (const order of [...this.#orders.values()]) out.push(...this.#missingOrderCallback(order, true));
    if (this.#formParsing === 'open' && this.#refusedPlus.length > 0) {
      for (const candidate of this.#refusedPlus) {
        out.push({
          check: 'merchant-raw-body',
          title: "the merchant reads the callback's raw body (CB-RAW-BODY)",
          labels: ['CB-RAW-BODY'],
          side: 'merchant',
          finding: {
            status: 'skipped',
            message: `not judged: the merchant refused this valid delivery, whose body holds '+'; no valid delivery without '+' was seen acknowledged, so a form parser (turning '+' into ' ') is not told apart from a refusal for business reasons`,
          },
          seq: candidate.seq,
          evidence: candidate.evidence,
        });
      }
    }
    return out;
  }

  /** How many entries each memory holds now (each is bounded by the limits: the memory test checks it). */
  get sizes(): Record<
    'events' | 'requestUuids' | 'trackingIds' | 'retryDeadlines' | 'pendingOrders' | 'callBackIds' | 'refusedPlus',
    number
  > {
    return {
      events: this.#events.size,
      requestUuids: this.#uuids.size,
      trackingIds: this.#trackingByKey.size,
      retryDeadlines: this.#deadlines.length,
      pendingOrders: this.#orders.size,
      callBackIds: this.#callBackIds.size,
      refusedPlus: this.#refusedPlus.length,
    };
  }

  /** Does the judge still wait for anything? (For notes.) */
  get callbacksSeen(): number {
    return this.#callbacksSeen;
  }

  #missingRetry(deadline: Deadline, atEnd: boolean): Judgement | undefined {
    const event = this.#events.get(deadline.key);
    if (!event || event.deliveries !== deadline.deliveries || event.lastAcknowledged) return undefined;
    const id = event.trackingId ?? event.key;
    const wait = Math.round(this.limits.retryWaitMs / 1000);
    let finding: Judgement['finding'];
    if (atEnd && this.#now < deadline.due) {
      finding = {
        status: 'skipped',
        message: `not judged: the observation ended ${Math.round((this.#now - (deadline.due - this.limits.retryWaitMs)) / 1000)} s after delivery ${event.deliveries} of event ${id} was refused, before a retry was due (the judge waits ${wait} s)`,
      };
    } else if (event.deliveries === 1) {
      finding = fail(
        `event ${id} was not acknowledged (seq ${event.lastSeq}) and not retried within ${wait} s: CB-ERRCODE wants a retry when processing failed; how soon is open (U-RETRY)`,
        ['U-RETRY'],
      );
    } else {
      finding = fail(
        `event ${id} was not acknowledged after ${event.deliveries} deliveries (the last at seq ${event.lastSeq}) and the service stopped retrying: how many retries is open (U-RETRY); the event is lost unless reconciled`,
        ['U-RETRY'],
      );
    }
    return { ...RETRY, side: 'service', finding, seq: event.lastSeq, evidence: event.lastEvidence };
  }

  #missingOrderCallback(order: PendingOrder, atEnd: boolean): Judgement[] {
    this.#orders.delete(order.callBackId);
    const wait = Math.round(this.limits.orderCallbackWaitMs / 1000);
    let finding: Judgement['finding'];
    if (this.#callbacksSeen === 0)
      finding = {
        status: 'skipped',
        message: 'not judged: no callback was observed at all (the callback leg is not behind the judge)',
      };
    else if (atEnd && this.#now < order.at + this.limits.orderCallbackWaitMs)
      finding = {
        status: 'skipped',
        message: `not judged: the observation ended before the order callback of withdrawal ${order.callBackId} was due (the judge waits ${wait} s)`,
      };
    else
      finding = fail(
        `no callback carrying callBackId ${order.callBackId} within ${wait} s of the accepted withdrawal (seq ${order.seq}): which callback follows an order, and when, is open (U-STATES, U-CB-FIELDS)`,
        ['U-STATES'],
      );
    return [{ ...ORDER_CALLBACK, side: 'service', finding, seq: order.seq, evidence: order.evidence }];
  }

  /**
   * CB-RAW-BODY on the merchant's side, from its answers alone: a merchant that acknowledges valid
   * deliveries without '+' and refuses every valid one with '+' reads the body through a form
   * parser ('+' becomes ' ', the Base64 breaks). Proven only by that contrast; a '+' body it
   * acknowledges disproves it.
   */
  #bodyReading(observed: ObservedExchange, facts: DeliveryFacts): Judgement[] {
    if (!facts.valid || !observed.response || facts.keyRefused || facts.ownKey === false) return [];
    const acknowledged = facts.ack.verdict === 'acknowledged';
    if (acknowledged && facts.plus) this.#ackedPlus++;
    else if (acknowledged) this.#ackedPlain++;
    else if (facts.plus && this.#formParsing !== 'disproven') {
      this.#refusedPlus.push({ seq: observed.seq, evidence: facts.evidence });
      if (this.#refusedPlus.length > 200) this.#refusedPlus.shift();
    }
    if (this.#ackedPlus > 0 && this.#formParsing !== 'disproven') {
      this.#formParsing = 'disproven';
      this.#refusedPlus = [];
    }
    if (this.#formParsing === 'disproven' || this.#ackedPlain === 0 || this.#refusedPlus.length === 0) return [];
    this.#formParsing = 'proven';
    const proven = this.#refusedPlus.map((candidate): Judgement => ({
      check: 'merchant-raw-body',
      title: "the merchant reads the callback's raw body (CB-RAW-BODY)",
      labels: ['CB-RAW-BODY'],
      side: 'merchant',
      finding: fail(
        `the merchant refused this valid delivery (it opens with the public key to a valid payload), whose body holds '+', while it acknowledged ${this.#ackedPlain} valid deliver${this.#ackedPlain === 1 ? 'y' : 'ies'} without '+' and none with '+': it reads the body as a form, where '+' becomes ' ' (CB-RAW-BODY: read the raw body)`,
        ['CB-RAW-BODY'],
      ),
      seq: candidate.seq,
      evidence: candidate.evidence,
    }));
    this.#refusedPlus = [];
    return proven;
  }

  #evictOverflow(out: Judgement[]): void {
    while (this.#events.size > this.limits.maxEvents)
      this.#forget(this.#events.values().next().value as EventState, out);
  }

  #forget(event: EventState, out: Judgement[]): void {
    this.#events.delete(event.key);
    this.forgotten++;
    if (!event.lastAcknowledged) {
      out.push({
        ...RETRY,
        side: 'service',
        finding: {
          status: 'skipped',
          message: `not judged: event ${event.trackingId ?? event.key} was forgotten by the stream window (${this.limits.maxEvents} events, ${Math.round(this.limits.maxEventAgeMs / 1000)} s) while its retry was awaited`,
        },
        seq: event.lastSeq,
        evidence: event.lastEvidence,
      });
    }
  }
}
