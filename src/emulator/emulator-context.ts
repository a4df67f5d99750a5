import { randomBytes, randomUUID } from 'node:crypto';
import type { RsaKey } from '../crypto/keys.js';
import type { ServiceContext, ServiceRandom } from '../service/service-context.js';
import type { ServiceOperations } from '../service/operations.js';
import type { ApiKeyIndex } from './api-keys.js';
import type { EmulatorConfig, EmulatorMerchant } from './config.js';
import type { RequestCrypto } from './seal-pool.js';
import type { EmulatorStore } from './store.js';
import type { EmulatorVariant } from './variant.js';

/** Milliseconds since the epoch; injected so tests can move time (key windows, attempt times). */
export type EmulatorClock = () => number;

/** Randomness of the emulator (requestUUIDs, txids, ids); injected so tests can pin it. */
export type EmulatorRandom = ServiceRandom;

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
  /** The service over the store: state, policies (the variant's, if any), time, randomness. */
  service: ServiceContext;
  /** The service's operations (decorated by the variant, if any). */
  operations: ServiceOperations;
  /** Hooks of a deliberately different emulator (the toolkit's own tests); empty otherwise. */
  variant: EmulatorVariant;
  keys: ApiKeyIndex;
  merchants: ReadonlyMap<number, EmulatorMerchant>;
  now: EmulatorClock;
  random: EmulatorRandom;
  /** The sealing threads, for the order endpoints' RSA work (absent: it runs on the event loop). */
  requestCrypto?: RequestCrypto | undefined;
  /** Queue work for the callback dispatcher (a new event is due). */
  wakeDispatcher(): void;
  log: EmulatorLog | undefined;
}

/** The key of `merchant` that encrypts (or decrypts) with the given half. */
export function merchantKey(merchant: EmulatorMerchant, half: 'public' | 'private'): RsaKey {
  return half === 'private' ? merchant.keyPair.privateKey : merchant.keyPair.publicKey;
}
