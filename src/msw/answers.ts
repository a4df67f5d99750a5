import { stringifyExact } from '../core/exact-json.js';
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


/** The answer as a Fetch API Response (msw resolvers may return one), numbers kept exact. */
export function toResponse(answer: Answer): Response {
  return new Response(stringifyExact(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
}
