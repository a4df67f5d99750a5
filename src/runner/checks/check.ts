import type { SchemaIssue } from '../../core/schemas.js';
import { answerFailureRule, callbackFailureRule, reasonInMessage } from '../../wire/crypto-failure.js';
import type { CheckContext, Exchange } from '../observation.js';
import type { Finding } from '../types.js';

/** A JSON schema (draft 2020-12) of one parameter. */
type ParamSchema = Readonly<Record<string, unknown>>;

/**
 * The JSON schema of a check's parameters: an object of exactly these properties, so the suite
 * loader refuses an unknown or mistyped one (`equal: 200`) with the file, the case and the line.
 * Its property names are the keys of `P`, so the schema and the type cannot name different ones.
 */
interface ParamsSchema<P> {
  type: 'object';
  properties: { readonly [K in keyof P]-?: ParamSchema };
  required: ReadonlyArray<keyof P & string>;
  additionalProperties: false;
}

/** The parameters of a check that takes none. */
export type NoParams = Record<never, never>;

/** What a step produced that a check can judge (the step kinds in steps.ts say which they produce). */
export type Observation = 'exchange' | 'callbacks' | 'probe';

/**
 * A conformance check: code, registered by id in checks/index.ts, parameterised by suite data
 * whose shape `params` declares (the loader validates it; `run` reads it typed, templates filled).
 */
export interface Check<P = NoParams> {
  id: string;
  title: string;
  /** The rules it enforces when the case does not narrow them. */
  rules: string[];
  /**
   * What the step must have produced for the check to judge anything: the loader refuses the check
   * on a step kind that produces no such thing (a callback check on a request step).
   */
  needs: Observation;
  params: ParamsSchema<P>;
  run(ctx: CheckContext<P>): Finding[];
}

/** Any registered check, its parameters erased (the registry's element type). */
export type AnyCheck = Check<Record<string, unknown>>;

/** The schema of a check without parameters. */
export const NO_PARAMS: ParamsSchema<NoParams> = {
  type: 'object',
  properties: {},
  required: [],
  additionalProperties: false,
};

/**
 * The one wording, everywhere a run lacks the merchant's processing probe (a case's `needs`, a
 * probe check's skip): the flags that give it.
 */
export const NO_PROBE = 'needs --probe-url or --probe-cmd';

/** A passed finding. */
export const pass = (message = ''): Finding => ({ status: 'passed', message });
/**
 * A failed finding; the engine turns it into a warning when its rules are only SHOULD/U-*. `rules`
 * names the rules this observation breaks when the check knows them better than the expectation.
 */
export const fail = (message: string, rules?: readonly string[]): Finding =>
  rules?.length ? { status: 'failed', message, rules: [...new Set(rules)] } : { status: 'failed', message };

/**
 * The finding for an envelope `data` that does not open: CRYPTO-ENVELOPE when its Base64 or JSON is
 * malformed, CRYPTO-SAME when the merchant's key and profile cannot decrypt it (src/wire/crypto-failure.ts). Reported once per
 * step (cause `undecryptable-answer`); later checks of the step are skipped by the engine.
 */
export function undecryptable(error: string): Finding {
  const rule = answerFailureRule(reasonInMessage(error));
  return {
    status: 'failed',
    message: `data does not decrypt with the merchant's key: ${error}`,
    rules: [rule],
    cause: 'undecryptable-answer',
  };
}

/**
 * The finding for a callback body that does not open: CB-RAW-BODY when the body is not raw Base64
 * (a form field, line breaks), CB-DECRYPT when the merchant's public key cannot decrypt it. Reported
 * once per step (cause `undecryptable-callback`).
 */
export function undecryptableCallback(delivery: number, error: string): Finding {
  const rule = callbackFailureRule(reasonInMessage(error));
  return {
    status: 'failed',
    message: `delivery ${delivery} does not decrypt with the public key: ${error}`,
    rules: [rule],
    cause: 'undecryptable-callback',
  };
}

/** The rules of schema issues (their x-rules), or undefined when the issues name none. */
export function issueRules(issues: readonly SchemaIssue[]): string[] | undefined {
  const rules = [...new Set(issues.flatMap((issue) => issue.rules))];
  return rules.length ? rules : undefined;
}

/** The last exchange of the step, or a finding that says why there is none. */
export function lastExchange(ctx: CheckContext<unknown>): Exchange | Finding {
  const exchange = ctx.outcome.exchanges.at(-1);
  if (!exchange) return fail('the step made no request');
  if (exchange.error || !exchange.response)
    return {
      status: 'failed',
      message: `no answer: ${exchange.error ?? 'unknown transport failure'}`,
      cause: 'no-answer',
    };
  return exchange;
}

/** Is this a finding (as opposed to the exchange it stands in for)? */
export function isFinding(value: unknown): value is Finding {
  return typeof value === 'object' && value !== null && 'status' in value && !('request' in value);
}

/** Schema issues as one line, each with the rules it breaks (core/issue-wording.ts: every issue shown). */
export { describeIssues } from '../../core/issue-wording.js';

/** A short view of a body for messages. */
export function preview(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
