import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { parseKey, type RsaKey, type RsaPrivateKey } from '../crypto/keys.js';
import type { ApiKeyIndex } from './api-keys.js';
import type { EmulatorConfig, EmulatorMerchant } from './config.js';
import type { FaultSet } from './faults.js';
import type { Energy, EmulatorStore } from './store.js';

/** Milliseconds since the epoch; injected so tests can move time (key windows, attempt times). */
export type EmulatorClock = () => number;

/** Randomness of the emulator (requestUUIDs, txids, ids); injected so tests can pin it. */
export interface EmulatorRandom {
  uuid(): string;
  /** `bytes` random bytes as lower-case hex. */
  hex(bytes: number): string;
}

/** node:crypto randomness. */
export const cryptoRandom: EmulatorRandom = {
  uuid: () => randomUUID(),
  hex: (bytes) => randomBytes(bytes).toString('hex'),
};

/** One line per request or delivery, when the caller wants a log. */
export type EmulatorLog = (line: string) => void;

/** Everything a request handler needs, resolved once at start. */
export interface EmulatorContext {
  config: EmulatorConfig;
  store: EmulatorStore;
  faults: FaultSet;
  keys: ApiKeyIndex;
  merchants: ReadonlyMap<number, EmulatorMerchant>;
  now: EmulatorClock;
  random: EmulatorRandom;
  /** Energy at start-up, for the energy-stale fault. */
  initialEnergy: ReadonlyMap<number, Energy>;
  /** Lease debits not yet applied (policy leaseDebit: later), oldest first. */
  pendingDebits: Array<{ merchant: number; cost: bigint; dueAt: number }>;
  /** Queue work for the callback dispatcher (a new event is due). */
  wakeDispatcher(): void;
  log: EmulatorLog | undefined;
}

/** The key of `merchant` that encrypts (or decrypts) with the given half. */
export function merchantKey(merchant: EmulatorMerchant, half: 'public' | 'private'): RsaKey {
  return half === 'private' ? merchant.keyPair.privateKey : merchant.keyPair.publicKey;
}

const strangers = new Map<number, RsaPrivateKey>();

/** A key pair unrelated to any merchant, of the given size (fault response-wrong-key); made once per size. */
export function strangerKey(bits: number): RsaPrivateKey {
  let key = strangers.get(bits);
  if (!key) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
    key = parseKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { source: 'stranger key' }) as RsaPrivateKey;
    strangers.set(bits, key);
  }
  return key;
}
