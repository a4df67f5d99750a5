/** What the runner observes: requests as sent, answers and callbacks as received, a step's outcome, and what a check is given to judge them. */
import type { ExactJson } from '../core/exact-json.js';
import type { Rule } from '../core/rules.js';
import type { Case, Step, Suite } from './model.js';
import type { StrangerKeys } from './stranger-keys.js';
import type { Target } from './types.js';

/** A request as sent, with its plain form beside the wire form. */
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The plain JSON text before encryption, when the runner encrypted it. */
  plain?: string;
  /** When the runner's receiver got it (ms since the epoch): a callback delivery, for the report's timeline. */
  receivedAt?: number;
}

/** An answer, with its decrypted `data` when there is one. */
export interface ReceivedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  json?: ExactJson;
  /** Decrypted envelope `data` (service) as text and exact JSON. */
  decrypted?: { text: string; value: ExactJson };
  /** Why `data` could not be decrypted, when it could not. */
  decryptError?: string;
  /**
   * `data` opened only when read leniently: the reason (`missing-padding`, `non-canonical-base64`,
   * src/wire/crypto-failure.ts LENIENT_BASE64_REASONS) its Base64 is not the standard padded form.
   */
  lenientBase64?: string;
}

/** One request and its answer (or the transport failure). */
export interface Exchange {
  request: SentRequest;
  response?: ReceivedResponse;
  error?: string;
  /** The callback payload a merchant delivery carried (plain text), for the probe checks. */
  payloadText?: string;
}

/** A callback the runner's receiver got from a service. */
export interface ReceivedCallback {
  at: number;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  answeredStatus: number;
  /** The body the receiver answered with (its errCode decides whether the service retries). */
  answeredBody?: string;
}

/** What a step produced, for its checks. */
export interface StepOutcome {
  exchanges: Exchange[];
  /** Callbacks received during an emit step. */
  callbacks?: ReceivedCallback[];
  /** Probe entries (exact JSON texts) added during the step; undefined without a probe. */
  processed?: string[];
  /** The event payloads (plain text) the step delivered, in order. */
  delivered?: string[];
  /** The saved plain requests of the case so far. */
  saved: Record<string, unknown>;
}

/** Everything a check sees; `params` are the expectation's, validated by the check's schema, templates filled. */
export interface CheckContext<P = Record<string, unknown>> {
  target: Target;
  suite: Suite;
  testCase: Case;
  step: Step;
  outcome: StepOutcome;
  params: P;
  rules: Map<string, Rule>;
  /** A key pair that is not the target's: for wrong-key cases. */
  strangerKeys: StrangerKeys;
}
