import { randomUUID } from 'node:crypto';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { plaintextBlockSize } from '../core/profile.js';
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
import { nearMiss } from './merchant-steps.js';
import type { LengthEdge, RequestStep, Step } from './model.js';
import { StepError } from './step-fault.js';
import { fill, type TemplateScope } from './template.js';
import { transportOf } from './transport.js';
import type { ServiceTarget } from './types.js';

const ENDPOINTS: Record<string, { path: string; card?: boolean }> = {
  energy: { path: '/api/v1/api/order/getEnergyMaxCount' },
  order: { path: '/api/v1/api/order/withdrawWithoutVerify' },
  card: { path: '/card/close', card: true },
};

const FORM = 'application/x-www-form-urlencoded';
/** The boundary of a multipart form: '-' is outside the Base64 alphabet, so no data holds it. */
const MULTIPART_BOUNDARY = 'wallet-conformance-part';

/** The Content-Type a request step sends: its own, else card close's JSON or the form it sends. */
function contentTypeOf(step: RequestStep, card: boolean): string {
  if (step.contentType !== undefined) return step.contentType;
  if (card) return 'application/json';
  return step.form === 'multipart' ? `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` : FORM;
}

/** The form carrying `data`: urlencoded (its value encoded, or as it is), or multipart/form-data (RFC 7578). */
function formBody(step: RequestStep, data: string): string {
  if (step.form === 'multipart') {
    const part = `Content-Disposition: form-data; name="data"\r\n\r\n${data}`;
    return `--${MULTIPART_BOUNDARY}\r\n${part}\r\n--${MULTIPART_BOUNDARY}--\r\n`;
  }
  return step.encode === 'unencoded-form' ? `data=${data}` : new URLSearchParams({ data }).toString();
}

/** Joins a base URL (which may carry a path prefix) and an absolute path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

/** The X-API-KEY a case asks for (a list: the header once per value); undefined means "send none". */
function apiKeyFor(
  choice: RequestStep['apiKey'],
  target: ServiceTarget,
  variant?: RequestStep['keyVariant'],
): string | string[] | undefined {
  if (variant) return nearMiss(target.apiKey, variant);
  switch (choice ?? 'valid') {
    case 'missing':
      return undefined;
    case 'unknown':
      return `wc-unknown-${randomUUID()}`;
    case 'expired':
      return target.expiredKey;
    case 'future':
      return target.futureKey;
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
  for (let tries = 1; mangled && !mangled.test(sealed) && tries < 32; tries++)
    sealed = sealJson(plainText, 'request', key, { profile: target.profile });
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
        // Not a fault of anyone's: this key size leaves the case nothing to send (skipped, with the reason).
        throw new StepError(
          'unsupported',
          `the ciphertext's Base64 has no '=' padding to drop (${Buffer.from(sealed, 'base64').length} bytes, a multiple of 3): nothing unpadded to send`,
        );
      return sealed.replace(/=+$/, '');
    }
    default:
      return sealed;
  }
}

const EDGE_OFFSET: Record<LengthEdge, number> = { 'one-under': -1, whole: 0, 'one-over': 1 };

/** The plaintext block size of the target's key and profile (B of n·B). */
function blockOf(target: ServiceTarget): number {
  return plaintextBlockSize(target.profile, target.publicKey.modulusBytes);
}

/**
 * `text` (a JSON object) lengthened with spaces before its closing brace, which JSON ignores, so its
 * UTF-8 plaintext ends at `edge` of `blocks` RSA blocks (or of the fewest that fit it, if more).
 */
function padToEdge(text: string, edge: LengthEdge, blocks: number, target: ServiceTarget): string {
  const block = blockOf(target);
  const length = Buffer.byteLength(text, 'utf8');
  const offset = EDGE_OFFSET[edge];
  const wanted = Math.max(blocks, Math.ceil((length - offset) / block)) * block + offset;
  return `${text.slice(0, -1)}${' '.repeat(wanted - length)}}`;
}

/**
 * `plain` with its callBackId lengthened so the answer's plaintext ends at `edge` of at least two
 * blocks: the case's previous answer had `bytes` bytes for its callBackId, and an ASCII character
 * more in the id is a byte more in an answer that echoes it (ORDER-RES). A fresh id, longer than
 * the previous one, so no order repeats a callBackId (ORDER-CALLBACK-ID).
 */
function steerAnswer(
  plain: Record<string, ExactJson>,
  edge: LengthEdge,
  scope: TemplateScope,
  target: ServiceTarget,
): Record<string, ExactJson> {
  const last = scope.lastAnswer;
  // The case's first order got no answer that opens (its own checks judge that): no length to steer by.
  if (!last?.callBackId)
    throw new StepError(
      'unsupported',
      "no answer length to steer by: the case's first order got no success answer that opens with the merchant's key",
    );
  const block = blockOf(target);
  const offset = EDGE_OFFSET[edge];
  const fixed = last.bytes - Buffer.byteLength(last.callBackId, 'utf8');
  const base = `${last.callBackId}-`;
  const wanted = Math.max(2, Math.ceil((fixed + base.length + 1 - offset) / block)) * block + offset;
  return { ...plain, callBackId: `${base}${'e'.repeat(wanted - fixed - base.length)}` };
}

/**
 * Sends the requests of one step: one, or one per edge of `plainLength` (the same content at three
 * lengths, for the differential oracle of CRYPTO-SAME), each with its answer.
 */
export async function runRequests(
  step: RequestStep,
  target: ServiceTarget,
  scope: TemplateScope,
  stranger: StrangerKeys,
): Promise<Exchange[]> {
  if (!step.plainLength) return [await runRequest(step, target, scope, stranger)];
  const exchanges: Exchange[] = [];
  for (const edge of step.plainLength) exchanges.push(await runRequest(step, target, scope, stranger, edge));
  return exchanges;
}

/** The plain text of a request step (templates filled, its length steered as the step asks); undefined without one. */
function plainOf(
  step: RequestStep,
  target: ServiceTarget,
  scope: TemplateScope,
  edge?: LengthEdge,
): string | undefined {
  let plain: string | undefined;
  if (step.plainText !== undefined) plain = String(fill(step.plainText, scope));
  else if (step.plain !== undefined) {
    let value = fill(step.plain, scope) as Record<string, ExactJson>;
    if (step.answerLength) value = steerAnswer(value, step.answerLength, scope, target);
    plain = stringifyExact(value);
  }
  return plain !== undefined && edge ? padToEdge(plain, edge, step.plainBlocks ?? 1, target) : plain;
}

/**
 * Builds and sends one request to the service side: the runner encrypts the plain payload, puts it
 * in the form field `data` (or the raw body the case gives), and decrypts the envelope's answer.
 */
export async function runRequest(
  step: RequestStep,
  target: ServiceTarget,
  scope: TemplateScope,
  stranger: StrangerKeys,
  edge?: LengthEdge,
): Promise<Exchange> {
  const endpoint = ENDPOINTS[step.endpoint];
  const path = endpoint?.path ?? step.endpoint;
  const url = joinUrl(endpoint?.card ? target.cardBaseUrl : target.baseUrl, path);
  const headers: Record<string, string> = {};
  const key = apiKeyFor(step.apiKey, target, step.keyVariant);
  const keys = key === undefined || endpoint?.card ? [] : typeof key === 'string' ? [key] : key;
  if (keys.length) headers['x-api-key'] = keys[0]!;
  const contentType = contentTypeOf(step, endpoint?.card === true);
  if (contentType !== 'none') headers['content-type'] = contentType;

  let body = '';
  let plain: string | undefined;
  if (step.body !== undefined) body = String(fill(step.body, scope));
  else if (step.json !== undefined) body = stringifyExact(fill(step.json, scope));
  else {
    plain = plainOf(step, target, scope, edge);
    const data =
      step.data !== undefined
        ? String(fill(step.data, scope))
        : plain !== undefined
          ? encodeData(plain, step, target, stranger)
          : undefined;
    if (data !== undefined) body = formBody(step, data);
  }
  if (step.save && plain !== undefined) scope.saved[step.save] = parseExactJson(plain);
  if (step.save && step.json !== undefined) scope.saved[step.save] = parseExactJson(body);

  const request = { method: step.method ?? 'POST', url, headers, body, ...(plain === undefined ? {} : { plain }) };
  const shown = {
    ...request,
    headers: keys.length ? { ...headers, 'x-api-key': keys.map((one) => redact(one)).join(', ') } : headers,
  };
  // Several keys are several X-API-KEY lines, as a client that sets the header twice sends them.
  const wireHeaders: Record<string, string | string[]> = spelledHeaders(headers);
  if (keys.length > 1) wireHeaders['X-API-KEY'] = [...keys];
  try {
    const wire = await transportOf(target).send({ method: request.method, url, headers: wireHeaders, body });
    const response = readResponse(wire.status, wire.headers, wire.body.toString('utf8'), target);
    rememberAnswer(scope, plain, response);
    return { request: shown, response };
  } catch (error) {
    return { request: shown, error: (error as Error).message };
  }
}

/** Keeps the length of a decrypted answer and the callBackId its request carried, for a later `answerLength`. */
function rememberAnswer(scope: TemplateScope, plain: string | undefined, response: ReceivedResponse): void {
  if (!response.decrypted) return;
  let callBackId: unknown;
  try {
    callBackId =
      plain === undefined ? undefined : (parseExactJson(plain) as Record<string, unknown> | null)?.callBackId;
  } catch {
    callBackId = undefined;
  }
  scope.lastAnswer = {
    bytes: Buffer.byteLength(response.decrypted.text, 'utf8'),
    ...(typeof callBackId === 'string' ? { callBackId } : {}),
  };
}

/** Parses the answer; an envelope's `data` is decrypted with the merchant's key per profile. */
function readResponse(
  status: number,
  headers: Record<string, string>,
  body: string,
  target: ServiceTarget,
): ReceivedResponse {
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
          const opened = openJson(encodeBase64(Buffer.from(data, 'base64')), 'response', target.publicKey, {
            profile: target.profile,
          });
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

/** An energy amount as sent: `#decimal:DIGITS` (when the templates have not made it one already) as its exact digits. */
function exactAmount(value: number | string | LosslessNumber): number | LosslessNumber {
  return typeof value === 'string' ? new LosslessNumber(value.replace(/^#decimal:/, '')) : value;
}

/** Runs a control step against the service's control API (docs/service-guide.md), through the generated client. */
export async function runControl(control: NonNullable<Step['control']>, target: ServiceTarget): Promise<Exchange> {
  const client = controlClientOf(target);
  const request = control.energy
    ? controlSetEnergyRequest(client, merchantOf(target), {
        balance: exactAmount(control.energy.balance),
        costPerTx: exactAmount(control.energy.costPerTx),
      })
    : controlOpenCardRequest(client, merchantOf(target), control.card!);
  const { method, url, body = '' } = request;
  try {
    const answer = await sendControlRequest(client, request);
    return {
      request: { method, url, headers: { 'x-control-token': redact(client.token, 'ct') }, body },
      response: { status: answer.status, headers: {}, body: answer.text },
      ...(answer.status >= 200 && answer.status < 300
        ? {}
        : { error: `control API answered ${answer.status}: ${answer.text.slice(0, 200)}` }),
    };
  } catch (error) {
    return { request: { method, url, headers: {}, body }, error: (error as Error).message };
  }
}
