/**
 * What the main thread and the judge's thread say to each other (src/observe/judge-queue.ts,
 * src/observe/judge-worker.ts). The thread holds the whole judge: its stream and tally are one
 * state, judged in order, so it is one thread, not a pool.
 */
import type { Judge, ObserveFinding, ObserveResult, ObservedExchange } from './exchange.js';
import { toCloneable, type Cloneable } from './exact-clone.js';
import type { JudgeOptions } from './judge.js';

/** To the thread: an exchange to judge, or a request for the report so far (`final`: the end). */
export type JudgeRequest =
  | { kind: 'exchange'; exchange: ObservedExchange }
  | { kind: 'result'; id: number; final: boolean; unjudged: Array<[reason: string, count: number]> };

/** From the thread, in the order of the requests: one answer per exchange, one per result asked. */
export type JudgeAnswer =
  | { kind: 'ready' }
  | { kind: 'judged'; findings: Cloneable<ObserveFinding[]>; error?: string }
  | { kind: 'result'; id: number; result?: Cloneable<ObserveResult>; dropped: number; error?: string };

/** What the thread starts with: the judge's options, and the flag that stops it judging (Int32, 1 = stop). */
export interface JudgeThreadData {
  options: JudgeOptions;
  stop: SharedArrayBuffer;
  /** Run the thread at the lowest priority (nice 19, Linux). */
  lowerPriority?: boolean;
}

/** Why exchanges were not judged: the notes' reasons (`not judged: N exchanges: <reason>`). */
export const UNJUDGED = {
  shed: "shed: the judge's bounded queue was full (the judge fell behind) or already closed; the capture holds them",
  stopped: 'still waiting for the judge when the time for judging at the stop was up',
  cut: 'in flight at the stop and cut: they never finished',
} as const;

const NONE = toCloneable<ObserveFinding[]>([]);

/**
 * Answers one request with `judge`. Once `stop` is set, waiting exchanges are dropped, not judged,
 * and counted with the next result.
 */
export function judgeServer(judge: Judge, stop: Int32Array): (request: JudgeRequest) => JudgeAnswer {
  let dropped = 0;
  return (request) => {
    if (request.kind === 'exchange') {
      if (Atomics.load(stop, 0) === 1) {
        dropped++;
        return { kind: 'judged', findings: NONE };
      }
      try {
        return { kind: 'judged', findings: toCloneable(judge.accept(request.exchange)) };
      } catch (error) {
        return { kind: 'judged', findings: NONE, error: (error as Error)?.message ?? String(error) };
      }
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
