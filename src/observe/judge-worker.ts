/**
 * The judge's thread (started by src/observe/judge-queue.ts): decrypting and judging run here,
 * beside the proxy's event loop, never on it.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createJudge } from './judge.js';
import {
  BusyMeter,
  judgeServer,
  restAfter,
  shareNow,
  STOP,
  type JudgeAnswer,
  type JudgeRequest,
  type JudgeThreadData,
} from './judge-protocol.js';

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

/**
 * CPU time a thread has used (ms), from its stat file in /proc (Linux; clock ticks of 10 ms, coarse
 * for one batch and right over many); elsewhere undefined. For this thread, wall time then stands in (more
 * than the CPU time on a busy machine, so the thread rests longer, never shorter).
 */
function threadCpuMs(stat = '/proc/thread-self/stat'): number | undefined {
  try {
    const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** How busy forwarding is: read only where a low-priority judge steps back for it. */
const forwarding = data.priority === 'low' && data.forwardingStat ? data.forwardingStat : undefined;
const forwardingLoad = new BusyMeter();

/** Until when the thread rests to stay within its share (ms on performance.now's clock). */
let restUntil = 0;
parentPort!.on('message', (request: JudgeRequest) => {
  const paced = request.kind === 'exchanges' && share < 1;
  // A stop wakes a resting thread (Atomics.notify): draining lifts the share, stopping drops what waits.
  const rest = restUntil - performance.now();
  if (paced && rest > 0 && Atomics.load(stop, 0) === STOP.running) Atomics.wait(stop, 0, STOP.running, rest);
  const [wallBefore, cpuBefore] = paced ? [performance.now(), threadCpuMs()] : [0, undefined];
  parentPort!.postMessage(serve(request));
  if (!paced) return;
  const now = performance.now();
  const cpuAfter = cpuBefore === undefined ? undefined : threadCpuMs();
  const spent = cpuBefore === undefined || cpuAfter === undefined ? now - wallBefore : cpuAfter - cpuBefore;
  const busy = forwarding ? forwardingLoad.sample(now, threadCpuMs(forwarding)) : undefined;
  restUntil = restAfter(restUntil, spent, now, shareNow(share, busy));
});
parentPort!.postMessage({ kind: 'ready' } satisfies JudgeAnswer);
