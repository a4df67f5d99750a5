/**
 * The sealing thread of the callback dispatcher (src/emulator/seal-pool.ts): seals a callback's
 * payload text with the merchant's key as src/wire/callback-delivery.ts says (CB-DECRYPT, the
 * profile's padding and segmentation), off the emulator's event loop. Keys arrive once per merchant
 * as PKCS#8 DER; each job answers with the Base64 body or the message of the error sealing raised.
 */
import { parentPort } from 'node:worker_threads';
import type { CryptoProfile } from '../core/profile.js';
import { parseKey, type RsaKey } from '../crypto/keys.js';
import { sealCallback } from '../wire/callback-delivery.js';

/** A message to the thread: a key to keep, or a payload to seal with a kept key. */
export type SealWorkerRequest =
  { kind: 'key'; keyId: number; der: Uint8Array } | { kind: 'seal'; id: number; keyId: number; text: string; profile: CryptoProfile };

/** The thread's answer to one seal job, or its word that it is loaded. */
export type SealWorkerAnswer = { id: number; body: string } | { id: number; error: string } | { ready: true };

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
    answer = { id: message.id, body: sealCallback(message.text, key, message.profile) };
  } catch (error) {
    answer = { id: message.id, error: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
parentPort?.postMessage({ ready: true } satisfies SealWorkerAnswer);
