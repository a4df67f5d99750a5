import { describe, expect, it } from 'vitest';
import type { Judge, ObservedExchange } from './exchange.js';
import { JudgeQueue } from './judge-queue.js';

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

/** A judge that records the seq of what it judged; throws on the seqs in `failOn`. */
function judge(failOn: number[] = []): Judge & { judged: number[] } {
  const judged: number[] = [];
  return {
    judged,
    accept: (item) => {
      if (failOn.includes(item.seq)) throw new Error(`judge bug on ${item.seq}`);
      judged.push(item.seq);
      return [];
    },
    finish: () => {
      throw new Error('not used');
    },
  };
}

/** A schedule run by hand: what the event loop would run later. */
function manual(): { schedule: (run: () => void) => void; runAll: () => void } {
  const runs: Array<() => void> = [];
  return {
    schedule: (run) => void runs.push(run),
    runAll: () => {
      while (runs.length > 0) runs.shift()!();
    },
  };
}

describe('JudgeQueue', () => {
  it('judges nothing while the proxy hands an exchange over: judging runs later, in order', () => {
    const j = judge();
    const later = manual();
    const queue = new JudgeQueue(j, { onFindings: () => undefined, onError: () => undefined, schedule: later.schedule });
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    expect(j.judged).toEqual([]);
    later.runAll();
    expect(j.judged).toEqual([1, 2]);
    expect(queue.notJudged).toBe(0);
  });

  it('sheds what does not fit (by count and by body bytes) and counts it as not judged', () => {
    const j = judge();
    const later = manual();
    const queue = new JudgeQueue(j, { maxExchanges: 2, maxBytes: 10, onFindings: () => undefined, onError: () => undefined, schedule: later.schedule });
    queue.submit(exchange(1, 'AAAA'));
    queue.submit(exchange(2, 'AAAAAAAA'));
    queue.submit(exchange(3));
    later.runAll();
    queue.submit(exchange(4));
    queue.submit(exchange(5));
    queue.submit(exchange(6));
    later.runAll();
    // 2 did not fit by its bytes, 6 by the count.
    expect(j.judged).toEqual([1, 3, 4, 5]);
    expect(queue.notJudged).toBe(2);
  });

  it('goes on after a judgement that throws, and reports it', () => {
    const j = judge([1]);
    const later = manual();
    const errors: unknown[] = [];
    const queue = new JudgeQueue(j, { onFindings: () => undefined, onError: (error) => errors.push(error), schedule: later.schedule });
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    later.runAll();
    expect(j.judged).toEqual([2]);
    expect(errors.map((error) => (error as Error).message)).toEqual(['judge bug on 1']);
  });

  it('at the end judges what waits while time is left, counts the rest, and takes nothing more', async () => {
    const j = judge();
    const never = { schedule: () => undefined };
    const queue = new JudgeQueue(j, { onFindings: () => undefined, onError: () => undefined, ...never });
    queue.submit(exchange(1));
    queue.submit(exchange(2));
    await queue.close({ deadline: Date.now() + 60_000 });
    expect(j.judged).toEqual([1, 2]);
    queue.submit(exchange(3));
    expect(queue.notJudged).toBe(1);

    const stopped = new JudgeQueue(judge(), { onFindings: () => undefined, onError: () => undefined, ...never });
    stopped.submit(exchange(1));
    stopped.submit(exchange(2));
    const abort = new AbortController();
    abort.abort();
    await stopped.close({ deadline: Date.now() + 60_000, signal: abort.signal });
    expect(stopped.notJudged).toBe(2);
  });
});
