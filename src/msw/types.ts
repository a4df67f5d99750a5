import type { CryptoProfile } from '../core/profile.js';
import type { SchemaName } from '../core/schemas.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import type { RsaPrivateKey } from '../crypto/keys.js';
import type { OpenOutcome } from '../service/pipeline.js';
import type { WalletScenario } from './scenarios.js';

/** HTTP methods an endpoint of the table may use (msw's `http.*` names). */
type EndpointMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * One endpoint of the interface as the spec describes it: a row of the generated table
 * (`WALLET_ENDPOINTS` in src/generated/msw-handlers.ts). Everything here comes from spec/.
 */
export interface WalletEndpoint<Schema extends string = SchemaName> {
  readonly operationId: string;
  readonly method: EndpointMethod;
  /** Path under the server variable, e.g. `/api/v1/api/order/getEnergyMaxCount`. */
  readonly path: string;
  /** The spec's server variable the path sits under: `base_url` or `card_base_url`. */
  readonly server: string;
  /** The credential header the operation's security scheme names; null when it needs none (U-CARD-AUTH). */
  readonly apiKeyHeader: string | null;
  readonly request: {
    /** The one media type the request body must have (ENERGY-CT, ORDER-CT, CARD-PATH). */
    readonly mediaType: string;
    /** Component schema of the body as sent (the form, or the plain JSON). */
    readonly schema: Schema;
    /** The form field carrying encrypted JSON (`x-encrypted`), or null for a plain body. */
    readonly encrypted: { readonly field: string; readonly pattern: string; readonly plaintext: Schema } | null;
    /** `const` values of the plain request's properties, for messages (`tenantType must be 1`). */
    readonly constants: Readonly<Record<string, unknown>>;
    /** Properties of the plain request typed string (a number that passed as text is refused). */
    readonly stringFields: readonly string[];
  };
  readonly response: {
    /** Component schema of the HTTP 200 body (an envelope, or the card close response). */
    readonly schema: Schema;
    /** The envelope field carrying the encrypted result, or null when the body is plain. */
    readonly encrypted: { readonly field: string; readonly plaintext: Schema } | null;
    /** The spec's first example of the plain result: the answer of an operation the runtime has no logic for. */
    readonly example: unknown;
  };
  /** HTTP error bodies by status, from the spec's 401/403/404 responses (consts, else examples). */
  readonly errors: Readonly<Record<string, { readonly code: string; readonly message: string }>>;
  /** Rule ids (`x-rules`) of the parts a failure message names. */
  readonly rules: {
    readonly operation: readonly string[];
    readonly apiKey: readonly string[];
    readonly contentType: readonly string[];
    readonly data: readonly string[];
    /** The plain request schema's own rules (ENERGY-REQ, ORDER-FIELDS, CARD-REQ). */
    readonly request: readonly string[];
  };
}

/** A merchant the handlers know: its credential, the service's half of its key pair, its energy. */
export interface WalletMockMerchant<Op extends string = string> {
  /** The merchant's userId in the wallet system (order requests must carry it). */
  userId: number | bigint | string;
  /** Its X-API-KEY (ERR-401 for any other). */
  apiKey: string;
  /** The merchant's private key (the service's half): PEM, bare Base64 DER, or a parsed key. */
  privateKey: string | RsaPrivateKey;
  /** Operations the key may call (ERR-403 otherwise); default: every operation. */
  permissions?: readonly Op[];
  /** Energy for getEnergyMaxCount and energy leases; default balance 20000000, costPerTx 64000 (312 transactions). */
  energy?: { balance: bigint | number | string; costPerTx: bigint | number | string };
  /** Overrides the handlers' profile for this merchant. */
  profile?: Partial<CryptoProfile>;
}

/** Why a request's encrypted `data` did not open (the pipeline's, src/service/pipeline.ts); the kind picks the envelope code. */
export type { OpenOutcome } from '../service/pipeline.js';

/** One merchant's crypto, bound to its key and profile. */
export interface MerchantCrypto {
  /**
   * Decrypts a request's `data` (CRYPTO-SAME: the half the profile names for requests); `accept`:
   * the lenient Base64 forms the service's policies read (U-CRYPTO), none under the defaults.
   */
  open(data: string, accept?: ReadonlySet<CryptoFailureReason>): OpenOutcome | Promise<OpenOutcome>;
  /** Encrypts a result's exact JSON text for the envelope's `data`. */
  seal(json: string): string | Promise<string>;
}

/**
 * Crypto as one injectable record (prism's style): the default is node:crypto (src/crypto), loaded
 * only when no codec is given, so a browser (`setupWorker`) can bring its own.
 */
export interface WalletCodec {
  /** Binds a merchant's private key and profile; a key it cannot use is a ConfigError. */
  forMerchant(
    privateKey: string | RsaPrivateKey,
    profile: CryptoProfile,
    source: string,
  ): MerchantCrypto | Promise<MerchantCrypto>;
}

/** What one request did, for tests that look inside (the exact plain text the client sent). */
export interface WalletCall {
  operationId: string;
  scenario: WalletScenario;
  /** The merchant the X-API-KEY (or card close's merchantId) named, as text. */
  userId?: string;
  /** The decrypted (or plain JSON) request text exactly as received, when the request got that far. */
  plainText?: string;
  status: number;
  /** The answer body as sent (encrypted `data` included). */
  body: unknown;
  /** The exact JSON text of the result before encryption, on success. */
  resultText?: string;
}

/** Options of `createWalletHandlers`. */
export interface WalletMockOptions<Op extends string = string> {
  /** {base_url}: the order endpoints sit under it; any other path under it gets ERR-404. */
  baseUrl: string;
  /** {card_base_url}; default baseUrl. */
  cardBaseUrl?: string;
  merchants: readonly WalletMockMerchant<Op>[];
  /** Crypto profile (docs/crypto-profiles.md), every field optional; default: PKCS#1 v1.5, requests under the public key. */
  profile?: Partial<CryptoProfile>;
  /** What the service does; default `success`. */
  scenario?: WalletScenario;
  /** Crypto to use instead of node:crypto (e.g. in a browser). */
  codec?: WalletCodec;
  /** Called once per answered request. */
  onCall?: (call: WalletCall) => void;
}
