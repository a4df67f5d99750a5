import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import type { Judge, ObserveFinding, ObserveResult, ObservedExchange } from './exchange.js';
import { judgeServer, UNJUDGED, type JudgeAnswer, type JudgeRequest } from './judge-protocol.js';
import { JudgeQueue, type JudgePort } from './judge-queue.js';

function exchange(seq: number, body = ''): ObservedExchange {
  return {
    v: 1,
    seq,
    kind: 'energy',
    direction: 'merchant→service',
    startedAt: 1,
    endedAt: 2,
    request: { method: 'POST', path: '/', headers: {}, bodyBase64: body },
    response: { status: 200, headers: {}, bodyBase64: '' },
  };
}

/** A judge that records the seq of what it judged and what it was told was not judged; throws on the seqs in `failOn`. */
function judge(failOn: number[] = []): Judge & { judged: number[]; unjudgedSeen: Array<[string, number]> } {
  const judged: number[] = [];
  const unjudgedSeen: Array<[string, number]> = [];
  const result = (): ObserveResult => ({
    exchanges: judged.length,
    report: {
      target: {},
      summary: { passed: 0, failed: 0, warnings: 0, skipped: 0, durationMs: 0 },
      results: [],
      notes: [],
    } as never,
    forgottenEvents: 0,
    notJudged: unjudgedSeen.reduce((n, [, count]) => n + count, 0),
  });
  return {
    judged,
    unjudgedSeen,
    accept: (item) => {
      if (failOn.includes(item.seq)) throw new Error(`judge bug on ${item.seq}`);
      judged.push(item.seq);
      const finding = {
        id: `seq-${item.seq}`,
        status: 'failed',
        rules: [],
        evidence: { amount: new LosslessNumber('12345678901234567890.10') },
      };
      return [finding as unknown as ObserveFinding];
    },
    unjudged: (reason, count) => void (count > 0 && unjudgedSeen.push([reason, count])),
    snapshot: result,
    finish: result,
  };
}

/**
 * The judge's thread played by hand: requests wait until `runAll` answers them (through a
 * structured clone, as a thread's would), so a test decides when the judge catches up.
 */
function manualPort(target: Judge): {
  port: JudgePort;
  stop: Int32Array;
  runAll: () => void;
  runOne: () => void;
  posted: JudgeRequest[];
} {
  const events = new EventEmitter();
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const serve = judgeServer(target, stop);
  const waiting: JudgeRequest[] = [];
  const posted: JudgeRequest[] = [];
  const port: JudgePort = {
    postMessage: (request) => {
      waiting.push(structuredClone(request));
      posted.push(request);
    },
    on: (event: string, listener: Parameters<EventEmitter['on']>[1]) => events.on(event, listener),
    terminate: async () => undefined,
  };
  const runOne = () => void events.emit('message', structuredClone(serve(waiting.shift()!)) as JudgeAnswer);
  const runAll = () => {
    while (waiting.length > 0) runOne();
  };
  return { port, stop, runAll, runOne, posted };
}

const quiet = { onFindings: () => undefined, onError: () => undefined };

describe('JudgeQueue', () => {
  it('judges nothing while the proxy hands an exchange over: the judge answers later, in order', () => {
    const j = judge();
    const thread = manualPort(j);
    const found: ObserveFinding[] = [];
    const queue = new JudgeQueue(thread.port, thread.stop, {
      ...quiet,
      onFindings: (findings) => found.push(...findings),
    });
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    expect(j.judged).toEqual([]);
    expect(queue.pending).toBe(2);
    thread.runAll();
    expect(j.judged).toEqual([1, 2]);
    expect(queue.pending).toBe(0);
    expect(queue.notJudged).toBe(0);
    // An exact number of the evidence crosses the thread exact.
    expect(found.map((finding) => finding.id)).toEqual(['seq-1', 'seq-2']);
    expect(found[0]!.evidence!.amount).toBeInstanceOf(LosslessNumber);
    expect((found[0]!.evidence!.amount as LosslessNumber).value).toBe('12345678901234567890.10');
  });

  it('sheds what does not fit (by count and by body bytes), counts it, and tells the judge with the next report', async () => {
    const j = judge();
    const thread = manualPort(j);
    let shedSeen = 0;
    const queue = new JudgeQueue(thread.port, thread.stop, {
      ...quiet,
      maxExchanges: 2,
      maxBytes: 10,
      onShed: () => void shedSeen++,
    });
    queue.submit(exchange(1, 'AAAA'));
    queue.submit(exchange(2, 'AAAAAAAA'));
    queue.submit(exchange(3));
    thread.runAll();
    queue.submit(exchange(4));
    queue.submit(exchange(5));
    queue.submit(exchange(6));
    thread.runAll();
    // 2 did not fit by its bytes, 6 by the count.
    expect(j.judged).toEqual([1, 3, 4, 5]);
    expect(queue.notJudged).toBe(2);
    expect(shedSeen).toBe(2);
    const snapshot = queue.snapshot();
    thread.runAll();
    expect((await snapshot)!.notJudged).toBe(2);
    expect(j.unjudgedSeen).toEqual([[UNJUDGED.shed, 2]]);
  });

  it('goes on after a judgement that throws, and reports it', () => {
    const j = judge([1]);
    const thread = manualPort(j);
    const errors: unknown[] = [];
    const queue = new JudgeQueue(thread.port, thread.stop, { ...quiet, onError: (error) => errors.push(error) });
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    thread.runAll();
    expect(j.judged).toEqual([2]);
    expect(errors.map((error) => (error as Error).message)).toEqual(['judge bug on 1']);
  });

  it('at the end judges what waits while time is left, then the final result; nothing is queued afterwards', async () => {
    const j = judge();
    const thread = manualPort(j);
    const queue = new JudgeQueue(thread.port, thread.stop, quiet);
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    const closing = queue.close({ deadline: Date.now() + 60_000, cut: 3 });
    thread.runAll();
    // The final result is asked for once the thread has caught up.
    await new Promise((resolve) => setImmediate(resolve));
    thread.runAll();
    const result = await closing;
    expect(j.judged).toEqual([1, 2]);
    expect(j.unjudgedSeen).toEqual([[UNJUDGED.cut, 3]]);
    expect(result.notJudged).toBe(3);
    queue.submit(exchange(3));
    expect(queue.notJudged).toBe(1);
  });

  it('a second signal at the end: what waits is dropped by the thread and counted as not judged', async () => {
    const j = judge();
    const thread = manualPort(j);
    const queue = new JudgeQueue(thread.port, thread.stop, quiet);
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    const abort = new AbortController();
    abort.abort();
    const closing = queue.close({ deadline: Date.now() + 60_000, signal: abort.signal });
    await new Promise((resolve) => setImmediate(resolve));
    thread.runAll();
    const result = await closing;
    expect(j.judged).toEqual([]);
    expect(queue.notJudged).toBe(2);
    expect(j.unjudgedSeen).toEqual([[UNJUDGED.stopped, 2]]);
    expect(result.notJudged).toBe(2);
  });

  it('posts each exchange at once while the thread keeps up, and what finishes meanwhile in batches', () => {
    const j = judge();
    const thread = manualPort(j);
    const queue = new JudgeQueue(thread.port, thread.stop, quiet);
    for (let seq = 1; seq <= 100; seq++) queue.submit(exchange(seq));
    // Two single exchanges went at once; the other 98 wait for the thread to answer.
    const sizes = () => thread.posted.map((request) => (request.kind === 'exchanges' ? request.exchanges.length : 0));
    expect(sizes()).toEqual([1, 1]);
    expect(queue.pending).toBe(100);
    thread.runOne();
    // One answer, one batch (at most 64 exchanges in a message).
    expect(sizes()).toEqual([1, 1, 64]);
    thread.runAll();
    expect(sizes()).toEqual([1, 1, 64, 34]);
    expect(j.judged).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(queue.pending).toBe(0);
  });

  it('a report asked for covers every exchange submitted before it, the waiting ones too', async () => {
    const j = judge();
    const thread = manualPort(j);
    const queue = new JudgeQueue(thread.port, thread.stop, quiet);
    for (let seq = 1; seq <= 5; seq++) queue.submit(exchange(seq));
    const snapshot = queue.snapshot();
    thread.runAll();
    expect((await snapshot)!.exchanges).toBe(5);
    expect(j.judged).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports each judgement that threw in a batch, and judges the rest of it', () => {
    const j = judge([3, 5]);
    const thread = manualPort(j);
    const errors: unknown[] = [];
    const queue = new JudgeQueue(thread.port, thread.stop, { ...quiet, onError: (error) => errors.push(error) });
    for (let seq = 1; seq <= 6; seq++) queue.submit(exchange(seq));
    thread.runAll();
    expect(j.judged).toEqual([1, 2, 4, 6]);
    expect(errors.map((error) => (error as Error).message)).toEqual(['judge bug on 3', 'judge bug on 5']);
    expect(queue.pending).toBe(0);
  });
});
