import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CryptoProfile } from '../core/profile.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import type { RsaKey } from '../crypto/keys.js';
import type { OpenOutcome } from '../service/pipeline.js';
import type { SealWorkerAnswer, SealWorkerData, SealWorkerRequest } from './seal-worker.js';

/** Seals one callback payload text (CB-DECRYPT): the Base64 body, or a rejection. */
export interface CallbackSealer {
  /** Seal jobs this sealer takes now before its queue is full (the dispatcher claims no more). */
  readonly free: number;
  /** Calls `listener` each time a job ends, so a dispatcher that waited for room looks again. */
  onFree(listener: () => void): void;
  /** The sealed body; rejects with a SealerStopped when the thread died or the sealer closed, with the sealing error otherwise. */
  seal(text: string, key: RsaKey, profile: CryptoProfile): Promise<string>;
  close(): Promise<void>;
}

/**
 * The order endpoints' RSA work on the sealing threads: a request's field opened, a result sealed,
 * each exactly as src/service/native-codec.ts does it on the main thread. A caller told there is no
 * room does the work itself.
 */
export interface RequestCrypto {
  /**
   * Whether an order's job should go to the threads now: while more than half their queue is free.
   * The other half stays for callbacks, so a flood of orders cannot hold back the dispatcher (which
   * claims when half the queue is free); past it, the order's work runs on the event loop.
   */
  readonly roomForRequests: boolean;
  /** Rejects with a SealerStopped when the thread died or the pool closed. */
  open(
    data: string,
    key: RsaKey,
    profile: CryptoProfile,
    accept: ReadonlySet<CryptoFailureReason>,
  ): Promise<OpenOutcome>;
  /** Rejects with a SealerStopped when the thread died or the pool closed, with the sealing error otherwise. */
  sealResponse(json: string, key: RsaKey, profile: CryptoProfile): Promise<string>;
}

/** The sealer's request crypto when it has one (a SealPool does; a test's sealer may not). */
export function requestCryptoOf(sealer: CallbackSealer): RequestCrypto | undefined {
  const candidate = sealer as Partial<RequestCrypto>;
  return typeof candidate.open === 'function' &&
    typeof candidate.sealResponse === 'function' &&
    'roomForRequests' in sealer
    ? (sealer as CallbackSealer & RequestCrypto)
    : undefined;
}

/** A seal job lost with its thread (a crash, or the sealer closing): the attempt never went out. */
export class SealerStopped extends Error {}

/** Jobs queued per thread at most: enough to keep it busy between two turns of the event loop, few enough that a shutdown loses little. */
const QUEUE_PER_THREAD = 32;

interface Job {
  resolve(value: string | OpenOutcome): void;
  reject(error: Error): void;
}

/** A job as sent to a thread, without the id and key id the pool adds. */
type JobRequest = DistributiveOmit<Exclude<SealWorkerRequest, { kind: 'key' }>, 'id' | 'keyId'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

interface Thread {
  worker: Worker;
  jobs: Map<number, Job>;
  /** Keys this thread holds, by key id. */
  keys: Set<number>;
  /** Settles when the thread has loaded (or died). */
  ready: Promise<void>;
  /** The low-priority spare thread (its jobs are not counted in `#pending`). */
  spare: boolean;
}

/**
 * A small pool of worker threads that seal callbacks off the event loop, so the emulator's thread
 * only sends, reads answers and writes the store while RSA runs on another core. Size:
 * max(1, availableParallelism() - 1), started by `warm` or on the first job. Each thread has a bounded queue
 * (`free` says how many jobs fit). A thread that dies fails its jobs with SealerStopped (the
 * dispatcher records such an attempt as not sent, uncounted, and the delivery stays pending) and is
 * replaced on the next job. A thread is referenced only while it has jobs, so an idle pool never
 * keeps the process alive.
 *
 * With `spare`, one more thread runs at the lowest priority (nice 19, Linux), started by the first
 * seal that fills every queue: it takes callback seals only, and only those that find every
 * other thread's queue full, so it uses CPU that nothing else on the machine wants and never holds
 * back the event loop or an order's RSA (docs/decisions/0097-spare-sealing-thread.md). Where its
 * priority cannot be lowered it is not used.
 */
export class SealPool implements CallbackSealer, RequestCrypto {
  readonly #size: number;
  readonly #threads: Array<Thread | undefined>;
  readonly #keyIds = new WeakMap<RsaKey, number>();
  readonly #listeners: Array<() => void> = [];
  #nextKey = 0;
  #nextJob = 0;
  /** Jobs on the threads at normal priority. */
  #pending = 0;
  #closed = false;
  /** The low-priority thread: wanted (asked for and not refused), started, and usable once it lowered its priority. */
  #spareWanted: boolean;
  #spare: Thread | undefined;
  #spareUsable = false;
  #spareTid: number | undefined;

  readonly #start: (data?: SealWorkerData) => Worker;

  /**
   * `size` threads (default max(1, availableParallelism() - 1)); `spare`: one more at the lowest
   * priority for callback seals; `startWorker` starts one (default: seal-worker; a test passes one
   * that dies, or that cannot lower its priority).
   */
  constructor(options: { size?: number; spare?: boolean; startWorker?: (data?: SealWorkerData) => Worker } = {}) {
    this.#size = Math.max(1, Math.floor(options.size ?? Math.max(1, availableParallelism() - 1)));
    this.#start = options.startWorker ?? startSealWorker;
    this.#threads = Array.from({ length: this.#size }, () => undefined);
    this.#spareWanted = options.spare ?? false;
  }

  get free(): number {
    if (this.#closed) return 0;
    const spare = this.#spareUsable && this.#spare ? QUEUE_PER_THREAD - this.#spare.jobs.size : 0;
    return this.#size * QUEUE_PER_THREAD - this.#pending + spare;
  }

  get roomForRequests(): boolean {
    // Strictly more than half of the normal threads' queues (orders never go to the spare): orders
    // never leave callbacks less than the half the dispatcher claims at.
    return !this.#closed && this.#size * QUEUE_PER_THREAD - this.#pending > (this.#size * QUEUE_PER_THREAD) / 2;
  }

  /** The low-priority thread's id while it is in use (tests read its nice value in /proc). */
  get spareThreadId(): number | undefined {
    return this.#spareUsable ? this.#spareTid : undefined;
  }

  onFree(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Starts every thread but the spare now, so the first callback does not wait for a thread to
   * load; settles when each has loaded (or died: it is replaced on the next job).
   */
  async warm(): Promise<void> {
    if (this.#closed) return;
    for (let i = 0; i < this.#size; i++) this.#threads[i] ??= this.#spawn(i);
    // Not the spare: it starts on the first seal that fills every queue, so an emulator that never
    // sees a storm never holds it.
    await Promise.all(this.#threads.map((thread) => thread?.ready));
  }

  seal(text: string, key: RsaKey, profile: CryptoProfile): Promise<string> {
    return this.#run(key, { kind: 'seal', text, profile }) as Promise<string>;
  }

  open(
    data: string,
    key: RsaKey,
    profile: CryptoProfile,
    accept: ReadonlySet<CryptoFailureReason>,
  ): Promise<OpenOutcome> {
    return this.#run(key, { kind: 'open', text: data, profile, accept: [...accept] }) as Promise<OpenOutcome>;
  }

  sealResponse(json: string, key: RsaKey, profile: CryptoProfile): Promise<string> {
    return this.#run(key, { kind: 'sealResponse', text: json, profile }) as Promise<string>;
  }

  #run(key: RsaKey, request: JobRequest): Promise<string | OpenOutcome> {
    if (this.#closed) return Promise.reject(new SealerStopped('the sealing threads are stopped'));
    // The thread with the fewest jobs.
    let index = 0;
    for (let i = 1; i < this.#size; i++)
      if ((this.#threads[i]?.jobs.size ?? 0) < (this.#threads[index]?.jobs.size ?? 0)) index = i;
    let thread = this.#threads[index] ?? (this.#threads[index] = this.#spawn(index));
    if (request.kind === 'seal' && this.#spareWanted) {
      // A callback seal that finds every queue full goes to the spare thread. The spare starts when
      // a seal fills the last place: the dispatcher claims no more than `free`, so it would never
      // send a seal past a full queue before the spare's places count.
      if (
        thread.jobs.size >= QUEUE_PER_THREAD &&
        this.#spareUsable &&
        this.#spare &&
        this.#spare.jobs.size < QUEUE_PER_THREAD
      )
        thread = this.#spare;
      else if (thread.jobs.size + 1 >= QUEUE_PER_THREAD) this.#spare ??= this.#spawn('spare');
    }
    let keyId = this.#keyIds.get(key);
    if (keyId === undefined) this.#keyIds.set(key, (keyId = this.#nextKey++));
    if (!thread.keys.has(keyId)) {
      const der = key.keyObject.export({ format: 'der', type: key.half === 'private' ? 'pkcs8' : 'spki' });
      thread.worker.postMessage({ kind: 'key', keyId, der } satisfies SealWorkerRequest);
      thread.keys.add(keyId);
    }
    const id = this.#nextJob++;
    const chosen = thread;
    return new Promise<string | OpenOutcome>((resolve, reject) => {
      if (chosen.jobs.size === 0) chosen.worker.ref();
      chosen.jobs.set(id, { resolve, reject });
      if (!chosen.spare) this.#pending++;
      // The profile as a plain copy (a frozen default or a caller's object with more fields).
      chosen.worker.postMessage({ ...request, profile: { ...request.profile }, id, keyId } as SealWorkerRequest);
    });
  }

  /** Stops every thread; jobs not answered yet fail with SealerStopped. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const threads = [...this.#threads, this.#spare].filter((thread): thread is Thread => thread !== undefined);
    this.#threads.fill(undefined);
    this.#spare = undefined;
    this.#spareUsable = false;
    for (const thread of threads) this.#fail(thread, 'the emulator shut down');
    await Promise.allSettled(threads.map((thread) => thread.worker.terminate()));
  }

  #spawn(index: number | 'spare'): Thread {
    const spare = index === 'spare';
    const worker = spare ? this.#start({ lowerPriority: true }) : this.#start();
    let loaded = () => {};
    const thread: Thread = {
      worker,
      jobs: new Map(),
      keys: new Set(),
      ready: new Promise<void>((resolve) => (loaded = resolve)),
      spare,
    };
    worker.unref();
    worker.on('message', (answer: SealWorkerAnswer) => {
      if ('ready' in answer) {
        if (spare) this.#spareLoaded(thread, answer.lowered);
        return loaded();
      }
      const job = thread.jobs.get(answer.id);
      if (!job) return;
      this.#end(thread, answer.id);
      if ('body' in answer) job.resolve(answer.body);
      else if ('opened' in answer) job.resolve(answer.opened);
      else job.reject(new Error(answer.error));
    });
    const died = (why: string) => {
      loaded();
      if (spare) {
        if (this.#spare === thread) {
          this.#spare = undefined;
          this.#spareUsable = false;
        }
      } else if (this.#threads[index] === thread) this.#threads[index] = undefined;
      this.#fail(thread, why);
    };
    worker.on('error', (error) => died(`the sealing thread failed: ${error.message}`));
    worker.on('exit', (code) => died(`the sealing thread stopped (exit code ${code})`));
    return thread;
  }

  /** The spare thread loaded: in use once it runs at the lowest priority; otherwise stopped and never asked for again. */
  #spareLoaded(thread: Thread, lowered: { tid: number } | { error: string } | undefined): void {
    if (this.#spare !== thread || this.#closed) return;
    if (lowered && 'tid' in lowered) {
      this.#spareUsable = true;
      this.#spareTid = lowered.tid;
      // More room: a dispatcher waiting for it claims again.
      for (const listener of this.#listeners) listener();
      return;
    }
    // At normal priority it would take CPU from the event loop: not used.
    this.#spareWanted = false;
    this.#spare = undefined;
    void thread.worker.terminate();
  }

  #fail(thread: Thread, why: string): void {
    const jobs = [...thread.jobs];
    for (const [id, job] of jobs) {
      this.#end(thread, id);
      job.reject(new SealerStopped(why));
    }
  }

  #end(thread: Thread, id: number): void {
    if (!thread.jobs.delete(id)) return;
    if (!thread.spare) this.#pending--;
    if (thread.jobs.size === 0) thread.worker.unref();
    for (const listener of this.#listeners) listener();
  }
}

/**
 * The worker thread running seal-worker: its compiled .js beside this file, or (run from the
 * TypeScript sources, under tsx or vitest) the .ts file through tsx's loader.
 */
export function startSealWorker(data: SealWorkerData = {}): Worker {
  const js = new URL('./seal-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData: data });
  const ts = pathToFileURL(fileURLToPath(new URL('./seal-worker.ts', import.meta.url))).href;
  // tsx's ESM entry (its package exports name it; require.resolve would give the CommonJS one).
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const entry = (
    JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  ).exports['./esm/api']!.import.default;
  const api = new URL(entry, pathToFileURL(manifest)).href;
  const bootstrap = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(ts)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}
