import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, parseExactJson, type ExactJson } from '../core/exact-json.js';
import { mediaType, readBody, sendJson } from '../core/http-io.js';
import { validateSchema } from '../core/schemas.js';
import { CARD_ERROR_CODES, CARD_ERROR_TEXTS, CARD_HTTP_STATUS, type CardFailure } from './codes.js';
import type { EmulatorContext } from './context.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './limits.js';
import { noteWhy, sendForbidden, sendTooLarge, sendUnauthorized } from './envelope.js';

/** Exact path under {card_base_url} (CARD-PATH). */
export const CARD_CLOSE_PATH = '/card/close';

const FIELDS = ['merchantId', 'merchantUserId', 'powerCardId', 'channel', 'closeSerialNo'] as const;

/**
 * Serves card close (CARD-*): HTTP 200 with the response shape on success and on failure
 * (U-CARD-VALUES). Card close carries no credential in the interface (U-CARD-AUTH); an
 * `X-API-KEY` that is sent anyway is checked (401, 403 without the closeCard permission or for
 * another merchant).
 */
export async function serveCardClose(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = `req-${ctx.random.uuid()}`;
  const fail = (failure: CardFailure, detail: string) => sendCardFailure(ctx, res, requestId, failure, detail);
  const header = req.headers['x-api-key'];
  let keyMerchant: number | undefined;
  if (header !== undefined) {
    const verdict = ctx.keys.check(header, 'closeCard', ctx.now(), { ignoreWindow: ctx.faults.has('err401-expired-ok'), ignorePermissions: ctx.faults.has('no-403') });
    if (!verdict.ok) return verdict.status === 401 ? sendUnauthorized(ctx, res, verdict.why) : sendForbidden(res, verdict.why);
    keyMerchant = verdict.merchant.userId;
  }
  if (mediaType(req.headers['content-type']) !== 'application/json' && !ctx.faults.has('ct-any')) {
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
  const issues = validateSchema('CardCloseRequest', value);
  if (issues.length > 0) return fail('badRequest', `invalid request: ${issues.map((issue) => issue.message).join('; ')} [CARD-REQ]`);
  // A number a float cannot hold (1e999) passes a string schema as its text: check the type once more.
  const notText = FIELDS.filter((field) => typeof (value as Record<string, unknown>)[field] !== 'string');
  if (notText.length > 0) return fail('badRequest', `${notText.join(', ')} must be strings [CARD-REQ]`);
  const request = value as Record<(typeof FIELDS)[number], string>;
  const empty = FIELDS.filter((field) => request[field].trim() === '');
  if (empty.length > 0) return fail('badRequest', `${empty.join(', ')} must not be empty [CARD-REQ]`);
  const merchant = [...ctx.merchants.values()].find((m) => String(m.userId) === request.merchantId);
  if (!merchant) return fail('merchantNotFound', `no merchant ${request.merchantId}`);
  if (keyMerchant !== undefined && keyMerchant !== merchant.userId) {
    return sendForbidden(res, `X-API-KEY of merchant ${keyMerchant} used for merchant ${merchant.userId}`);
  }
  const bizId = `biz-${ctx.random.hex(8)}`;
  const { policies } = ctx.config;
  // U-CARD-VALUES (policy closeSerialNo) and U-STATES (policy cardRegistry: off closes any card once).
  const checkSerial = policies.closeSerialNo === 'unique' && !ctx.faults.has('card-repeat-serial-ok');
  const outcome = ctx.store.closeCard(merchant.userId, request.powerCardId, request.merchantUserId, request.closeSerialNo, bizId, checkSerial, policies.cardRegistry === 'on');
  switch (outcome) {
    case 'duplicate-serial':
      return fail('duplicateSerialNo', `closeSerialNo ${request.closeSerialNo} was used for an earlier close of merchant ${merchant.userId}`);
    case 'not-found':
      return fail('cardNotFound', `no card ${request.powerCardId} of merchant ${merchant.userId} held by ${request.merchantUserId}`);
    case 'already-closed':
      return fail('alreadyClosed', `card ${request.powerCardId} is closed already`);
    case 'closed':
      noteWhy(res, `closed ${request.powerCardId}`);
      return sendJson(res, 200, {
        success: true,
        errorCode: '',
        errorMessage: '',
        errorMessageEn: '',
        detailMessage: '',
        requestId,
        data: { bizId, status: 'CLOSED' },
      });
  }
}

/**
 * CARD-ERR: success false with every error field filled, data null (fault card-missing-fields drops
 * errorMessageEn); HTTP 200, or a 4xx under the policy `refusals: http` (U-CODES).
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
  if (ctx.faults.has('card-missing-fields')) delete body.errorMessageEn;
  sendJson(res, ctx.config.policies.refusals === 'http' ? CARD_HTTP_STATUS[failure] : 200, body);
}
