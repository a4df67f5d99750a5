import type { Scheduler } from '../core/scheduler.js';
import type { EmulatorClock, EmulatorLog } from './emulator-context.js';
import type { ClaimedDelivery, SendMark, SendVerdict, Settlement, Unsent } from './outbox.js';
import type { EmulatorStore } from './store.js';

/**
 * Under load (at least this many attempts under way) the outbox is written at most once per
 * BATCH_WINDOW_MS: the sends and outcomes of several turns share one transaction, whose commit is
 * the larger part of a small write. With fewer under way each write follows in the next turn, so a
 * sequential delivery never waits for a window (docs/decisions/0096-outbox-write-window.md).
 */
const BATCH_IN_FLIGHT = 8;
const BATCH_WINDOW_MS = 4;
/** When an outbox write failed (SQLITE_BUSY, a full disk), it is tried again after this long. */
export const WRITE_RETRY_MS = 1_000;

/** What the writer needs of an attempt: its delivery and the requestUUID it goes out with. */
interface WrittenAttempt {
  delivery: ClaimedDelivery;
  requestUUID: string;
}

/** An attempt's outcome waiting to be written, with the log line written once it is. */
interface SettledItem<A> {
  attempt: A;
  settlement: Settlement;
  line: string;
}

/** An attempt that never went out, waiting to be written, with its log line. */
interface UnsentItem<A> {
  attempt: A;
  unsent: Unsent;
  line: string;
}

/** What one write did: the outcomes and unsent attempts it recorded, and each send's verdict (an Error when it could not be counted). */
export interface WriteResult<A> {
  now: number;
  settled: Array<SettledItem<A>>;
  unsent: Array<UnsentItem<A>>;
  sends: Array<{ attempt: A; verdict: SendVerdict | Error }>;
}

interface Pending<A> {
  sends: A[];
  settled: Array<SettledItem<A>>;
  unsent: Array<UnsentItem<A>>;
}

interface OutboxWriterOptions<A> {
  store: Pick<EmulatorStore, 'writeOutbox'>;
  now: EmulatorClock;
  timers: Pick<Scheduler, 'after'>;
  log?: EmulatorLog | undefined;
  /** Attempts under way now: from BATCH_IN_FLIGHT on, writes wait for the window. */
  underWay: () => number;
  /** The hard cap the store checks a send against. */
  maxAttempts: (delivery: ClaimedDelivery) => number;
  /** Called after every write with what it wrote; outcomes it could not write are kept and tried again. */
  onWritten: (result: WriteResult<A>) => void;
}

/**
 * The dispatcher's write batching: sends to count, outcomes and unsent attempts gathered over a
 * turn of the event loop (under load, over a window) and written in one transaction. When the
 * store refuses the batch, each record is written alone, so one bad record holds back only itself;
 * an outcome the store cannot take yet is kept and written again after WRITE_RETRY_MS.
 */
export class OutboxWriter<A extends WrittenAttempt> {
  readonly #options: OutboxWriterOptions<A>;
  #pending: Pending<A> = { sends: [], settled: [], unsent: [] };
  #queued = false;
  /** When the outbox was last written (the window under load counts from it). */
  #lastWriteAt = -Infinity;
  /** Cancels a write waiting for the window to pass. */
  #windowTimer: (() => void) | undefined;
  #retryTimer: (() => void) | undefined;
  #closed = false;

  constructor(options: OutboxWriterOptions<A>) {
    this.#options = options;
  }

  /** A send to count; it goes out once the write says `sent`. */
  count(attempt: A): void {
    this.#pending.sends.push(attempt);
    this.#queue();
  }

  /** Takes back a send not written yet (its attempt will not go out). */
  withdraw(attempt: A): void {
    const at = this.#pending.sends.indexOf(attempt);
    if (at >= 0) this.#pending.sends.splice(at, 1);
  }

  settle(item: SettledItem<A>): void {
    this.#pending.settled.push(item);
    this.#queue();
  }

  unsend(item: UnsentItem<A>): void {
    this.#pending.unsent.push(item);
    this.#queue();
  }

  /** No more queued writes or retries; `flush` still writes what is pending. */
  close(): void {
    this.#closed = true;
    this.#retryTimer?.();
    this.#retryTimer = undefined;
    this.#windowTimer?.();
    this.#windowTimer = undefined;
  }

  #queue(): void {
    if (this.#queued || this.#closed) return;
    this.#queued = true;
    const wait =
      this.#options.underWay() >= BATCH_IN_FLIGHT ? this.#lastWriteAt + BATCH_WINDOW_MS - this.#options.now() : 0;
    // After this turn's I/O callbacks: every send and outcome of the turn in one transaction; under
    // load, of every turn until the window since the last write has passed.
    if (wait <= 0) setImmediate(() => this.flush());
    else this.#windowTimer = this.#options.timers.after(wait, () => this.flush());
  }

  /** Writes what is pending now: counts the sends, records outcomes and unsent attempts. */
  flush(): void {
    this.#queued = false;
    this.#windowTimer = undefined;
    const items = this.#pending;
    this.#pending = { sends: [], settled: [], unsent: [] };
    if (items.sends.length + items.settled.length + items.unsent.length === 0) return;
    const now = this.#options.now();
    this.#lastWriteAt = now;
    const marks: SendMark[] = items.sends.map((attempt) => ({
      attemptId: attempt.delivery.attemptId,
      delivery: attempt.delivery,
      maxAttempts: this.#options.maxAttempts(attempt.delivery),
      requestUUID: attempt.requestUUID,
      sentAt: now,
    }));
    const { verdicts, written } = this.#write(items, marks, now);
    const result: WriteResult<A> = {
      now,
      settled: [],
      unsent: [],
      sends: items.sends.map((attempt, i) => ({ attempt, verdict: verdicts[i]! })),
    };
    items.settled.forEach((item, i) =>
      written.settled[i] ? result.settled.push(item) : this.#keep(() => this.#pending.settled.push(item)),
    );
    items.unsent.forEach((item, i) =>
      written.unsent[i] ? result.unsent.push(item) : this.#keep(() => this.#pending.unsent.push(item)),
    );
    this.#options.onWritten(result);
  }

  /** The whole batch in one transaction; when the store refuses it, each record alone. */
  #write(
    items: Pending<A>,
    marks: SendMark[],
    now: number,
  ): { verdicts: Array<SendVerdict | Error>; written: { settled: boolean[]; unsent: boolean[] } } {
    const { store } = this.#options;
    const batch = {
      sends: marks,
      settled: items.settled.map((item) => item.settlement),
      unsent: items.unsent.map((item) => item.unsent),
    };
    try {
      const verdicts = store.writeOutbox(batch, now);
      return { verdicts, written: { settled: items.settled.map(() => true), unsent: items.unsent.map(() => true) } };
    } catch {
      // One at a time, so one record the store refuses holds back only itself.
      const verdicts = marks.map((mark) => {
        const verdict = orError(() => store.writeOutbox({ sends: [mark], settled: [], unsent: [] }, now));
        return verdict instanceof Error ? verdict : verdict[0]!;
      });
      return {
        verdicts,
        written: {
          settled: items.settled.map((item) => this.#writeSettled(item, now)),
          unsent: items.unsent.map(
            (item) =>
              !(
                orError(() => store.writeOutbox({ sends: [], settled: [], unsent: [item.unsent] }, now)) instanceof
                Error
              ),
          ),
        },
      };
    }
  }

  /** One outcome alone; an answer the store cannot hold is recorded without it. */
  #writeSettled(item: SettledItem<A>, now: number): boolean {
    const { store } = this.#options;
    const plain = orError(() => store.writeOutbox({ sends: [], settled: [item.settlement], unsent: [] }, now));
    if (!(plain instanceof Error)) return true;
    const recorded = item.settlement.attempt;
    const bare = {
      ...item.settlement,
      attempt: {
        ...recorded,
        answer: null,
        error: `${recorded.error ? `${recorded.error}; ` : ''}the answer could not be recorded`,
      },
    };
    const retried = orError(() => store.writeOutbox({ sends: [], settled: [bare], unsent: [] }, now));
    if (!(retried instanceof Error)) return true;
    this.#options.log?.(
      `callback ${item.attempt.delivery.trackingId} delivery ${item.attempt.delivery.idx + 1}: outcome not recorded yet (${retried.message}); not sent again until it is`,
    );
    return false;
  }

  /** An outcome the store could not take yet: kept (its delivery stays under way, never sent again meanwhile) and written again later. */
  #keep(push: () => void): void {
    push();
    if (this.#retryTimer || this.#closed) return;
    this.#retryTimer = this.#options.timers.after(WRITE_RETRY_MS, () => {
      this.#retryTimer = undefined;
      this.#queue();
    });
  }
}

/** The value `write` returns, or the error it throws. */
function orError<T>(write: () => T): T | Error {
  try {
    return write();
  } catch (error) {
    return error as Error;
  }
}
