/**
 * The judge's thread (started by src/observe/judge-queue.ts): decrypting and judging run here,
 * beside the proxy's event loop, never on it.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createJudge } from './judge.js';
import { judgeServer, type JudgeAnswer, type JudgeRequest, type JudgeThreadData } from './judge-protocol.js';

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
const serve = judgeServer(createJudge(data.options), new Int32Array(data.stop));
parentPort!.on('message', (request: JudgeRequest) => parentPort!.postMessage(serve(request)));
parentPort!.postMessage({ kind: 'ready' } satisfies JudgeAnswer);
