import type { SqliteDatabase } from '../platform/sqlite.js';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import type { QueuedCallback } from '../service/state.js';

/**
 * The delivery outbox in the emulator's SQLite store: callback events, their deliveries, each
 * attempt as a row from the moment it is queued (phase, queued_at, sent_at, settled_at), and the
 * dispatcher's claims. It shares the store's one connection with the service state (store.ts), so
 * a withdrawal's callback is inserted in the transaction of its order.
 */

/** The tables of the outbox (created if missing). */
const OUTBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS callback_events (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  tracking_id     TEXT NOT NULL,
  merchant        INTEGER NOT NULL,
  type            INTEGER NOT NULL,
  payload         TEXT NOT NULL,
  deliveries      INTEGER NOT NULL,
  concurrent      INTEGER NOT NULL,
  retry_delays    TEXT,
  fixed_uuid      TEXT NOT NULL,
  order_id        TEXT,
  created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS callback_events_tracking ON callback_events (tracking_id);
CREATE TABLE IF NOT EXISTS callback_deliveries (
  event_id  INTEGER NOT NULL,
  idx       INTEGER NOT NULL,
  state     TEXT NOT NULL CHECK (state IN ('waiting', 'pending', 'acknowledged', 'exhausted')),
  attempts  INTEGER NOT NULL DEFAULT 0,
  acked     INTEGER NOT NULL DEFAULT 0,
  next_at   INTEGER,
  PRIMARY KEY (event_id, idx)
) STRICT;
CREATE INDEX IF NOT EXISTS callback_deliveries_due ON callback_deliveries (state, next_at);
CREATE INDEX IF NOT EXISTS callback_deliveries_due_order ON callback_deliveries (state, next_at, event_id, idx);
CREATE TABLE IF NOT EXISTS delivery_attempts (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id      INTEGER NOT NULL,
  tracking_id   TEXT NOT NULL,
  idx           INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  at            TEXT NOT NULL,
  request_uuid  TEXT NOT NULL,
  status        INTEGER NOT NULL,
  answer        TEXT NOT NULL,
  verdict       TEXT NOT NULL CHECK (verdict IN ('acknowledged', 'rejected', 'failed')),
  error         TEXT,
  phase         TEXT NOT NULL DEFAULT 'done',
  queued_at     INTEGER,
  sent_at       INTEGER,
  settled_at    INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS delivery_attempts_tracking ON delivery_attempts (tracking_id, id);
`;

/** Columns schema 2 added to delivery_attempts; a version-1 store gets them by ALTER TABLE. */
const ATTEMPT_COLUMNS_V2: ReadonlyArray<[string, string]> = [
  ['phase', "TEXT NOT NULL DEFAULT 'done'"],
  ['queued_at', 'INTEGER'],
  ['sent_at', 'INTEGER'],
  ['settled_at', 'INTEGER'],
];

/** Attempts not settled yet: few at any time, read at start (recovery). */
const OPEN_ATTEMPTS_INDEX =
  "CREATE INDEX IF NOT EXISTS delivery_attempts_open ON delivery_attempts (id) WHERE phase IN ('queued', 'sent')";

/** A callback event to queue: the service's QueuedCallback, its merchant by the store's number. */
export type NewEvent = Omit<QueuedCallback, 'merchant'> & { merchant: number };

/** One delivery of an event that is due, with what sending it needs. */
export interface DueDelivery {
  eventId: number;
  idx: number;
  attempts: number;
  acked: boolean;
  trackingId: string;
  merchant: number;
  type: number;
  payload: string;
  concurrent: boolean;
  deliveries: number;
  retryDelaysMs?: number[];
  fixedUuid: string;
  orderId?: string;
  callbackUrl: string;
}

/** One logged delivery attempt (ControlDeliveryAttempt). */
export interface AttemptRecord {
  /** When the request went out (on a socket, counted); the time of the attempt. */
  at: string;
  requestUUID: string;
  status: number;
  answer: unknown;
  verdict: 'acknowledged' | 'rejected' | 'failed';
  /** Why no answer arrived (status 0): refused, timed out. */
  error?: string;
  /** When the dispatcher took the delivery up (before any wait for a connection). */
  queuedAt?: string;
  /** When the request was on a socket and counted against maxAttempts (the deadline starts here). */
  sentAt?: string;
  /** When the outcome was known. */
  settledAt?: string;
}

/** What happens to a delivery after an attempt. */
export type DeliveryUpdate =
  { state: 'pending'; nextAt: number; acked?: boolean } | { state: 'acknowledged' | 'exhausted' };

/** A delivery the dispatcher claimed: its attempt is a row (phase `queued`) from now on. */
export type ClaimedDelivery = DueDelivery & { attemptId: number };

/** What the dispatcher does with a due delivery: send it, leave it due (no free connection), or end it unsent (`why`). */
export type ClaimDecision = 'send' | 'skip' | { finish: string };

/** An attempt about to leave: counted (attempts + 1) only while the delivery is still pending, unchanged and under the cap. */
export interface SendMark {
  attemptId: number;
  delivery: DueDelivery;
  maxAttempts: number;
  requestUUID: string;
  sentAt: number;
}

/** Why a send was not counted: it went out (`sent`), or must not (acknowledged, the cap reached, changed meanwhile). */
export type SendVerdict = 'sent' | 'acknowledged' | 'capped' | 'changed';

/** The outcome of an attempt that went out. */
export interface Settlement {
  attemptId: number;
  delivery: DueDelivery;
  attempt: AttemptRecord;
  update: DeliveryUpdate;
  settledAt: number;
}

/** An attempt that never went out (no connection within the wait, shutdown before the send): not counted, the delivery due at `dueAt`. */
export interface Unsent {
  attemptId: number;
  delivery: DueDelivery;
  reason: string;
  dueAt: number;
  settledAt: number;
}

/** One write of the dispatcher's outbox: sends to count, outcomes and unsent attempts, in one transaction. */
interface OutboxBatch {
  sends: SendMark[];
  settled: Settlement[];
  unsent: Unsent[];
}

/** Every row of an event's attempts, whatever its phase (tests, diagnostics). */
export interface AttemptRow {
  attempt: number;
  phase: 'queued' | 'sent' | 'done' | 'not-sent';
  verdict: AttemptRecord['verdict'];
  status: number;
  error: string | null;
  queuedAt: number | null;
  sentAt: number | null;
  settledAt: number | null;
}

interface DueRow {
  event_id: number;
  idx: number;
  attempts: number;
  acked: number;
  tracking_id: string;
  merchant: number;
  type: number;
  payload: string;
  concurrent: number;
  deliveries: number;
  retry_delays: string | null;
  fixed_uuid: string;
  order_id: string | null;
  callback_url: string;
}

/** The statements over events and deliveries: insert, find due, order completion. */
function prepareQueue(db: SqliteDatabase) {
  return {
    completeOrder: db.prepare<[number, number, string]>(
      "UPDATE orders SET status = 'completed', completed_at = ? WHERE merchant = ? AND call_back_id = ? AND status = 'processing'",
    ),
    insertEvent: db.prepare(
      'INSERT INTO callback_events (tracking_id, merchant, type, payload, deliveries, concurrent, retry_delays, fixed_uuid, order_id, created_at) VALUES (@trackingId, @merchant, @type, @payload, @deliveries, @concurrent, @retryDelays, @fixedUuid, @orderId, @createdAt)',
    ),
    insertDelivery: db.prepare<[number, number, string, number | null]>(
      'INSERT INTO callback_deliveries (event_id, idx, state, next_at) VALUES (?, ?, ?, ?)',
    ),
    // `exclude`: a JSON array of merchants whose callback target has no free connection now.
    due: db.prepare<[number, string, number], DueRow>(
      `SELECT d.event_id, d.idx, d.attempts, d.acked, e.tracking_id, e.merchant, e.type, e.payload, e.concurrent, e.deliveries,
              e.retry_delays, e.fixed_uuid, e.order_id, m.callback_url
         FROM callback_deliveries d JOIN callback_events e ON e.id = d.event_id JOIN merchants m ON m.user_id = e.merchant
        WHERE d.state = 'pending' AND d.next_at <= ? AND m.callback_url IS NOT NULL AND e.merchant NOT IN (SELECT value FROM json_each(?))
        ORDER BY d.next_at, d.event_id, d.idx LIMIT ?`,
    ),
    // ORDER BY … LIMIT 1 rather than MIN(): read in the index's order, it stops at the first match instead of visiting every pending row.
    nextDue: db.prepare<[string], { next_at: number | null }>(
      `SELECT d.next_at FROM callback_deliveries d JOIN callback_events e ON e.id = d.event_id JOIN merchants m ON m.user_id = e.merchant
        WHERE d.state = 'pending' AND m.callback_url IS NOT NULL AND e.merchant NOT IN (SELECT value FROM json_each(?))
        ORDER BY d.next_at LIMIT 1`,
    ),
  };
}

/** The statements over attempts and the deliveries they count against. */
function prepareAttempts(db: SqliteDatabase) {
  return {
    queueAttempt: db.prepare<[number, string, number, number, string, number]>(
      "INSERT INTO delivery_attempts (event_id, tracking_id, idx, attempt, at, request_uuid, status, answer, verdict, error, phase, queued_at) VALUES (?, ?, ?, ?, ?, '', 0, 'null', 'failed', NULL, 'queued', ?)",
    ),
    // Counted at send time, only while nothing changed since the claim and the cap is not reached.
    countSend: db.prepare<[number, number, number, number]>(
      "UPDATE callback_deliveries SET attempts = attempts + 1 WHERE event_id = ? AND idx = ? AND state = 'pending' AND attempts = ? AND attempts < ?",
    ),
    deliveryState: db.prepare<[number, number], { state: string; attempts: number; acked: number }>(
      'SELECT state, attempts, acked FROM callback_deliveries WHERE event_id = ? AND idx = ?',
    ),
    markSent: db.prepare<[string, string, number, number]>(
      "UPDATE delivery_attempts SET phase = 'sent', at = ?, request_uuid = ?, sent_at = ? WHERE id = ?",
    ),
    settleAttempt: db.prepare(
      "UPDATE delivery_attempts SET phase = 'done', at = @at, request_uuid = @requestUUID, status = @status, answer = @answer, verdict = @verdict, error = @error, settled_at = @settledAt WHERE id = @id",
    ),
    settleUnknown: db.prepare<[string, number, number]>(
      "UPDATE delivery_attempts SET phase = 'done', status = 0, answer = 'null', verdict = 'failed', error = ?, settled_at = ? WHERE id = ?",
    ),
    markUnsent: db.prepare<[string, number, number]>(
      "UPDATE delivery_attempts SET phase = 'not-sent', error = ?, settled_at = ? WHERE id = ?",
    ),
    keepPending: db.prepare<[number, number, number, number]>(
      "UPDATE callback_deliveries SET acked = MAX(acked, ?), next_at = ? WHERE event_id = ? AND idx = ? AND state = 'pending'",
    ),
    // Never exhausted once acknowledged: an earlier acknowledgement wins over a later give-up.
    finishDelivery: db.prepare<[string, string, number, number]>(
      "UPDATE callback_deliveries SET state = CASE WHEN acked = 1 OR ? = 'acknowledged' THEN 'acknowledged' ELSE 'exhausted' END, acked = CASE WHEN ? = 'acknowledged' THEN 1 ELSE acked END, next_at = NULL WHERE event_id = ? AND idx = ?",
    ),
    promoteNext: db.prepare<[number, number, number]>(
      "UPDATE callback_deliveries SET state = 'pending', next_at = ? WHERE event_id = ? AND idx = ? AND state = 'waiting'",
    ),
    attempts: db.prepare<
      [string],
      {
        at: string;
        request_uuid: string;
        status: number;
        answer: string;
        verdict: AttemptRecord['verdict'];
        error: string | null;
        queued_at: number | null;
        sent_at: number | null;
        settled_at: number | null;
      }
    >(
      "SELECT at, request_uuid, status, answer, verdict, error, queued_at, sent_at, settled_at FROM delivery_attempts WHERE tracking_id = ? AND phase = 'done' ORDER BY id",
    ),
    attemptRows: db.prepare<
      [string],
      {
        attempt: number;
        phase: AttemptRow['phase'];
        verdict: AttemptRecord['verdict'];
        status: number;
        error: string | null;
        queued_at: number | null;
        sent_at: number | null;
        settled_at: number | null;
      }
    >(
      'SELECT attempt, phase, verdict, status, error, queued_at, sent_at, settled_at FROM delivery_attempts WHERE tracking_id = ? ORDER BY id',
    ),
    openAttempts: db.prepare<[], { id: number; event_id: number; idx: number; phase: 'queued' | 'sent' }>(
      "SELECT id, event_id, idx, phase FROM delivery_attempts WHERE phase IN ('queued', 'sent')",
    ),
    eventCount: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM callback_events WHERE tracking_id = ?'),
    lease: db.prepare<[number, number, number]>(
      "UPDATE callback_deliveries SET next_at = ? WHERE event_id = ? AND idx = ? AND state = 'pending'",
    ),
    pendingCount: db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM callback_deliveries WHERE state IN ('pending', 'waiting')",
    ),
  };
}

/** Every statement of the outbox, prepared once on the store's connection. */
function prepare(db: SqliteDatabase) {
  return { ...prepareQueue(db), ...prepareAttempts(db) };
}

/** An instant as the attempt rows write it. */
function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The outbox's tables on the store's one connection; every method is synchronous and each mutation is one transaction. */
export class DeliveryOutbox {
  readonly #statements: ReturnType<typeof prepare>;
  /** Writes one batch of the dispatcher's outbox in one transaction; a verdict per send, in order. */
  readonly writeOutbox: (batch: OutboxBatch, now: number) => SendVerdict[];
  readonly insertEvent: (event: NewEvent) => number;
  /**
   * Claims due deliveries (at most `limit` looked at): each one `decide` sends is leased until
   * `leaseUntil` and gets an attempt row in phase `queued`; one it finishes ends exhausted (or
   * acknowledged, if it was) with the reason as an unsent row; one it skips stays due.
   */
  readonly claimDue: (
    now: number,
    limit: number,
    leaseUntil: number,
    decide?: (delivery: DueDelivery) => ClaimDecision,
    exclude?: readonly number[],
  ) => ClaimedDelivery[];
  /**
   * At start: settles what an earlier process left open. An attempt that was sent has an unknown
   * outcome (recorded as failed, counted); one only queued never left (not counted). Their
   * deliveries are due now.
   */
  readonly recoverOpenAttempts: (now: number) => { sent: number; queued: number };

  /** Creates the tables if missing, adds the columns of schema 2 to a version-1 store, prepares the statements. */
  constructor(db: SqliteDatabase) {
    db.exec(OUTBOX_SCHEMA);
    const columns = new Set(
      (db.pragma('table_info(delivery_attempts)') as Array<{ name: string }>).map((column) => column.name),
    );
    for (const [name, type] of ATTEMPT_COLUMNS_V2)
      if (!columns.has(name)) db.exec(`ALTER TABLE delivery_attempts ADD COLUMN ${name} ${type}`);
    db.exec(OPEN_ATTEMPTS_INDEX);

    this.#statements = prepare(db);
    this.insertEvent = db.transaction((event: NewEvent) => this.#insertEvent(event));
    this.claimDue = db.transaction(
      (
        now: number,
        limit: number,
        leaseUntil: number,
        decide?: (delivery: DueDelivery) => ClaimDecision,
        exclude: readonly number[] = [],
      ) => this.#claimDue(now, limit, leaseUntil, decide, exclude),
    );
    this.writeOutbox = db.transaction((batch: OutboxBatch, now: number) => this.#writeOutbox(batch, now));
    this.recoverOpenAttempts = db.transaction((now: number) => this.#recoverOpenAttempts(now));
  }

  #insertEvent(event: NewEvent): number {
    const statements = this.#statements;
    const id = Number(
      statements.insertEvent.run({
        trackingId: event.trackingId,
        merchant: event.merchant,
        type: event.type,
        payload: event.payload,
        deliveries: event.deliveries,
        concurrent: event.concurrent ? 1 : 0,
        retryDelays: event.retryDelaysMs ? JSON.stringify(event.retryDelaysMs) : null,
        fixedUuid: event.fixedUuid,
        orderId: event.orderId ?? null,
        createdAt: event.createdAt,
      }).lastInsertRowid,
    );
    for (let idx = 0; idx < event.deliveries; idx++) {
      // Sequential deliveries wait for the one before them to finish (acknowledged or given up).
      const dueNow = event.concurrent || idx === 0;
      statements.insertDelivery.run(id, idx, dueNow ? 'pending' : 'waiting', dueNow ? event.dueAt : null);
    }
    return id;
  }

  /**
   * A claimed delivery is leased: its next_at moves past the send's deadline, so it is not due
   * again while in flight, and a crash mid-send only delays it (at-least-once, CB-ONCE is the merchant's part).
   */
  #claimDue(
    now: number,
    limit: number,
    leaseUntil: number,
    decide: ((delivery: DueDelivery) => ClaimDecision) | undefined,
    exclude: readonly number[],
  ) {
    const statements = this.#statements;
    const claimed: ClaimedDelivery[] = [];
    for (const delivery of this.dueDeliveries(now, limit, exclude)) {
      const decision = decide ? decide(delivery) : 'send';
      if (decision === 'skip') continue;
      const attemptId = Number(
        statements.queueAttempt.run(
          delivery.eventId,
          delivery.trackingId,
          delivery.idx,
          delivery.attempts + 1,
          iso(now),
          now,
        ).lastInsertRowid,
      );
      if (decision !== 'send') {
        statements.markUnsent.run(decision.finish, now, attemptId);
        this.#finish(delivery, 'exhausted', now);
        continue;
      }
      statements.lease.run(leaseUntil, delivery.eventId, delivery.idx);
      claimed.push({ ...delivery, attemptId });
    }
    return claimed;
  }

  /** Ends a delivery; the next sequential delivery of its event becomes due. */
  #finish(delivery: DueDelivery, state: 'acknowledged' | 'exhausted', now: number): void {
    this.#statements.finishDelivery.run(state, state, delivery.eventId, delivery.idx);
    if (!delivery.concurrent) this.#statements.promoteNext.run(now, delivery.eventId, delivery.idx + 1);
  }

  #writeOutbox(batch: OutboxBatch, now: number): SendVerdict[] {
    for (const settlement of batch.settled) this.#settle(settlement, now);
    for (const unsent of batch.unsent) {
      this.#statements.markUnsent.run(unsent.reason, unsent.settledAt, unsent.attemptId);
      this.#statements.lease.run(unsent.dueAt, unsent.delivery.eventId, unsent.delivery.idx);
    }
    return batch.sends.map((send) => this.#countSend(send, now));
  }

  /** Records an attempt's outcome and what follows it; the first attempt's outcome completes its order. */
  #settle(settlement: Settlement, now: number): void {
    const { attempt, delivery, update } = settlement;
    const statements = this.#statements;
    statements.settleAttempt.run({
      id: settlement.attemptId,
      at: attempt.at,
      requestUUID: attempt.requestUUID,
      status: attempt.status,
      answer: stringifyExact(attempt.answer ?? null),
      verdict: attempt.verdict,
      error: attempt.error ?? null,
      settledAt: settlement.settledAt,
    });
    if (update.state === 'pending')
      statements.keepPending.run(update.acked ? 1 : 0, update.nextAt, delivery.eventId, delivery.idx);
    else this.#finish(delivery, update.state, now);
    if (delivery.orderId !== undefined && delivery.attempts === 0)
      statements.completeOrder.run(now, delivery.merchant, delivery.orderId);
  }

  /** Counts a send while the delivery is unchanged since its claim and under the cap; otherwise says why not. */
  #countSend(send: SendMark, now: number): SendVerdict {
    const { delivery } = send;
    const statements = this.#statements;
    if (statements.countSend.run(delivery.eventId, delivery.idx, delivery.attempts, send.maxAttempts).changes === 1) {
      statements.markSent.run(iso(send.sentAt), send.requestUUID, send.sentAt, send.attemptId);
      return 'sent';
    }
    const row = statements.deliveryState.get(delivery.eventId, delivery.idx);
    const verdict: SendVerdict =
      row?.state === 'acknowledged' || (row?.state !== 'pending' && row?.acked === 1)
        ? 'acknowledged'
        : row?.state === 'pending' && row.attempts >= send.maxAttempts
          ? 'capped'
          : 'changed';
    statements.markUnsent.run(
      `not sent: ${verdict === 'acknowledged' ? 'already acknowledged' : verdict === 'capped' ? `maxAttempts (${send.maxAttempts}) reached` : 'the delivery changed since it was claimed'}`,
      now,
      send.attemptId,
    );
    if (verdict === 'capped') this.#finish(delivery, 'exhausted', now);
    return verdict;
  }

  #recoverOpenAttempts(now: number): { sent: number; queued: number } {
    const statements = this.#statements;
    const counts = { sent: 0, queued: 0 };
    for (const open of statements.openAttempts.all()) {
      if (open.phase === 'sent') {
        statements.settleUnknown.run('outcome unknown: the emulator stopped before the answer arrived', now, open.id);
        counts.sent++;
      } else {
        statements.markUnsent.run('not sent: the emulator stopped before it was sent', now, open.id);
        counts.queued++;
      }
      statements.lease.run(now, open.event_id, open.idx);
    }
    return counts;
  }

  /** Deliveries due at `now` (at most `limit`) whose merchant has a callback URL and is not in `exclude`. */
  dueDeliveries(now: number, limit: number, exclude: readonly number[] = []): DueDelivery[] {
    return this.#statements.due.all(now, JSON.stringify(exclude), limit).map((row) => {
      const due: DueDelivery = {
        eventId: row.event_id,
        idx: row.idx,
        attempts: row.attempts,
        acked: row.acked === 1,
        trackingId: row.tracking_id,
        merchant: row.merchant,
        type: row.type,
        payload: row.payload,
        concurrent: row.concurrent === 1,
        deliveries: row.deliveries,
        fixedUuid: row.fixed_uuid,
        callbackUrl: row.callback_url,
      };
      if (row.retry_delays !== null) due.retryDelaysMs = JSON.parse(row.retry_delays) as number[];
      if (row.order_id !== null) due.orderId = row.order_id;
      return due;
    });
  }

  /** When the next pending delivery is due (undefined when none waits), leaving out the merchants in `exclude`. */
  nextDueAt(exclude: readonly number[] = []): number | undefined {
    return this.#statements.nextDue.get(JSON.stringify(exclude))?.next_at ?? undefined;
  }

  /** Deliveries not finished yet (pending or waiting for the one before them). */
  unfinishedDeliveries(): number {
    return this.#statements.pendingCount.get()!.n;
  }

  /** Every attempt of the events with this trackingId, oldest first; undefined when no such event exists. */
  attempts(trackingId: string): AttemptRecord[] | undefined {
    if (this.#statements.eventCount.get(trackingId)!.n === 0) return undefined;
    return this.#statements.attempts.all(trackingId).map((row) => {
      const attempt: AttemptRecord = {
        at: row.at,
        requestUUID: row.request_uuid,
        status: row.status,
        answer: parseExactJson(row.answer) as unknown,
        verdict: row.verdict,
      };
      if (row.error !== null) attempt.error = row.error;
      if (row.queued_at !== null) attempt.queuedAt = new Date(row.queued_at).toISOString();
      if (row.sent_at !== null) attempt.sentAt = new Date(row.sent_at).toISOString();
      if (row.settled_at !== null) attempt.settledAt = new Date(row.settled_at).toISOString();
      return attempt;
    });
  }

  /** Every attempt row of the events with this trackingId, whatever its phase, oldest first (queued and unsent ones included). */
  attemptRows(trackingId: string): AttemptRow[] {
    return this.#statements.attemptRows.all(trackingId).map((row) => ({
      attempt: row.attempt,
      phase: row.phase,
      verdict: row.verdict,
      status: row.status,
      error: row.error,
      queuedAt: row.queued_at,
      sentAt: row.sent_at,
      settledAt: row.settled_at,
    }));
  }

  /** The state of one delivery (tests, diagnostics). */
  delivery(eventId: number, idx: number): { state: string; attempts: number; acked: boolean } | undefined {
    const row = this.#statements.deliveryState.get(eventId, idx);
    return row && { state: row.state, attempts: row.attempts, acked: row.acked === 1 };
  }
}
