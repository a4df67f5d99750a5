/**
 * A crypto thread of the emulator (src/emulator/seal-pool.ts), off its event loop:
 * - `seal`: a callback's payload text sealed with the merchant's key as src/wire/callback-delivery.ts
 *   says (CB-DECRYPT, the profile's padding and segmentation);
 * - `open`: an order request's encrypted field opened (CRYPTO-SAME), the text or the failure's kind
 *   and wording, exactly as src/service/native-codec.ts gives them on the main thread;
 * - `sealResponse`: a result's JSON text sealed for the envelope's data.
 * Keys arrive once per merchant as DER; each job answers with its value or the message of the error it raised.
 */
import { parentPort } from 'node:worker_threads';
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

/** The thread's answer to one job (a sealed body, an opened request), or its word that it is loaded. */
export type SealWorkerAnswer = { id: number; body: string } | { id: number; opened: OpenOutcome } | { id: number; error: string } | { ready: true };

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
    if (message.kind === 'open') answer = { id: message.id, opened: openRequest(message.text, key, message.profile, new Set(message.accept)) };
    else if (message.kind === 'sealResponse') answer = { id: message.id, body: sealResponse(message.text, key, message.profile) };
    else answer = { id: message.id, body: sealCallback(message.text, key, message.profile) };
  } catch (error) {
    answer = { id: message.id, error: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
parentPort?.postMessage({ ready: true } satisfies SealWorkerAnswer);
