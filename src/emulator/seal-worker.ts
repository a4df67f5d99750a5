/**
 * A crypto thread of the emulator (src/emulator/seal-pool.ts), off its event loop:
 * - `seal`: a callback's payload text sealed with the merchant's key as src/wire/callback-delivery.ts
 *   says (CB-DECRYPT, the profile's padding and segmentation);
 * - `open`: an order request's encrypted field opened (CRYPTO-SAME), the text or the failure's kind
 *   and wording, exactly as src/service/native-codec.ts gives them on the main thread;
 * - `sealResponse`: a result's JSON text sealed for the envelope's data.
 * Keys arrive once per merchant as DER; each job answers with its value or the message of the error it raised.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { CryptoProfile } from '../core/profile.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import { parseKey, type RsaKey } from '../crypto/keys.js';
import { openRequest, sealResponse } from '../service/native-codec.js';
import type { OpenOutcome } from '../service/pipeline.js';
import { sealCallback } from '../wire/callback-delivery.js';

/** A message to the thread: a key to keep, or a job with a kept key. */
export type SealWorkerRequest =
  | { kind: 'key'; keyId: number; der: Uint8Array }
  | { kind: 'seal'; id: number; keyId: number; text: string; profile: CryptoProfile }
  | { kind: 'sealResponse'; id: number; keyId: number; text: string; profile: CryptoProfile }
  | { kind: 'open'; id: number; keyId: number; text: string; profile: CryptoProfile; accept: CryptoFailureReason[] };

/** What a thread is started with: `lowerPriority` asks it to run at the lowest priority (the pool's spare thread). */
export interface SealWorkerData {
  lowerPriority?: boolean;
}

/**
 * The thread's answer to one job (a sealed body, an opened request), or its word that it is loaded;
 * a thread asked to lower its priority says whether it could, and its thread id.
 */
export type SealWorkerAnswer =
  | { id: number; body: string }
  | { id: number; opened: OpenOutcome }
  | { id: number; error: string }
  | { ready: true; lowered?: { tid: number } | { error: string } };

const keys = new Map<number, RsaKey>();

parentPort?.on('message', (message: SealWorkerRequest) => {
  if (message.kind === 'key') {
    keys.set(message.keyId, parseKey(Buffer.from(message.der).toString('base64'), { source: 'merchant key' }));
    return;
  }
  let answer: SealWorkerAnswer;
  try {
    const key = keys.get(message.keyId);
    if (!key) throw new Error('the sealing thread has no such key');
    if (message.kind === 'open')
      answer = { id: message.id, opened: openRequest(message.text, key, message.profile, new Set(message.accept)) };
    else if (message.kind === 'sealResponse')
      answer = { id: message.id, body: sealResponse(message.text, key, message.profile) };
    else answer = { id: message.id, body: sealCallback(message.text, key, message.profile) };
  } catch (error) {
    answer = { id: message.id, error: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
/**
 * This thread at nice 19, so it runs only on CPU no other thread of the machine wants. Linux sets a
 * nice value per thread, and a thread's id is in /proc/thread-self; elsewhere it fails and the pool
 * does not use the thread.
 */
function lowerPriority(): { tid: number } | { error: string } {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (!Number.isInteger(tid) || tid <= 0) return { error: 'no thread id in /proc/thread-self' };
    setPriority(tid, 19);
    return { tid };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

parentPort?.postMessage({
  ready: true,
  ...((workerData as SealWorkerData | undefined)?.lowerPriority ? { lowered: lowerPriority() } : {}),
} satisfies SealWorkerAnswer);
