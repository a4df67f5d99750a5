/**
 * The judge's thread (started by src/observe/judge-queue.ts): decrypting and judging run here,
 * beside the proxy's event loop, never on it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createJudge } from './judge.js';
import { judgeServer, type JudgeRequest, type JudgeThreadData } from './judge-protocol.js';

const data = workerData as JudgeThreadData;
const serve = judgeServer(createJudge(data.options), new Int32Array(data.stop));
parentPort!.on('message', (request: JudgeRequest) => parentPort!.postMessage(serve(request)));
