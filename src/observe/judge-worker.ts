/**
 * The judge's thread (started by src/observe/judge-queue.ts): decrypting and judging run here,
 * beside the proxy's event loop, never on it.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createJudge } from './judge.js';
import { judgeServer, restAfter, type JudgeAnswer, type JudgeRequest, type JudgeThreadData } from './judge-protocol.js';

const data = workerData as JudgeThreadData;
// At nice 19 the thread runs on CPU no other thread wants (Linux sets a nice value per thread; its id is in
// /proc/thread-self): forwarding never waits for judging, and a judge that falls behind has its queue shed.
if (data.priority === 'low') {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), 19);
  } catch {
    // Elsewhere the thread keeps its priority.
  }
}
const stop = new Int32Array(data.stop);
const serve = judgeServer(createJudge(data.options), stop);
const share = data.cpuShare ?? 1;
/** Until when the thread rests to stay within its share (ms on performance.now's clock). */
let restUntil = 0;
parentPort!.on('message', (request: JudgeRequest) => {
  if (request.kind === 'exchanges' && share < 1) {
    const rest = restUntil - performance.now();
    // Woken early by the stop (Atomics.notify), which drops what waits.
    if (rest > 0) Atomics.wait(stop, 0, 0, rest);
  }
  const started = performance.now();
  parentPort!.postMessage(serve(request));
  if (request.kind !== 'exchanges' || share >= 1) return;
  restUntil = restAfter(restUntil, started, performance.now(), share);
});
parentPort!.postMessage({ kind: 'ready' } satisfies JudgeAnswer);
