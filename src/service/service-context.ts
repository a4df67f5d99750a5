import type { ExactJson } from '../core/exact-json.js';
import type { CardFailure, EnvelopeFailure } from './codes.js';
import type { ServicePolicies } from './policies.js';
import type { CallbackQueue, MerchantId, ServiceState } from './state.js';

/** Randomness of the service (txids, trackingIds, requestUUIDs); injected so tests can pin it. */
export interface ServiceRandom {
  uuid(): string;
  /** `bytes` random bytes as lower-case hex. */
  hex(bytes: number): string;
}

/** Everything an operation needs besides its request: the state, the policies, time and randomness. */
export interface ServiceContext {
  readonly state: ServiceState;
  readonly callbacks: CallbackQueue;
  /** The readings of the open points (policies.ts). */
  readonly policies: ServicePolicies;
  /** Milliseconds since the epoch. */
  now(): number;
  readonly random: ServiceRandom;
  /** Delay of a withdrawal's callback after its order, in milliseconds. */
  readonly withdrawalDelayMs: number;
  /** A new bizId for a closed card. */
  bizId(): string;
}

/** A plain request (decrypted `data`, or card close's JSON body). */
export type Plain = Record<string, ExactJson>;

/** A refusal: the failure's code name, its message (the emulator's words) and the rules it names. */
interface Refusal<F extends string> {
  ok: false;
  failure: F;
  message: string;
  /** Rule ids the message may name as ` [A, B]` when it does not already (the MSW handlers do). */
  rules: readonly string[];
}

/** Outcome of an order endpoint's operation: the plain result to seal, or a failure envelope. */
export type EnvelopeOutcome = { ok: true; result: Plain } | Refusal<EnvelopeFailure>;

/** Outcome of card close: the data of the success body, a card failure, or `forbidden` (a key of another merchant, ERR-403). */
export type CardOutcome =
  | { ok: true; merchant: MerchantId; result: { bizId: string; status: 'CLOSED' } }
  | (Refusal<CardFailure | 'forbidden'> & { merchant?: MerchantId });

/** A refusal with its rules. */
export function refuse<F extends string>(failure: F, message: string, rules: readonly string[] = []): Refusal<F> {
  return { ok: false, failure, message, rules };
}

/**
 * The schema's view turns a number a float cannot hold (1e999) into its text, which a `string`
 * schema accepts; string fields are checked once more so a number never reaches the state.
 */
export function notStrings(plain: Plain, fields: readonly string[]): string | undefined {
  const wrong = fields.filter((field) => typeof plain[field] !== 'string');
  return wrong.length === 0 ? undefined : `${wrong.join(', ')} must be string`;
}
