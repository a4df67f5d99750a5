import { DEFAULT_BODY_LIMIT } from '../platform/http-io.js';
import type { CryptoProfile } from '../core/profile.js';
import type { RsaPrivateKey, RsaPublicKey } from '../crypto/keys.js';
import type { ServerTls } from '../net/server-tls.js';
import type { ServicePolicies as EmulatorPolicies } from '../service/policies.js';

/**
 * The emulator's configuration as the rest of the emulator sees it: emulator.yaml resolved (types
 * and defaults). Reading and resolving the YAML is config-load.ts; the keys a runner needs,
 * key-description.ts; the files of `emulator init`, init-template.ts, init-files.ts and init-dir.ts.
 */

/** What an API key may call (ERR-403 when the key lacks it). */
export const PERMISSIONS = ['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard'] as const;
/** One permission of an API key. */
export type Permission = (typeof PERMISSIONS)[number];

/** An extra API key of a merchant: its permissions and validity window (ERR-401 outside it). */
export interface EmulatorApiKey {
  key: string;
  permissions: Permission[];
  /** ISO 8601; the key is valid from this instant (inclusive). */
  notBefore?: string;
  /** ISO 8601; the key is valid until this instant (inclusive). */
  notAfter?: string;
}

/** A card the merchant's users hold (card close). */
export interface EmulatorCard {
  powerCardId: string;
  merchantUserId: string;
  status: 'open' | 'closed';
}

/** One merchant of the emulator, keys loaded. */
export interface EmulatorMerchant {
  /** The merchant's identifier in the wallet system (order requests carry it; card close's merchantId is its text). */
  userId: number;
  /**
   * Main credential: every permission, valid within apiKeyValidFrom..apiKeyValidUntil (ISO 8601,
   * inclusive). emulator.yaml may name the bounds `apiKeyNotBefore`/`apiKeyNotAfter`, as an extra
   * key's `notBefore`/`notAfter` and the reference merchant's are named; either name lands here.
   */
  apiKey: string;
  apiKeyValidFrom?: string;
  apiKeyValidUntil?: string;
  /** Further keys, e.g. one without permissions (ERR-403) and an expired one (ERR-401). */
  apiKeys: EmulatorApiKey[];
  /** Absolute path of the private key (the service's half). */
  privateKey: string;
  /** Absolute path of the public key (the merchant's half: clients encrypt requests with it by default). */
  publicKey: string;
  profile: CryptoProfile;
  /** Where callbacks go; none: they wait until the control API sets one. */
  callbackUrl?: string;
  /** Initial energy (the store keeps the live balance once it exists). */
  energy: { balance: bigint; costPerTx: bigint };
  /** Initial cards (added to the store when missing). */
  cards: EmulatorCard[];
  /** The loaded key pair. */
  keyPair: { privateKey: RsaPrivateKey; publicKey: RsaPublicKey };
}

/** Callback retry schedule (U-RETRY): delay before retry n = min(initialDelayMs × factor^(n-1), maxDelayMs). */
interface RetrySchedule {
  initialDelayMs: number;
  factor: number;
  maxDelayMs: number;
  /** Attempts per delivery, the first included. */
  maxAttempts: number;
}

/** emulator.yaml, validated and resolved (paths absolute, keys loaded, defaults filled). */
export interface EmulatorConfig {
  /** Where the config came from, for messages. */
  source: string;
  host: string;
  /** Preferred port; `startEmulator` uses 0 (any free port) when neither this nor its option is set. */
  port?: number;
  /** SQLite file path, or `:memory:` for a throwaway run. */
  store: string;
  /** Largest request body in bytes; larger gets 413 (U-LIMITS). */
  bodyLimit: number;
  /** A client must send its headers within this time. */
  headersTimeoutMs: number;
  /** A client must send its whole request within this time (slow clients are cut). */
  requestTimeoutMs: number;
  control: { token: string };
  callbacks: {
    /** A callback target must answer within this time (hanging receivers). */
    timeoutMs: number;
    /** A withdrawal order completes, and its callback is due, this long after submission. */
    withdrawalDelayMs: number;
    retry: RetrySchedule;
    /** `callbacks.ca: FILE`: PEM certificates trusted (besides the system roots) for https callback URLs. */
    ca?: string[];
  };
  merchants: EmulatorMerchant[];
  /** The readings of the interface's open points (policies.ts); defaults are the historical behaviour. */
  policies: EmulatorPolicies;
  /** `tls: {cert, key}`: serve HTTPS (paths relative to the YAML). */
  tls?: ServerTls;
}

/** Defaults of every optional setting. */
export const EMULATOR_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  bodyLimit: DEFAULT_BODY_LIMIT,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  callbackTimeoutMs: 5_000,
  withdrawalDelayMs: 1_000,
  retry: Object.freeze({ initialDelayMs: 1_000, factor: 2, maxDelayMs: 60_000, maxAttempts: 8 }),
});
