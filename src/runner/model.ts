/**
 * The suite model: suites, cases, steps and expectations, as the loader (`suite.ts`) gives them and
 * the engine, steps and checks read them. Types only, importing nothing, so the runner's modules
 * reach the model without reaching the loader (no import cycle: lint, scripts/check-import-cycles.mjs).
 */

/**
 * How the runner's receiver answers one delivery (`ANSWERS` in receiver.ts). Every answer but `ack`
 * is one the service must count as a failure and retry (CB-ERRCODE, as src/wire/acknowledgement.ts
 * reads it: not-acknowledged).
 */
export type Answer = 'ack' | 'errcode-1' | 'http-500' | 'string-zero' | 'no-errcode' | 'code-zero' | 'text-body';

/** What a case can need from the target; without it the case is skipped. */
export type Need =
  | 'userId'
  | 'orders'
  | 'control'
  | 'forbiddenKey'
  | 'expiredKey'
  | 'futureKey'
  | 'probe'
  | 'receiver'
  | 'listen'
  | 'cards'
  | 'restart'
  | 'casedKey';

/**
 * A near miss of the merchant's key (the derived cases of CB-KEY-401): the key in other letter case,
 * one character more or less, a letter with an accent, a no-break space before or after it (which HTTP keeps and a trimming
 * compare drops), or the header twice with an unknown key first.
 */
export type KeyNearMiss =
  | 'upper-case'
  | 'lower-case'
  | 'one-letter-case'
  | 'appended'
  | 'last-removed'
  | 'first-removed'
  | 'accented-letter'
  | 'nbsp-before'
  | 'nbsp-after'
  | 'twice-unknown-first';

/** Where a padded plaintext ends against the RSA blocks: one byte under, at, or one byte over a whole number of them. */
export type LengthEdge = 'one-under' | 'whole' | 'one-over';

/** A length edge, or `split-character`: a three-byte UTF-8 character across a block boundary. */
export type BlockEdge = LengthEdge | 'split-character';

/**
 * One expectation: a registered check and its parameters, which the check's schema declares
 * (`Check.params`; the loader refuses unknown and mistyped ones). `ExpectationOf<StatusParams>`
 * types one check's.
 */
export type Expectation = ExpectationOf<Record<string, unknown>>;

/** An expectation of a check whose parameters are `P`. */
type ExpectationOf<P> = { check: string; rules?: string[]; title?: string } & P;

/** One step of a case; exactly one of control, request, emit, await, deliver, restart. */
export interface Step {
  title?: string;
  /** Run the user's `--restart` command, then wait until the callback URL answers again. */
  restart?: true;
  /** Energy amounts beyond 2^53 are written `#decimal:DIGITS` (template.ts): sent exactly. */
  control?: {
    energy?: { balance: number | string; costPerTx: number | string };
    card?: { powerCardId: string; merchantUserId: string };
    pointCallbacks?: true;
  };
  await?: AwaitStep;
  request?: RequestStep;
  emit?: EmitStep;
  deliver?: DeliverStep;
  expect?: Expectation[];
}

/** A request to the service side. */
export interface RequestStep {
  endpoint: string;
  method?: string;
  apiKey?: 'valid' | 'missing' | 'unknown' | 'expired' | 'future' | 'forbidden';
  contentType?: string;
  plain?: unknown;
  plainText?: string;
  data?: string;
  encode?:
    | 'standard'
    | 'url-safe'
    | 'line-breaks'
    | 'plus-as-space'
    | 'wrong-key'
    | 'truncated'
    | 'unencoded-form'
    | 'unpadded';
  json?: unknown;
  body?: string;
  /**
   * The form as multipart/form-data, the encrypted field one part of it, instead of urlencoded (a
   * near miss of ENERGY-CT/ORDER-CT); the Content-Type names the boundary unless `contentType` is given.
   */
  form?: 'multipart';
  save?: string;
  /** A near miss of the merchant's key instead of the key (the derived cases of ERR-401). */
  keyVariant?: KeyNearMiss;
  /**
   * One request per edge, in order: the same plain JSON lengthened with insignificant whitespace so
   * its plaintext ends one byte under, at or one byte over `plainBlocks` RSA blocks (CRYPTO-SAME).
   */
  plainLength?: LengthEdge[];
  /** The number of blocks `plainLength` aims at (default 1). */
  plainBlocks?: number;
  /**
   * Lengthens the plain's callBackId so the answer's plaintext ends at this edge of at least two RSA
   * blocks, measured on the case's previous answer (ENV-DATA): the service's serialisation is its own.
   */
  answerLength?: LengthEdge;
}

/** A callback the service is asked (through its control API) to emit to the runner's receiver. */
export interface EmitStep {
  type: number;
  fields?: Record<string, unknown>;
  deliveries?: number;
  concurrent?: boolean;
  retryDelaysMs?: number[];
  answers?: Answer[];
  expectDeliveries?: number;
  settleMs?: number;
}

/** A callback the service emits by itself (after an order), awaited at the runner's receiver. */
export interface AwaitStep {
  type?: number;
  match?: Record<string, unknown>;
  timeoutMs?: number;
  count?: number;
  answers?: Answer[];
  prompt?: string;
  /** Callbacks that may not come at all: wait the whole `timeoutMs`, judge what came; none is no finding. */
  optional?: boolean;
}

/** A callback the runner delivers to a merchant. */
export interface DeliverStep {
  type?: number;
  fields?: Record<string, unknown>;
  event?: string;
  same?: string;
  twin?: string;
  apiKey?: 'valid' | 'missing' | 'unknown' | 'expired' | 'future';
  /** A near miss of the key instead of the key. */
  keyVariant?: KeyNearMiss;
  /** A copy of the named event as it is (same trackingId), with `type` and `fields` applied. */
  copy?: string;
  /** Pads the trackingId so the plaintext ends at this edge of the RSA blocks. */
  plainLength?: BlockEdge;
  /** Runs the user's `--restart` right after the answer, before the probe is read. */
  restartAfter?: boolean;
  mangle?:
    | 'none'
    | 'form-field'
    | 'plus-as-space'
    | 'url-safe'
    | 'line-breaks'
    | 'garbage'
    | 'wrong-key'
    | 'truncated'
    | 'not-json'
    | 'invalid-payload'
    | 'not-utf8';
  deliveries?: number;
  concurrent?: boolean;
  /** This many distinct events of the type (fresh ids each), each delivered once. */
  distinct?: number;
}

/** A case: rules, needs, steps with expectations. */
export interface Case {
  id: string;
  title: string;
  rules: string[];
  needs?: Need[];
  /** `both`: run once per field spelling (txid/chain, txId/chainName); one passing spelling is a U-CB-FIELDS warning. */
  spellings?: 'interface' | 'both';
  /** `both`: run once with amounts as JSON numbers, once as decimal strings (U-CB-FIELDS); see `mergeAmountForms`. */
  amounts?: 'as-written' | 'both';
  steps: Step[];
}

/** A loaded suite; `name` is its path under suites/ without extension (`service/energy`). */
export interface Suite {
  name: string;
  title: string;
  side: 'service' | 'merchant';
  description?: string;
  cases: Case[];
}
