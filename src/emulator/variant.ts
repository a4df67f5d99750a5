import type { ExactJson } from '../core/exact-json.js';
import type { ServiceOperations } from '../service/operations.js';
import type { ServicePolicies } from '../service/policies.js';
import type { MerchantId, ServiceState } from '../service/state.js';
import type { EmulatorMerchant } from './config.js';
import type { ServiceRandom as EmulatorRandom } from '../service/service-context.js';
import type { HttpAnswer, RequestCheck, SuccessEnvelope } from '../service/pipeline.js';
import type { MerchantKeyEntry } from './api-keys.js';
import type { AttemptRecord, DeliveryUpdate, DueDelivery } from './outbox.js';

export { type SuccessEnvelope } from '../service/pipeline.js';

/** What the service's operations are built over at start: the state after the config's merchants were seeded. */
interface VariantStart {
  state: ServiceState;
  merchants: readonly MerchantId[];
}

/**
 * Seams of the callback dispatcher: each gets what the conforming dispatcher chose and returns what
 * to use instead. Absent: the conforming choice.
 */
export interface DeliveryVariant {
  /** The requestUUID of one attempt (CB-UUID): `fresh` is new per attempt, `delivery.fixedUuid` one per event. */
  requestUUID?(fresh: string, delivery: DueDelivery): string;
  /** The payload of one attempt, requestUUID set (key order kept); `delivery` tells which attempt of which delivery it is. */
  payload?(
    payload: Record<string, ExactJson | undefined>,
    random: EmulatorRandom,
    delivery: DueDelivery,
  ): Record<string, ExactJson | undefined>;
  /** The headers of one attempt (CB-HEADERS, CB-KEY-SAME). */
  headers?(headers: Record<string, string>, merchant: EmulatorMerchant): Record<string, string>;
  /** The body of one attempt (CB-RAW-BODY): `sealed` is the Base64 the profile names; `text` the payload's JSON. */
  body?(sealed: string, attempt: { text: string; merchant: EmulatorMerchant }): string;
  /**
   * How an answer is read (CB-ERRCODE): `verdict` is the conforming reading of the answer (HTTP
   * status, body text); the returned verdict decides what follows the attempt.
   */
  acknowledgement?(
    verdict: AttemptRecord['verdict'],
    answer: { status: number; body: string },
  ): AttemptRecord['verdict'];
  /** What follows an attempt (CB-ERRCODE, U-RETRY): `update` is the conforming next state. */
  next?(
    update: DeliveryUpdate,
    attempt: { delivery: DueDelivery; verdict: AttemptRecord['verdict']; now: number; delayMs: number },
  ): DeliveryUpdate;
}

/**
 * A variant of the emulator: decorators of the service's operations, policies and key ring, and hooks
 * on the pipeline's steps and what it sends. It carries no names of faults: the toolkit's own tests build deliberately
 * faulty variants from it (test/fixtures/emulator-faults.ts) to prove every check can fail. It is
 * reachable only through `startEmulator`'s options, never from the YAML config.
 */
export interface EmulatorVariant {
  /** The policies to run under instead of the config's. */
  policies?(policies: ServicePolicies): ServicePolicies;
  /** Decorates the service's operations, once at start. */
  operations?(operations: ServiceOperations, start: VariantStart): ServiceOperations;
  /** The order of the order endpoints' request checks (the pipeline's, src/service/pipeline.ts): gets the conforming order; a check left out runs after the listed ones. */
  requestChecks?(order: readonly RequestCheck[]): readonly RequestCheck[];
  /** The keys the X-API-KEY check (ERR-401, ERR-403) is built from: gets the merchants' keys with their windows and permissions. */
  keyEntries?(keys: MerchantKeyEntry[]): MerchantKeyEntry[];
  /**
   * Whether an endpoint accepts a request's Content-Type (ENERGY-CT, ORDER-CT, CARD-PATH): `conforming`
   * is the conforming answer; `type` the media type (undefined: none), `header` the whole header.
   */
  acceptsContentType?(
    type: string | undefined,
    conforming: boolean,
    request: { endpoint: 'getEnergyMaxCount' | 'withdrawWithoutVerify' | 'card'; header: string | undefined },
  ): boolean;
  /** The X-API-KEY the order endpoints check (ENERGY-KEY, ERR-401): gets the header as sent (undefined: none) and the configured merchants. */
  apiKey?(
    header: string | undefined,
    request: { endpoint: 'getEnergyMaxCount' | 'withdrawWithoutVerify'; merchants: readonly EmulatorMerchant[] },
  ): string | undefined;
  /** The order endpoints' form field data as the decoder gets it (ENERGY-DATA, ORDER-DATA). */
  requestData?(data: string): string;
  /** The decrypted request text as the JSON parser gets it (CRYPTO-SAME), with the merchant whose key opened it. */
  requestText?(text: string, merchant: EmulatorMerchant): string;
  /** The path a request is routed by (ENERGY-PATH, ORDER-PATH, CARD-PATH, VERSION-V1, ERR-404): gets the request's path. */
  route?(path: string): string;
  /** The success envelope to send for `result` sealed for `merchant`. */
  successEnvelope?(envelope: SuccessEnvelope, sealed: { result: unknown; merchant: EmulatorMerchant }): SuccessEnvelope;
  /** The HTTP error to send for a missing or refused key (401), a key without the permission (403) or an unknown path (404). */
  httpError?(kind: 'unauthorized' | 'forbidden' | 'notFound', answer: HttpAnswer): HttpAnswer;
  /** A card close failure body (CARD-ERR) before it is sent. */
  cardFailure?(body: Record<string, unknown>): Record<string, unknown>;
  /** A card close success body (CARD-RES) before it is sent. */
  cardSuccess?(body: Record<string, unknown>): Record<string, unknown>;
  /** Seams of the callback dispatcher. */
  delivery?: DeliveryVariant;
}
