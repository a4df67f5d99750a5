import { stringifyExact } from '../core/exact-json.js';
import type { SchemaIssue } from '../core/schemas.js';
import { CARD_ERROR_CODES, CARD_ERROR_TEXTS, ENVELOPE_CODES, type CardFailure, type EnvelopeFailure } from '../service/codes.js';

/** An answer as data: what onCall sees and what becomes the Response. */
export interface Answer {
  status: number;
  body: unknown;
  /** The exact JSON text of the plain result, on success. */
  resultText?: string;
}

/** A failure envelope `{"code": <non-zero>, "message": "..."}` with no data (ENV-CODE, ENV-MSG, ENV-DATA; codes: U-CODES). */
export function envelopeFailure(failure: EnvelopeFailure, message: string): Answer {
  return { status: 200, body: { code: ENVELOPE_CODES[failure], message } };
}

/** CARD-ERR: success false with every error field filled and data null. */
export function cardFailure(failure: CardFailure, detail: string, requestId: string): Answer {
  const text = CARD_ERROR_TEXTS[failure];
  return {
    status: 200,
    body: { success: false, errorCode: CARD_ERROR_CODES[failure], errorMessage: text.zh, errorMessageEn: text.en, detailMessage: detail, requestId, data: null },
  };
}

/** ` [RULE-A, RULE-B]`: the suffix naming the rules a failure broke ('' for none). */
export function ruleSuffix(rules: readonly string[]): string {
  return rules.length > 0 ? ` [${[...new Set(rules)].join(', ')}]` : '';
}

/**
 * Schema issues as one message naming each broken rule, in the words of the field:
 * `tenantType must be 1 [ORDER-TENANT-TYPE]`.
 */
export function describeIssues(issues: readonly SchemaIssue[], constants: Readonly<Record<string, unknown>>): string {
  // A field checked twice (its property and an if/then branch) would otherwise be named twice.
  const texts = [...new Set(issues.map((issue) => {
    const field = issue.path.replace(/^\//, '').replaceAll('/', '.') || 'the request';
    const constant = constants[field];
    let text: string;
    if (issue.keyword === 'required') text = `${field} is required`;
    else if (issue.keyword === 'const' && constant !== undefined) text = `${field} must be ${JSON.stringify(constant)}`;
    else text = `${field} ${issue.message.replace(/^\S+ /, '')}`;
    return text + ruleSuffix(issue.rules);
  }))];
  return texts.slice(0, 5).join('; ') + (texts.length > 5 ? `; and ${texts.length - 5} more` : '');
}

/** The answer as a Fetch API Response (msw resolvers may return one), numbers kept exact. */
export function toResponse(answer: Answer): Response {
  return new Response(stringifyExact(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
}
