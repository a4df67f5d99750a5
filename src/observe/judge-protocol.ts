/**
 * What the main thread and the judge's thread say to each other (src/observe/judge-queue.ts,
 * src/observe/judge-worker.ts). The thread holds the whole judge: its stream and tally are one
 * state, judged in order, so it is one thread, not a pool.
 */
import type { Judge, ObserveFinding, ObserveResult, ObservedExchange } from './exchange.js';
import { toCloneable, type Cloneable } from './exact-clone.js';
import type { JudgeOptions } from './judge.js';

/**
 * To the thread: exchanges to judge, in the order they finished (one message carries every exchange
 * that finished while the thread was busy), or a request for the report so far (`final`: the end).
 */
export type JudgeRequest =
  | { kind: 'exchanges'; exchanges: ObservedExchange[] }
  | { kind: 'result'; id: number; final: boolean; unjudged: Array<[reason: string, count: number]> };

/**
 * From the thread, in the order of the requests: one answer per batch of exchanges (`count` of them,
 * their findings in order, the message of each judgement that threw), one per result asked.
 */
export type JudgeAnswer =
  | { kind: 'ready' }
  | { kind: 'judged'; count: number; findings: Cloneable<ObserveFinding[]>; errors: string[] }
  | { kind: 'result'; id: number; result?: Cloneable<ObserveResult>; dropped: number; error?: string };

/**
 * The judge thread's scheduling priority. `low` (nice 19 on Linux): the thread runs on CPU that
 * forwarding does not want, and a judge that falls behind has its queue shed. `normal`: judging
 * competes with forwarding for the CPU on equal terms.
 */
export type JudgePriority = 'low' | 'normal';

/**
 * What the thread starts with: the judge's options, and the flag that stops it (an Int32, `STOP`:
 * draining at the end lifts the share, stopped drops what still waits).
 */
export interface JudgeThreadData {
  options: JudgeOptions;
  stop: SharedArrayBuffer;
  priority: JudgePriority;
  /** The share of one core's time the thread may spend judging (0 < share ≤ 1; 1: no limit). */
  cpuShare?: number;
  /**
   * The forwarding thread's stat file in /proc (Linux), read to see how busy forwarding is: while
   * it keeps that thread busy, a judge at low priority takes a tenth of its share (`shareNow`).
   */
  forwardingStat?: string;
}

/** Forwarding this busy (its thread's CPU time ÷ wall time) or more is a heavy load: the judge steps back. */
const FORWARDING_BUSY = 0.5;
/** The part of its share the judge keeps while forwarding is busy. */
const SHARE_WHILE_FORWARDING_BUSY = 0.1;
/** The shortest window the forwarding thread's load is measured over (its CPU clock ticks in 10 ms). */
const BUSY_WINDOW_MS = 250;

/**
 * The judge's share now: all of `share` while forwarding is light (or its load is unknown), a tenth
 * of it while forwarding keeps its thread at least half busy. On a machine whose cores the proxy,
 * its load and its upstream share, a judge at nice 19 still slows forwarding (decision 0124).
 *
 * @example shareNow(0.25, 0.8) // 0.025
 */
export function shareNow(share: number, forwardingBusy: number | undefined): number {
  return forwardingBusy !== undefined && forwardingBusy >= FORWARDING_BUSY
    ? share * SHARE_WHILE_FORWARDING_BUSY
    : share;
}

/**
 * How busy a thread has been: fed its CPU time (ms) now and then, it gives the CPU time ÷ wall time
 * over the last window of at least 250 ms, the last such figure between windows, and undefined
 * before the first window closes or when the CPU time cannot be read.
 */
export class BusyMeter {
  #since: { at: number; cpu: number } | undefined;
  #busy: number | undefined;

  sample(now: number, cpuMs: number | undefined): number | undefined {
    if (cpuMs === undefined) {
      this.#since = undefined;
      this.#busy = undefined;
      return undefined;
    }
    if (!this.#since) this.#since = { at: now, cpu: cpuMs };
    else if (now - this.#since.at >= BUSY_WINDOW_MS) {
      this.#busy = (cpuMs - this.#since.cpu) / (now - this.#since.at);
      this.#since = { at: now, cpu: cpuMs };
    }
    return this.#busy;
  }
}

/** The longest rest the share asks for at once (after one very large exchange): a report asked for waits no longer. */
const MAX_REST_MS = 2_000;

/**
 * Until when the judge's thread rests (ms, on the clock of `now`) after spending `spent` ms of CPU
 * on a batch, so it spends at most `share` of one core judging; `restUntil` is the rest owed before
 * (time spent idle since pays for it).
 *
 * @example restAfter(0, 10, 110, 0.25) // 140: 10 ms judged, 30 ms of rest
 */
export function restAfter(restUntil: number, spent: number, now: number, share: number): number {
  if (share >= 1) return 0;
  return Math.min(Math.max(restUntil, now) + spent * (1 / share - 1), now + MAX_REST_MS);
}

/** The stop flag's values (an Int32 shared with the judge's thread). */
export const STOP = { running: 0, stopped: 1, draining: 2 } as const;

/** Why exchanges were not judged: the notes' reasons (`not judged: N exchanges: <reason>`). */
export const UNJUDGED = {
  shed: "shed: the judge's bounded queue was full (the judge fell behind) or already closed; the capture holds them",
  stopped: 'still waiting for the judge when the time for judging at the stop was up',
  cut: 'in flight at the stop and cut: they never finished',
} as const;

/**
 * Answers one request with `judge`. Once `stop` is set, waiting exchanges are dropped, not judged,
 * and counted with the next result.
 */
export function judgeServer(judge: Judge, stop: Int32Array): (request: JudgeRequest) => JudgeAnswer {
  let dropped = 0;
  return (request) => {
    if (request.kind === 'exchanges') {
      const findings: ObserveFinding[] = [];
      const errors: string[] = [];
      for (const exchange of request.exchanges) {
        if (Atomics.load(stop, 0) === STOP.stopped) {
          dropped++;
          continue;
        }
        try {
          findings.push(...judge.accept(exchange));
        } catch (error) {
          errors.push((error as Error)?.message ?? String(error));
        }
      }
      return { kind: 'judged', count: request.exchanges.length, findings: toCloneable(findings), errors };
    }
    for (const [reason, count] of request.unjudged) judge.unjudged?.(reason, count);
    judge.unjudged?.(UNJUDGED.stopped, dropped);
    const answer = { kind: 'result' as const, id: request.id, dropped };
    dropped = 0;
    try {
      const result = request.final ? judge.finish() : judge.snapshot?.();
      return result ? { ...answer, result: toCloneable(result) } : answer;
    } catch (error) {
      return { ...answer, error: (error as Error)?.message ?? String(error) };
    }
  };
}
