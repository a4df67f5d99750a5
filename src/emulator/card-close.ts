import type { ServerResponse } from 'node:http';
import { sendJson } from '../platform/http-io.js';
import { CARD_ERROR_CODES, CARD_HTTP_STATUS, cardFailureBody, type CardFailure } from '../service/codes.js';
import type { EmulatorContext } from './emulator-context.js';
import { noteWhy } from './envelope.js';

/** Exact path under {card_base_url} (CARD-PATH). */
export const CARD_CLOSE_PATH = '/card/close';

/**
 * CARD-ERR for a bug of ours (the pipeline threw): success false with every error field filled,
 * data null; HTTP 200, or a 4xx/5xx under the policy `refusals: http` (U-CODES).
 */
export function sendCardFailure(
  ctx: EmulatorContext,
  res: ServerResponse,
  requestId: string,
  failure: CardFailure,
  detail: string,
): void {
  noteWhy(res, `${CARD_ERROR_CODES[failure]} ${detail}`);
  const body = cardFailureBody(requestId, failure, detail);
  sendJson(
    res,
    ctx.service.policies.refusals === 'http' ? CARD_HTTP_STATUS[failure] : 200,
    ctx.variant.cardFailure ? ctx.variant.cardFailure(body) : body,
  );
}
