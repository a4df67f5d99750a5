/**
 * What a service may accept: input that breaks no rule binding the service to refuse it. The
 * `refused` check asks here before it fails an accepted request; an acceptance found here is
 * judged under the open point named (a warning, a failure only under --strict).
 *
 * - Base64 forms of `data` that the pattern of ENERGY-DATA/ORDER-DATA (`^[A-Za-z0-9+/]+={0,2}$`)
 *   allows and common decoders read (src/wire/crypto-failure.ts `LENIENT_BASE64_REASONS`: no '='
 *   padding, non-zero unused bits) → U-CRYPTO. Data outside the pattern stays a failure.
 * - A field a JSON binder coerces to the type the interface names ("1" for the integer tenantType,
 *   "42" for userId, 20931 for the string tenantUserId) when the coerced request is valid → U-CODES:
 *   the typing binds the merchant who sends it; how a service answers a mistyped field (refused with
 *   a business code, or bound as Jackson binds it) is its business codes, open. A missing field or
 *   a value still wrong after coercion stays a failure.
 */
import { LosslessNumber, parseExactJson, type ExactJson } from '../core/exact-json.js';
import { mediaType } from '../platform/http-io.js';
import { validateSchema, type SchemaName } from '../core/schemas.js';
import { BASE64_PATTERN, decodeBase64Strict } from '../crypto/base64.js';
import { CryptoError } from '../crypto/errors.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';
import type { SentRequest } from './observation.js';

/** An acceptance no rule forbids: the open point it is judged under and why. */
interface Leniency {
  rules: Array<'U-CRYPTO' | 'U-CODES'>;
  why: string;
}

/** The plain schema of the order endpoints' requests, by the last path segment. */
const PLAIN_SCHEMAS: Record<string, SchemaName> = {
  getEnergyMaxCount: 'EnergyMaxCountRequest',
  withdrawWithoutVerify: 'OrderRequest',
};

/** The lenient Base64 reason of the form field `data`, when the request's `data` has one. */
function lenientData(request: SentRequest): string | undefined {
  const data = new URLSearchParams(request.body).get('data');
  if (data === null || !BASE64_PATTERN.test(data)) return undefined;
  try {
    decodeBase64Strict(data);
    return undefined;
  } catch (error) {
    const reason = error instanceof CryptoError ? error.reason : undefined;
    if (!reason || !LENIENT_BASE64_REASONS.has(reason)) return undefined;
    return `data is Base64 with ${reason}: the pattern of ENERGY-DATA/ORDER-DATA allows it and common decoders read it (U-CRYPTO)`;
  }
}

/** The value a JSON binder (Jackson) gives `value` for a field the schema types otherwise, or undefined. */
function coerced(value: ExactJson | undefined): ExactJson | undefined {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return new LosslessNumber(value);
  if (value instanceof LosslessNumber) return value.value;
  return undefined;
}

/**
 * The plain request as a service reads it: `valid`, `invalid` (a rule obliges a refusal), or the
 * fields a binder coerced into a valid request. Without a plain request the runner knows, `valid`
 * (the Base64 alone is judged).
 */
function plainReading(request: SentRequest): 'valid' | 'invalid' | string {
  const schema = PLAIN_SCHEMAS[new URL(request.url, 'http://x').pathname.split('/').at(-1) ?? ''];
  if (!schema || request.plain === undefined) return 'valid';
  let plain: ExactJson;
  try {
    plain = parseExactJson(request.plain);
  } catch {
    return 'invalid';
  }
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain) || plain instanceof LosslessNumber)
    return 'invalid';
  const issues = validateSchema(schema, plain);
  if (issues.length === 0) return 'valid';
  const fields = [...new Set(issues.map((issue) => issue.path.split('/')[1] ?? ''))];
  const record = plain as Record<string, ExactJson>;
  const fixed: Record<string, ExactJson> = { ...record };
  for (const field of fields) {
    const value = coerced(record[field]);
    if (!field || value === undefined) return 'invalid';
    fixed[field] = value;
  }
  if (validateSchema(schema, fixed).length > 0) return 'invalid';
  const shown = fields
    .map((field) => {
      const value = record[field];
      return `${field} ${value instanceof LosslessNumber ? value.value : JSON.stringify(value)}`;
    })
    .join(', ');
  return `${shown}: a JSON binder reads ${fields.length === 1 ? 'it' : 'them'} as the type the interface names; how a service answers a mistyped field is open (U-CODES)`;
}

/**
 * Why a service may accept this request though it is not what the interface asks, or undefined
 * when it must refuse it (or the request is what the interface asks).
 */
export function leniencyOf(request: SentRequest): Leniency | undefined {
  // ENERGY-CT/ORDER-CT: under another Content-Type the request must be refused, whatever it holds.
  if (mediaType(request.headers['content-type']) !== 'application/x-www-form-urlencoded') return undefined;
  const plain = plainReading(request);
  if (plain === 'invalid') return undefined;
  const data = lenientData(request);
  const rules: Leniency['rules'] = [
    ...(data ? ['U-CRYPTO' as const] : []),
    ...(plain !== 'valid' ? ['U-CODES' as const] : []),
  ];
  if (rules.length === 0) return undefined;
  return {
    rules,
    why: `${[data, plain === 'valid' ? undefined : plain].filter(Boolean).join('; ')}: no rule obliges a service to refuse it`,
  };
}
