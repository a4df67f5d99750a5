import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, parseExactJson, type ExactJson } from '../core/exact-json.js';
import { mediaType, readBody, sendJson } from '../core/http-io.js';
import { CARD_ERROR_CODES, CARD_ERROR_TEXTS, CARD_HTTP_STATUS, type CardFailure } from '../service/codes.js';
import type { Plain } from '../service/context.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../service/limits.js';
import type { EmulatorContext } from './context.js';
import { noteWhy, sendForbidden, sendTooLarge, sendUnauthorized } from './envelope.js';

/** Exact path under {card_base_url} (CARD-PATH). */
export const CARD_CLOSE_PATH = '/card/close';

/**
 * Serves card close (CARD-*): HTTP 200 with the response shape on success and on failure
 * (U-CARD-VALUES). Card close carries no credential in the interface (U-CARD-AUTH); an
 * `X-API-KEY` that is sent anyway is checked (401, 403 without the closeCard permission or for
 * another merchant). The business part is the service's closeCard (src/service/card-close.ts).
 */
export async function serveCardClose(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = `req-${ctx.random.uuid()}`;
  const fail = (failure: CardFailure, detail: string) => sendCardFailure(ctx, res, requestId, failure, detail);
  const header = req.headers['x-api-key'];
  let keyMerchant: number | undefined;
  if (header !== undefined) {
    const relax = ctx.variant.keyCheck;
    const verdict = ctx.keys.check(header, 'closeCard', ctx.now(), { ignoreWindow: relax?.ignoreWindow === true, ignorePermissions: relax?.ignorePermissions === true });
    if (!verdict.ok) return verdict.status === 401 ? sendUnauthorized(ctx, res, verdict.why) : sendForbidden(ctx, res, verdict.why);
    keyMerchant = verdict.merchant.userId;
  }
  const conforming = mediaType(req.headers['content-type']) === 'application/json' || ctx.variant.anyContentType === true;
  const type = req.headers['content-type'] === undefined ? undefined : mediaType(req.headers['content-type']);
  if (!(ctx.variant.acceptsContentType ? ctx.variant.acceptsContentType(type, conforming, { endpoint: 'card', header: req.headers['content-type'] }) : conforming)) {
    return fail('badContentType', `Content-Type must be application/json, not ${JSON.stringify(req.headers['content-type'] ?? '')}`);
  }
  const body = await readBody(req, ctx.config.bodyLimit);
  if (!body.ok) {
    if (body.reason === 'too-large') return sendTooLarge(res, ctx.config.bodyLimit);
    res.destroy();
    return;
  }
  let value: ExactJson;
  try {
    value = parseExactJson(body.body.toString('utf8'));
  } catch (error) {
    return fail('badRequest', `the body is not JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber) {
    return fail('badRequest', 'the body must be a JSON object');
  }
  if (nestedDeeperThan(value)) return fail('badRequest', `the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
  const request = value as Plain;
  const outcome = ctx.operations.closeCard(ctx.service, request, keyMerchant === undefined ? undefined : BigInt(keyMerchant));
  if (!outcome.ok) return outcome.failure === 'forbidden' ? sendForbidden(ctx, res, outcome.message) : fail(outcome.failure, outcome.message);
  noteWhy(res, `closed ${String(request.powerCardId)}`);
  const answer: Record<string, unknown> = { success: true, errorCode: '', errorMessage: '', errorMessageEn: '', detailMessage: '', requestId, data: outcome.result };
  sendJson(res, 200, ctx.variant.cardSuccess ? ctx.variant.cardSuccess(answer) : answer);
}

/**
 * CARD-ERR: success false with every error field filled, data null; HTTP 200, or a 4xx under the
 * policy `refusals: http` (U-CODES).
 */
export function sendCardFailure(ctx: EmulatorContext, res: ServerResponse, requestId: string, failure: CardFailure, detail: string): void {
  noteWhy(res, `${CARD_ERROR_CODES[failure]} ${detail}`);
  const text = CARD_ERROR_TEXTS[failure];
  const body: Record<string, unknown> = {
    success: false,
    errorCode: CARD_ERROR_CODES[failure],
    errorMessage: text.zh,
    errorMessageEn: text.en,
    detailMessage: detail,
    requestId,
    data: null,
  };
  sendJson(res, ctx.service.policies.refusals === 'http' ? CARD_HTTP_STATUS[failure] : 200, ctx.variant.cardFailure ? ctx.variant.cardFailure(body) : body);
}
