import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { mediaType, readBody } from '../core/http-io.js';
import { BASE64_PATTERN } from '../crypto/base64.js';
import { halfFor, openJson } from '../crypto/codec.js';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import type { EnvelopeFailure } from '../service/codes.js';
import { acceptedBase64 } from '../service/policies.js';
import type { Plain } from '../service/context.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../service/limits.js';
import type { EmulatorMerchant, Permission } from './config.js';
import { familyOf, type CryptoFailureFamily } from '../wire/crypto-failure.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import { merchantKey, type EmulatorContext } from './context.js';
import { sendFailure, sendForbidden, sendSuccess, sendTooLarge, sendUnauthorized } from './envelope.js';
import { REQUEST_CHECK_ORDER } from './variant.js';

/** The two encrypted order endpoints (ENERGY-PATH, ORDER-PATH). */
export type OrderEndpoint = 'getEnergyMaxCount' | 'withdrawWithoutVerify';

/** Exact paths under {base_url} (VERSION-V1). */
export const ORDER_PATHS: Readonly<Record<OrderEndpoint, string>> = Object.freeze({
  getEnergyMaxCount: '/api/v1/api/order/getEnergyMaxCount',
  withdrawWithoutVerify: '/api/v1/api/order/withdrawWithoutVerify',
});

/**
 * Serves getEnergyMaxCount or withdrawWithoutVerify: key check (ERR-401/403) first, so a request
 * without credentials gets 401 whatever its body, then Content-Type (ENERGY-CT, ORDER-CT), form field
 * `data` (ENERGY-DATA, ORDER-DATA), decryption with the merchant's key per profile, then the
 * service's operation (src/service); every failure after the key check is an envelope.
 */
export async function serveOrderEndpoint(ctx: EmulatorContext, endpoint: OrderEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const listed = ctx.variant.requestChecks ? ctx.variant.requestChecks(REQUEST_CHECK_ORDER) : REQUEST_CHECK_ORDER;
  let merchant: EmulatorMerchant | undefined;
  let data = '';
  for (const check of [...listed, ...REQUEST_CHECK_ORDER.filter((one) => !listed.includes(one))]) {
    if (check === 'key') {
      const relax = ctx.variant.keyCheck;
      const sent = req.headers['x-api-key'];
      const header = ctx.variant.apiKey ? ctx.variant.apiKey(typeof sent === 'string' ? sent : undefined, { endpoint, merchants: ctx.config.merchants }) : sent;
      const verdict = ctx.keys.check(header, endpoint satisfies Permission, ctx.now(), {
        ignoreWindow: relax?.ignoreWindow === true,
        ignorePermissions: relax?.ignorePermissions === true,
      });
      if (!verdict.ok) {
        if (verdict.status === 401) return sendUnauthorized(ctx, res, verdict.why);
        return sendForbidden(ctx, res, verdict.why);
      }
      merchant = verdict.merchant;
    } else if (check === 'content-type') {
      const type = mediaType(req.headers['content-type']);
      const conforming = type === 'application/x-www-form-urlencoded' || ctx.variant.anyContentType === true;
      const accepted = ctx.variant.acceptsContentType ? ctx.variant.acceptsContentType(req.headers['content-type'] === undefined ? undefined : type, conforming, { endpoint, header: req.headers['content-type'] }) : conforming;
      if (!accepted) {
        return sendFailure(ctx, res, 'badContentType', `Content-Type must be application/x-www-form-urlencoded, not ${JSON.stringify(req.headers['content-type'] ?? '')}`);
      }
    } else {
      const body = await readBody(req, ctx.config.bodyLimit);
      if (!body.ok) {
        if (body.reason === 'too-large') return sendTooLarge(res, ctx.config.bodyLimit);
        res.destroy();
        return;
      }
      const field = formData(body.body);
      if (!field.ok) return sendFailure(ctx, res, field.failure, field.message);
      data = ctx.variant.requestData ? ctx.variant.requestData(field.data) : field.data;
    }
  }
  // Every check runs (one left out of the variant's order runs last), so the key's merchant is known here.
  if (!merchant) throw new Error('the X-API-KEY check did not run');
  // U-CRYPTO (policy base64Padding): which Base64 forms the pattern allows the service reads.
  const opened = openRequest(merchant, data, acceptedBase64(ctx.service.policies));
  if (!opened.ok) return sendFailure(ctx, res, opened.failure, opened.message);
  const outcome = ctx.operations[endpoint](ctx.service, BigInt(merchant.userId), opened.plain);
  if (!outcome.ok) return sendFailure(ctx, res, outcome.failure, outcome.message);
  sendSuccess(ctx, res, merchant, outcome.result);
}

/** The envelope failure of a request `data` that does not open, by the family of its reason (src/wire/crypto-failure.ts). */
const OPEN_FAILURE: Record<CryptoFailureFamily, EnvelopeFailure> = { base64: 'badBase64', plaintext: 'badJson', key: 'cannotDecrypt' };

/** The form field data, sent once and not empty (ENERGY-DATA, ORDER-DATA). */
function formData(body: Buffer): { ok: true; data: string } | { ok: false; failure: EnvelopeFailure; message: string } {
  const values = new URLSearchParams(body.toString('utf8')).getAll('data');
  if (values.length === 0 || values[0] === '') return { ok: false, failure: 'missingData', message: 'form field data is required' };
  if (values.length > 1) return { ok: false, failure: 'missingData', message: `form field data appears ${values.length} times; send it once` };
  return { ok: true, data: values[0]! };
}

function openRequest(merchant: EmulatorMerchant, data: string, accept: ReadonlySet<CryptoFailureReason>): { ok: true; plain: Plain } | { ok: false; failure: EnvelopeFailure; message: string } {
  const profile = merchant.profile;
  const key = merchantKey(merchant, halfFor('request', 'decrypt', profile));
  let value: ExactJson;
  try {
    value = openJson(data, 'request', key, { profile, base64: { accept } }).value;
  } catch (error) {
    if (!(error instanceof CryptoError)) throw error;
    return { ok: false, failure: OPEN_FAILURE[familyOf(error.reason)], message: `cannot read data: ${describeCryptoFailure(error)}` };
  }
  if (!BASE64_PATTERN.test(data)) {
    // openJson's strict decoder refuses everything the pattern refuses; this is a second fence.
    return { ok: false, failure: 'badBase64', message: 'data does not match ^[A-Za-z0-9+/]+={0,2}$' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber) {
    return { ok: false, failure: 'badJson', message: 'the decrypted data is JSON but not an object' };
  }
  if (nestedDeeperThan(value)) return { ok: false, failure: 'invalidRequest', message: `the decrypted JSON is nested deeper than ${MAX_JSON_DEPTH} levels` };
  return { ok: true, plain: value as Plain };
}
