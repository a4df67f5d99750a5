import type { ServerResponse } from 'node:http';
import { sendJson } from '../core/http-io.js';
import { halfFor, sealJson } from '../crypto/codec.js';
import { ENVELOPE_CODES, ENVELOPE_HTTP_STATUS, HTTP_ERROR_BODIES, type EnvelopeFailure } from './codes.js';
import type { EmulatorMerchant } from './config.js';
import { merchantKey, strangerKey, type EmulatorContext } from './context.js';

/** Why a request ended the way it did: for the log line, never for the answer. */
export const WHY = Symbol('why');

/** Remembers the reason of an answer for the request log. */
export function noteWhy(res: ServerResponse, why: string): void {
  (res as ServerResponse & { [WHY]?: string })[WHY] = why;
}

/** The reason noted for the log, if any. */
export function whyOf(res: ServerResponse): string | undefined {
  return (res as ServerResponse & { [WHY]?: string })[WHY];
}

/**
 * Sends the success envelope `{"code":0,"message":"","data":"<Base64>"}` (ENV-CODE, ENV-MSG,
 * ENV-DATA): the result is encrypted with the half the merchant's profile names for responses
 * (CRYPTO-SAME), exact numbers kept.
 */
export function sendSuccess(ctx: EmulatorContext, res: ServerResponse, merchant: EmulatorMerchant, result: unknown): void {
  const { faults } = ctx;
  const profile = merchant.profile;
  const half = halfFor('response', 'encrypt', profile);
  const key = faults.has('response-wrong-key') ? strangerKeyOfHalf(merchant, half) : merchantKey(merchant, half);
  let data = sealJson(result, 'response', key, { profile });
  if (faults.has('response-urlsafe-base64')) data = data.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  if (faults.has('response-line-breaks')) data = data.replace(/.{76}(?=.)/g, '$&\r\n');
  const envelope = {
    code: faults.has('envelope-code-string') ? '0' : 0,
    message: faults.has('envelope-message-null') ? null : '',
    data,
  };
  sendJson(res, 200, envelope);
}

function strangerKeyOfHalf(merchant: EmulatorMerchant, half: 'public' | 'private') {
  const stranger = strangerKey(merchant.keyPair.privateKey.bits);
  return half === 'private' ? stranger : stranger.publicKey;
}

/**
 * Sends a failure envelope `{"code":<non-zero>,"message":"<text>"}` with no data (ENV-DATA; codes:
 * U-CODES), or under the policy `refusals: http` an HTTP 4xx (5xx for an internal error) with
 * `{"code":"<code as text>","message":"<text>"}`, the shape of the interface's other HTTP errors.
 */
export function sendFailure(ctx: EmulatorContext, res: ServerResponse, failure: EnvelopeFailure, message: string): void {
  noteWhy(res, `${ENVELOPE_CODES[failure]} ${message}`);
  if (ctx.config.policies.refusals === 'http') return sendJson(res, ENVELOPE_HTTP_STATUS[failure], { code: String(ENVELOPE_CODES[failure]), message });
  sendJson(res, 200, { code: ENVELOPE_CODES[failure], message });
}

/** ERR-401: HTTP 401 `{"code":"UNAUTHORIZED","message":"unauthorized"}` (or a fault's deviation). */
export function sendUnauthorized(ctx: EmulatorContext, res: ServerResponse, why: string): void {
  noteWhy(res, why);
  if (ctx.faults.has('err401-status-200')) return sendJson(res, 200, { code: 401, message: 'unauthorized' });
  if (ctx.faults.has('err401-wrong-body')) return sendJson(res, 401, { code: 'UNAUTHENTICATED', message: 'unauthorized' });
  sendJson(res, 401, HTTP_ERROR_BODIES.unauthorized);
}

/** ERR-403: HTTP 403 `{"code":"FORBIDDEN","message":"forbidden"}`. */
export function sendForbidden(res: ServerResponse, why: string): void {
  noteWhy(res, why);
  sendJson(res, 403, HTTP_ERROR_BODIES.forbidden);
}

/** ERR-404: HTTP 404 `{"code":"NOT FOUND","message":"not found"}` (or a fault's deviation). */
export function sendNotFound(ctx: EmulatorContext, res: ServerResponse): void {
  if (ctx.faults.has('err404-wrong-body')) return sendJson(res, 404, { code: 'NOT_FOUND', message: 'Not Found' });
  if (ctx.faults.has('err404-status-400')) return sendJson(res, 400, HTTP_ERROR_BODIES.notFound);
  sendJson(res, 404, HTTP_ERROR_BODIES.notFound);
}

/** 413 for a body over the limit (U-LIMITS); the connection closes so the rest is not read. */
export function sendTooLarge(res: ServerResponse, limit: number): void {
  noteWhy(res, `body over ${limit} bytes`);
  sendJson(res, 413, { code: 'PAYLOAD_TOO_LARGE', message: `request body exceeds ${limit} bytes` }, { connection: 'close' });
}
