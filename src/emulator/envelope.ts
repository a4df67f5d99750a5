import type { ServerResponse } from 'node:http';
import { sendJson } from '../platform/http-io.js';
import { ENVELOPE_CODES, ENVELOPE_HTTP_STATUS, HTTP_ERROR_BODIES, type EnvelopeFailure } from '../service/codes.js';
import type { HttpAnswer } from '../service/pipeline.js';
import type { EmulatorContext } from './emulator-context.js';

/** Why a request ended the way it did: for the log line, never for the answer. */
const WHY = Symbol('why');

/** Remembers the reason of an answer for the request log. */
export function noteWhy(res: ServerResponse, why: string): void {
  (res as ServerResponse & { [WHY]?: string })[WHY] = why;
}

/** The reason noted for the log, if any. */
export function whyOf(res: ServerResponse): string | undefined {
  return (res as ServerResponse & { [WHY]?: string })[WHY];
}

/**
 * Sends the failure envelope of a bug of ours (the pipeline, src/service/pipeline.ts, threw):
 * `{"code":<non-zero>,"message":"<text>"}` with no data (ENV-DATA; codes: U-CODES), or under the
 * policy `refusals: http` an HTTP 5xx with `{"code":"<code as text>","message":"<text>"}`.
 */
export function sendFailure(
  ctx: EmulatorContext,
  res: ServerResponse,
  failure: EnvelopeFailure,
  message: string,
): void {
  noteWhy(res, `${ENVELOPE_CODES[failure]} ${message}`);
  if (ctx.service.policies.refusals === 'http')
    return sendJson(res, ENVELOPE_HTTP_STATUS[failure], { code: String(ENVELOPE_CODES[failure]), message });
  sendJson(res, 200, { code: ENVELOPE_CODES[failure], message });
}

/** ERR-404: HTTP 404 `{"code":"NOT FOUND","message":"not found"}` (or the variant's answer). */
export function sendNotFound(ctx: EmulatorContext, res: ServerResponse): void {
  sendHttpError(ctx, res, 'notFound', { status: 404, body: HTTP_ERROR_BODIES.notFound });
}

function sendHttpError(ctx: EmulatorContext, res: ServerResponse, kind: 'notFound', answer: HttpAnswer): void {
  const sent = ctx.variant.httpError ? ctx.variant.httpError(kind, answer) : answer;
  sendJson(res, sent.status, sent.body);
}

/** 413 for a body over the limit (U-LIMITS); the connection closes so the rest is not read. */
export function sendTooLarge(res: ServerResponse, limit: number): void {
  noteWhy(res, `body over ${limit} bytes`);
  sendJson(
    res,
    413,
    { code: 'PAYLOAD_TOO_LARGE', message: `request body exceeds ${limit} bytes` },
    { connection: 'close' },
  );
}
