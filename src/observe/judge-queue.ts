import type { Judge, ObserveFinding, ObservedExchange } from './exchange.js';

/**
 * Judging beside forwarding, not on its path: the proxy hands a finished exchange to `submit`,
 * which only queues it; the queue is judged one exchange per turn of the event loop
 * (`setImmediate`), so the sockets of every other exchange are served between two judgements.
 *
 * The queue is bounded by exchanges and by the bytes of their bodies. When it is full an exchange
 * is shed: not judged, counted in `notJudged` (the capture still holds it), never held up. A
 * judgement that throws is the judge's bug, reported through `onError`; judging goes on.
 *
 * One judgement still runs on the event loop: a request of the largest recorded size takes the
 * time of its RSA blocks. Moving the judge to a worker thread is the next step (the stream's state
 * lives in the judge, so it would move whole).
 */
interface JudgeQueueOptions {
  /** Exchanges waiting at most (default 10,000). */
  maxExchanges?: number;
  /** Bytes of Base64 body text waiting at most (default 64 MiB). */
  maxBytes?: number;
  /** Settled findings of one exchange, as they are known. */
  onFindings: (findings: ObserveFinding[]) => void;
  /** The judge threw on one exchange. */
  onError: (error: unknown) => void;
  /** When the next judgement runs (default setImmediate: after the pending I/O). */
  schedule?: (run: () => void) => void;
}

const DEFAULT_MAX_EXCHANGES = 10_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

function sizeOf(exchange: ObservedExchange): number {
  return exchange.request.bodyBase64.length + (exchange.response?.bodyBase64.length ?? 0);
}

export class JudgeQueue {
  /** Exchanges shed (queue full, or still waiting when judging had to stop): never judged. */
  notJudged = 0;
  private readonly waiting: ObservedExchange[] = [];
  private head = 0;
  private bytes = 0;
  private scheduled = false;
  private closed = false;
  private readonly maxExchanges: number;
  private readonly maxBytes: number;
  private readonly schedule: (run: () => void) => void;

  constructor(
    private readonly judge: Judge,
    private readonly options: JudgeQueueOptions,
  ) {
    this.maxExchanges = options.maxExchanges ?? DEFAULT_MAX_EXCHANGES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.schedule = options.schedule ?? ((run) => void setImmediate(run));
  }

  /** Exchanges waiting to be judged. */
  get pending(): number {
    return this.waiting.length - this.head;
  }

  /** Queues one exchange for judging; sheds it (counted) when the queue is full or closed. */
  submit(exchange: ObservedExchange): void {
    const size = sizeOf(exchange);
    if (this.closed || this.pending >= this.maxExchanges || (this.pending > 0 && this.bytes + size > this.maxBytes)) {
      this.notJudged++;
      return;
    }
    this.waiting.push(exchange);
    this.bytes += size;
    this.wake();
  }

  private wake(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      if (this.judgeOne() && this.pending > 0) this.wake();
    });
  }

  /** Judges the oldest waiting exchange; false when none waited. */
  private judgeOne(): boolean {
    if (this.head >= this.waiting.length) return false;
    const exchange = this.waiting[this.head]!;
    this.waiting[this.head++] = undefined as unknown as ObservedExchange;
    // The array is compacted once its judged head is half of it: memory follows what waits.
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    this.bytes -= sizeOf(exchange);
    try {
      this.options.onFindings(this.judge.accept(exchange));
    } catch (error) {
      this.options.onError(error);
    }
    return true;
  }

  /**
   * The end: judges what waits until `deadline` (ms since the epoch) passes or `signal` aborts,
   * then counts the rest as not judged. Nothing is queued afterwards.
   */
  async close({ deadline, signal }: { deadline: number; signal?: AbortSignal }): Promise<void> {
    this.closed = true;
    while (this.pending > 0 && Date.now() < deadline && !signal?.aborted) {
      this.judgeOne();
      // A turn of the event loop between judgements, so a second signal is heard.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.notJudged += this.pending;
    this.waiting.length = 0;
    this.head = 0;
    this.bytes = 0;
  }
}
