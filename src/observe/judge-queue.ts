import { readlinkSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../platform/worker-thread.js';
import type { ObserveFinding, ObserveResult, ObservedExchange } from './exchange.js';
import { fromCloneable } from './exact-clone.js';
import type { JudgeOptions } from './judge.js';
import {
  STOP,
  UNJUDGED,
  type JudgeAnswer,
  type JudgePriority,
  type JudgeRequest,
  type JudgeThreadData,
} from './judge-protocol.js';

/**
 * Judging beside forwarding, not on it: the proxy hands a finished exchange to `submit`, which
 * posts it to the judge's own thread (src/observe/judge-worker.ts) and returns. Decrypting and
 * judging (the RSA blocks of a large request) run there; the proxy's event loop only forwards,
 * captures and counts.
 *
 * At most two batches are on their way to the thread at once; what finishes meanwhile waits here
 * and goes in the next batch. Under a light load each exchange is posted as it finishes; under a
 * heavy one, one message carries many, so the cost of a message (a wake-up of each thread) is not
 * paid per exchange.
 *
 * The queue is bounded by exchanges and by the bytes of their bodies waiting for the thread. When
 * it is full an exchange is shed: not judged, counted (the report's notes and `notJudged`, the
 * metrics), still captured, never held up. A judgement that throws is the judge's bug, reported
 * through `onError`; judging goes on.
 */
interface JudgeQueueOptions {
  /** Exchanges waiting at most (default 10,000). */
  maxExchanges?: number;
  /** Bytes of Base64 body text waiting at most (default 64 MiB). */
  maxBytes?: number;
  /** Settled findings of one exchange, as they are known. */
  onFindings: (findings: ObserveFinding[]) => void;
  /** The judge threw on one exchange, or its thread failed. */
  onError: (error: unknown) => void;
  /** One exchange was shed (for the metrics). */
  onShed?: () => void;
}

/** The far side: the judge's thread, or anything that answers alike (tests). */
export interface JudgePort {
  postMessage(request: JudgeRequest): void;
  on(event: 'message', listener: (answer: JudgeAnswer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  ref?(): void;
  unref?(): void;
  terminate(): Promise<unknown>;
}

const DEFAULT_MAX_EXCHANGES = 10_000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Batches posted and not yet answered, at most: one being judged, one ready behind it. */
const MAX_BATCHES_POSTED = 2;
/** Exchanges in one batch, at most: one structured clone stays short on the forwarding thread. */
const MAX_BATCH = 64;

/** This thread's stat file in /proc (Linux: the thread that forwards starts the judge), else undefined. */
function thisThreadStat(): string | undefined {
  try {
    return `/proc/${readlinkSync('/proc/thread-self')}/stat`;
  } catch {
    return undefined;
  }
}

function sizeOf(exchange: ObservedExchange): number {
  return exchange.request.bodyBase64.length + (exchange.response?.bodyBase64.length ?? 0);
}

interface Asked {
  resolve: (result: ObserveResult | undefined) => void;
  reject: (error: Error) => void;
}

export class JudgeQueue {
  /** Exchanges not judged: shed (queue full or closed), or still waiting when judging had to stop. */
  notJudged = 0;
  /** Shed exchanges not yet told to the judge (they reach its report with the next result). */
  #untold = 0;
  /** Sizes of the exchanges submitted and not yet answered (posted or waiting), oldest first (from `#head`). */
  #sizes: number[] = [];
  /** Exchanges submitted and not yet posted: they go in the next batch. */
  #waiting: ObservedExchange[] = [];
  /** Batches posted and not yet answered. */
  #batchesPosted = 0;
  #head = 0;
  #bytes = 0;
  #closed = false;
  #failure: Error | undefined;
  #nextId = 1;
  readonly #asked = new Map<number, Asked>();
  #onDrained: (() => void) | undefined;
  /** The thread said it is ready (until then it keeps the process alive: someone may await it). */
  #started = false;
  /** Whether the thread keeps the process alive now (ref'd), as last told to it. */
  #held: boolean | undefined;
  #ready: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void };
  readonly #maxExchanges: number;
  readonly #maxBytes: number;

  constructor(
    private readonly port: JudgePort,
    private readonly stop: Int32Array,
    private readonly options: JudgeQueueOptions,
  ) {
    this.#maxExchanges = options.maxExchanges ?? DEFAULT_MAX_EXCHANGES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((done, fail) => ((resolve = done), (reject = fail)));
    // Nobody may wait for it (tests drive a port by hand): an unobserved failure is not a crash.
    promise.catch(() => undefined);
    this.#ready = { promise, resolve, reject };
    port.on('message', (answer) => this.#answered(answer));
    port.on('error', (error) => this.#failed(error));
    port.on('exit', (code) => this.#failed(new Error(`the judge's thread stopped (exit code ${code})`)));
    this.#busy();
  }

  /** A queue in front of a new judge thread holding a judge made with `judge`. */
  static start(
    judge: JudgeOptions,
    options: JudgeQueueOptions & {
      priority?: JudgePriority;
      cpuShare?: number;
      /** The stat file of the thread whose load the judge yields to (default: this thread's, which forwards). */
      forwardingStat?: string;
    },
  ): JudgeQueue {
    const stop = new SharedArrayBuffer(4);
    const forwardingStat = options.forwardingStat ?? thisThreadStat();
    const data: JudgeThreadData = {
      options: judge,
      stop,
      priority: options.priority ?? 'low',
      ...(options.cpuShare !== undefined ? { cpuShare: options.cpuShare } : {}),
      ...(forwardingStat ? { forwardingStat } : {}),
    };
    const worker: Worker = startWorkerThread(new URL('./judge-worker.js', import.meta.url), data);
    return new JudgeQueue(worker, new Int32Array(stop), options);
  }

  /**
   * Resolves once the thread has made its judge (loaded the rules and the checks), so the first
   * exchanges do not wait for that, a stop included; rejects if the thread failed first.
   */
  ready(): Promise<void> {
    return this.#ready.promise;
  }

  /** Exchanges waiting to be judged. */
  get pending(): number {
    return this.#sizes.length - this.#head;
  }

  /** Queues one exchange for judging; sheds it (counted) when the queue is full or closed. */
  submit(exchange: ObservedExchange): void {
    const size = sizeOf(exchange);
    if (
      this.#closed ||
      this.#failure ||
      this.pending >= this.#maxExchanges ||
      (this.pending > 0 && this.#bytes + size > this.#maxBytes)
    ) {
      this.notJudged++;
      this.#untold++;
      this.options.onShed?.();
      return;
    }
    this.#sizes.push(size);
    this.#bytes += size;
    this.#waiting.push(exchange);
    if (this.#batchesPosted < MAX_BATCHES_POSTED) this.#post();
    this.#busy();
  }

  /** Posts the exchanges waiting here, oldest first, as one batch. */
  #post(): void {
    if (this.#waiting.length === 0) return;
    const exchanges = this.#waiting.length <= MAX_BATCH ? this.#waiting : this.#waiting.slice(0, MAX_BATCH);
    this.#waiting = exchanges === this.#waiting ? [] : this.#waiting.slice(MAX_BATCH);
    this.#batchesPosted++;
    this.port.postMessage({ kind: 'exchanges', exchanges });
  }

  /** The report so far (undefined when the judge makes none while running). */
  snapshot(): Promise<ObserveResult | undefined> {
    return this.#ask(false, []);
  }

  /**
   * The end: lets the thread judge what waits until `deadline` (ms since the epoch) passes or
   * `signal` aborts, has it drop the rest (counted as not judged), and returns the final result,
   * with `cut` exchanges (cut at the stop, never finished) counted too. Nothing is queued afterwards.
   */
  async close({
    deadline,
    signal,
    cut = 0,
  }: {
    deadline: number;
    signal?: AbortSignal;
    cut?: number;
  }): Promise<ObserveResult> {
    this.#closed = true;
    // Forwarding has stopped: the share no longer holds, and a resting thread wakes to drain.
    Atomics.store(this.stop, 0, STOP.draining);
    Atomics.notify(this.stop, 0);
    await this.#drained(deadline, signal);
    Atomics.store(this.stop, 0, STOP.stopped);
    try {
      return (await this.#ask(true, [[UNJUDGED.cut, cut]]))!;
    } finally {
      await this.port.terminate();
    }
  }

  /** Resolves once nothing waits, at `deadline`, or when `signal` aborts, whichever is first. */
  #drained(deadline: number, signal?: AbortSignal): Promise<void> {
    if (this.pending === 0 || this.#failure || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // The timer stays referenced until it settles: it is what ends the wait.
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      signal?.addEventListener('abort', done, { once: true });
      this.#onDrained = done;
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  }

  #ask(final: boolean, unjudged: Array<[string, number]>): Promise<ObserveResult | undefined> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    const told: Array<[string, number]> = [[UNJUDGED.shed, this.#untold], ...unjudged];
    this.#untold = 0;
    // The report covers every exchange submitted before it was asked for: they go first.
    while (this.#waiting.length > 0) this.#post();
    return new Promise((resolve, reject) => {
      this.#asked.set(id, { resolve, reject });
      this.#busy();
      this.port.postMessage({ kind: 'result', id, final, unjudged: told });
    });
  }

  #answered(answer: JudgeAnswer): void {
    if (answer.kind === 'ready') {
      this.#started = true;
      this.#ready.resolve();
      return this.#busy();
    }
    if (answer.kind === 'result') {
      const asked = this.#asked.get(answer.id);
      this.#asked.delete(answer.id);
      this.notJudged += answer.dropped;
      if (answer.error !== undefined) asked?.reject(new Error(answer.error));
      else asked?.resolve(answer.result ? fromCloneable(answer.result) : undefined);
    } else {
      this.#batchesPosted--;
      for (let i = 0; i < answer.count; i++) this.#bytes -= this.#sizes[this.#head + i]!;
      this.#head += answer.count;
      // The list is compacted once its answered head is half of it: memory follows what waits.
      if (this.#head > 1024 && this.#head * 2 > this.#sizes.length) {
        this.#sizes.splice(0, this.#head);
        this.#head = 0;
      }
      for (const error of answer.errors) this.options.onError(new Error(error));
      const findings = fromCloneable(answer.findings);
      if (findings.length > 0) this.options.onFindings(findings);
      if (this.#batchesPosted < MAX_BATCHES_POSTED) this.#post();
      if (this.pending === 0) this.#onDrained?.();
    }
    this.#busy();
  }

  /** The thread failed: what waits is not judged, every result asked for fails, and nothing more is posted. */
  #failed(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#ready.reject(error);
    if (!this.#closed) this.options.onError(error);
    this.notJudged += this.pending;
    this.#sizes = [];
    this.#waiting = [];
    this.#head = 0;
    this.#bytes = 0;
    for (const asked of this.#asked.values()) asked.reject(error);
    this.#asked.clear();
    this.#onDrained?.();
  }

  /** The thread keeps the process alive only while it has work: an idle judge never holds a stop up. */
  #busy(): void {
    const busy = !this.#failure && (!this.#started || this.pending > 0 || this.#asked.size > 0);
    // Told to the thread only when it changes: every exchange passes here, on the forwarding thread.
    if (busy === this.#held) return;
    this.#held = busy;
    if (busy) this.port.ref?.();
    else this.port.unref?.();
  }
}
