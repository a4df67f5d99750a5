import { randomUUID } from 'node:crypto';
import { parseExactJson, stringifyExact } from '../core/exact-json.js';
import { BASE64_PATTERN, encodeBase64 } from '../crypto/base64.js';
import { openJson, sealJson } from '../crypto/codec.js';
import { CryptoError } from '../crypto/errors.js';
import { spelledHeaders } from '../wire/callback-delivery.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import { controlOpenCardRequest, controlSetEnergyRequest, sendControlRequest } from '../generated/control-client.js';
import { redact } from './redact.js';
import { type Exchange, type ReceivedResponse } from './observation.js';
import { type StrangerKeys } from './stranger-keys.js';
import { controlClientOf, merchantOf } from './control.js';
import type { RequestStep, Step } from './model.js';
import { fill, type TemplateScope } from './template.js';
import { transportOf } from './transport.js';
import type { ServiceTarget } from './types.js';

const ENDPOINTS: Record<string, { path: string; card?: boolean }> = {
  energy: { path: '/api/v1/api/order/getEnergyMaxCount' },
  order: { path: '/api/v1/api/order/withdrawWithoutVerify' },
  card: { path: '/card/close', card: true },
};

const FORM = 'application/x-www-form-urlencoded';

/** Joins a base URL (which may carry a path prefix) and an absolute path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

/** The X-API-KEY a case asks for; undefined means "send none". */
function apiKeyFor(choice: RequestStep['apiKey'], target: ServiceTarget): string | undefined {
  switch (choice ?? 'valid') {
    case 'missing':
      return undefined;
    case 'unknown':
      return `wc-unknown-${randomUUID()}`;
    case 'expired':
      return target.expiredKey;
    case 'forbidden':
      return target.forbiddenKey;
    default:
      return target.apiKey;
  }
}

/** Encrypts the plain request and shapes the `data` value as the case asks (mangled or not). */
function encodeData(plainText: string, step: RequestStep, target: ServiceTarget, stranger: StrangerKeys): string {
  const encode = step.encode ?? 'standard';
  const key = encode === 'wrong-key' ? stranger.publicKey : target.publicKey;
  let sealed = sealJson(plainText, 'request', key, { profile: target.profile });
  // A mangling of '+' or '/' changes nothing when the ciphertext holds none (PKCS#1 v1.5 pads at
  // random, so about 1 in 200 two-block requests): seal again, so the case sends what it says it does.
  const mangled = encode === 'plus-as-space' ? /\+/ : encode === 'url-safe' ? /[+/]/ : undefined;
  for (let tries = 1; mangled && !mangled.test(sealed) && tries < 32; tries++) sealed = sealJson(plainText, 'request', key, { profile: target.profile });
  switch (encode) {
    case 'url-safe':
      return sealed.replaceAll('+', '-').replaceAll('/', '_');
    case 'line-breaks':
      return sealed.replace(/(.{76})/g, '$1\r\n');
    case 'plus-as-space':
      return sealed.replaceAll('+', ' ');
    case 'truncated':
      return encodeBase64(Buffer.from(sealed, 'base64').subarray(0, -16));
    case 'unpadded': {
      // A ciphertext of a whole number of 3-byte groups (a 3072-bit key) has no '=' to drop.
      if (!sealed.endsWith('='))
        throw new Error(
          `the ciphertext's Base64 has no '=' padding to drop (${Buffer.from(sealed, 'base64').length} bytes, a multiple of 3): nothing unpadded to send`,
        );
      return sealed.replace(/=+$/, '');
    }
    default:
      return sealed;
  }
}

/**
 * Builds and sends one request to the service side: the runner encrypts the plain payload, puts it
 * in the form field `data` (or the raw body the case gives), and decrypts the envelope's answer.
 */
export async function runRequest(step: RequestStep, target: ServiceTarget, scope: TemplateScope, stranger: StrangerKeys): Promise<Exchange> {
  const endpoint = ENDPOINTS[step.endpoint];
  const path = endpoint?.path ?? step.endpoint;
  const url = joinUrl(endpoint?.card ? target.cardBaseUrl : target.baseUrl, path);
  const headers: Record<string, string> = {};
  const key = apiKeyFor(step.apiKey, target);
  if (key !== undefined && !endpoint?.card) headers['x-api-key'] = key;
  const contentType = step.contentType ?? (endpoint?.card ? 'application/json' : FORM);
  if (contentType !== 'none') headers['content-type'] = contentType;

  let body = '';
  let plain: string | undefined;
  if (step.body !== undefined) body = String(fill(step.body, scope));
  else if (step.json !== undefined) body = stringifyExact(fill(step.json, scope));
  else {
    if (step.plainText !== undefined) plain = String(fill(step.plainText, scope));
    else if (step.plain !== undefined) plain = stringifyExact(fill(step.plain, scope));
    const data = step.data !== undefined ? String(fill(step.data, scope)) : plain !== undefined ? encodeData(plain, step, target, stranger) : undefined;
    if (data !== undefined) body = step.encode === 'unencoded-form' ? `data=${data}` : new URLSearchParams({ data }).toString();
  }
  if (step.save && plain !== undefined) scope.saved[step.save] = parseExactJson(plain);
  if (step.save && step.json !== undefined) scope.saved[step.save] = parseExactJson(body);

  const request = { method: step.method ?? 'POST', url, headers, body, ...(plain === undefined ? {} : { plain }) };
  const shown = { ...request, headers: key ? { ...headers, 'x-api-key': redact(key) } : headers };
  try {
    const wire = await transportOf(target).send({ method: request.method, url, headers: spelledHeaders(headers), body });
    return { request: shown, response: readResponse(wire.status, wire.headers, wire.body.toString('utf8'), target) };
  } catch (error) {
    return { request: shown, error: (error as Error).message };
  }
}

/** Parses the answer; an envelope's `data` is decrypted with the merchant's key per profile. */
function readResponse(status: number, headers: Record<string, string>, body: string, target: ServiceTarget): ReceivedResponse {
  const response: ReceivedResponse = { status, headers, body };
  try {
    response.json = parseExactJson(body);
  } catch {
    return response;
  }
  const data = (response.json as Record<string, unknown> | null)?.data;
  if (typeof data === 'string' && data.length > 0) {
    try {
      const opened = openJson(data, 'response', target.publicKey, { profile: target.profile });
      response.decrypted = { text: opened.text, value: opened.value };
    } catch (error) {
      response.decryptError = describeCryptoFailure(error);
      // Base64 the data pattern allows (no '=' padding, non-zero unused bits) is read as Java's decoder
      // reads it, so the result is still judged; the envelope check warns about the form (U-CRYPTO).
      if (error instanceof CryptoError && LENIENT_BASE64_REASONS.has(error.reason) && BASE64_PATTERN.test(data)) {
        try {
          const opened = openJson(encodeBase64(Buffer.from(data, 'base64')), 'response', target.publicKey, { profile: target.profile });
          response.decrypted = { text: opened.text, value: opened.value };
          response.lenientBase64 = error.reason;
          delete response.decryptError;
        } catch {
          // Not only its form: the decrypt error stands.
        }
      }
    }
  }
  return response;
}

/** Runs a control step against the service's control API (docs/service-guide.md), through the generated client. */
export async function runControl(control: NonNullable<Step['control']>, target: ServiceTarget): Promise<Exchange> {
  const client = controlClientOf(target);
  const request = control.energy
    ? controlSetEnergyRequest(client, merchantOf(target), control.energy)
    : controlOpenCardRequest(client, merchantOf(target), control.card!);
  const { method, url, body = '' } = request;
  try {
    const answer = await sendControlRequest(client, request);
    return {
      request: { method, url, headers: { 'x-control-token': redact(client.token, 'ct') }, body },
      response: { status: answer.status, headers: {}, body: answer.text },
      ...(answer.status >= 200 && answer.status < 300 ? {} : { error: `control API answered ${answer.status}: ${answer.text.slice(0, 200)}` }),
    };
  } catch (error) {
    return { request: { method, url, headers: {}, body }, error: (error as Error).message };
  }
}
