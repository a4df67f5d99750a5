import { randomBytes } from 'node:crypto';
import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import { sealBytes } from '../crypto/codec.js';
import { runRequest, type Exchange, type ServiceTarget, type StrangerKeys } from '../runner/api.js';
import { valueRules } from './refinements.js';
import { componentSchema, deriveArbitrary, type StringFlavour } from './schema-arbitrary.js';
import type { Verdict } from './property.js';

/** The largest tenantUserId an integer result can carry (a Java long, as the service's binding has it). */
const JAVA_LONG_MAX = 9_223_372_036_854_775_807n;

/** The two encrypted endpoints a generated case goes to. */
type Endpoint = 'energy' | 'order';

/** A generated service case: an endpoint and its plain request (exact JSON). */
export interface ServiceCase {
  endpoint: Endpoint;
  plain: Record<string, ExactJson>;
}

/** What every service property shares: the target, a stranger key pair, a per-run tag for unique callBackIds. */
export interface ServiceEnv {
  target: ServiceTarget;
  stranger: StrangerKeys;
  /** 4 characters, new per run: makes each sent callBackId unique without changing its length. */
  tag: string;
  sent: number;
}

/** A new environment for one run against `target`. */
export function serviceEnv(target: ServiceTarget, stranger: StrangerKeys): ServiceEnv {
  return { target, stranger, tag: randomBytes(3).toString('base64url').slice(0, 4), sent: 0 };
}

/** Can this target take generated orders? (An order moves money on a real service: --allow-orders.) */
export function ordersAllowed(target: ServiceTarget): boolean {
  return target.userId !== undefined && target.allowOrders;
}

/** Valid plain requests of the endpoints the target allows, derived from the spec's schemas and x-rules. */
export function validCases(target: ServiceTarget, strings: StringFlavour = 'ascii'): Arbitrary<ServiceCase> {
  const refine = valueRules({ ...(target.userId === undefined ? {} : { userId: target.userId }), strings });
  const energy = deriveArbitrary(componentSchema('EnergyMaxCountRequest'), { refine, strings }).map((plain) => ({
    endpoint: 'energy' as const,
    plain: plain as Record<string, ExactJson>,
  }));
  if (!ordersAllowed(target)) return energy;
  const order = deriveArbitrary(componentSchema('OrderRequest'), { refine, strings }).map((plain) => ({
    endpoint: 'order' as const,
    plain: plain as Record<string, ExactJson>,
  }));
  return fc.oneof({ arbitrary: energy, weight: 1 }, { arbitrary: order, weight: 3 });
}

/** Fixed-width suffix of sent callBackIds (`~` + tag + 5 base-36 digits): a replay is never a duplicate. */
export const CALLBACK_ID_SUFFIX_LENGTH = 10;

/**
 * The plain request as sent: an order's callBackId gets a unique suffix of fixed width (the
 * merchant keeps callBackIds unique, ORDER-CALLBACK-ID; shrinking and replays resend a case).
 */
export function asSent(env: ServiceEnv, testCase: ServiceCase): Record<string, ExactJson> {
  if (testCase.endpoint !== 'order' || typeof testCase.plain.callBackId !== 'string') return testCase.plain;
  env.sent++;
  const suffix = `~${env.tag}${(env.sent % 36 ** 5).toString(36).padStart(5, '0')}`;
  return { ...testCase.plain, callBackId: testCase.plain.callBackId + suffix };
}

/** Encrypts exact bytes as the target's profile says (or hands `data` over as given) and sends them in the form field `data`. */
export async function sendData(
  env: ServiceEnv,
  endpoint: Endpoint,
  data: string,
  plainText: string | undefined,
): Promise<Exchange> {
  const exchange = await runRequest(
    { endpoint, data },
    env.target,
    { caseId: 'generated', saved: {}, ...(env.target.userId === undefined ? {} : { userId: env.target.userId }) },
    env.stranger,
  );
  if (plainText !== undefined) exchange.request.plain = plainText;
  return exchange;
}

/** Encrypts a plain text with the merchant's key per profile. */
export function seal(env: ServiceEnv, plainText: string): string {
  return sealBytes(Buffer.from(plainText, 'utf8'), 'request', env.target.publicKey, { profile: env.target.profile });
}

/** Evidence of one exchange: the decrypted plain request beside the wire, the answer and its decrypted data. */
function evidenceOf(exchange: Exchange, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    exchanges: [
      {
        request: exchange.request,
        response: exchange.response ?? null,
        ...(exchange.error ? { error: exchange.error } : {}),
      },
    ],
    ...extra,
  };
}

const fail = (exchange: Exchange, message: string, rules: string[], extra: Record<string, unknown> = {}): Verdict => ({
  ok: false,
  message,
  rules,
  evidence: evidenceOf(exchange, extra),
});

/**
 * Reads an answer to a request the service must not crash on: an answer at all, no 5xx, JSON, an
 * envelope with an integer code. Returns the envelope, or a failing verdict.
 */
export function readEnvelope(
  exchange: Exchange,
  rules: string[],
): { envelope: Record<string, unknown>; code: string } | { refusedHttp: number } | Verdict {
  const response = exchange.response;
  if (!response) return fail(exchange, `no answer: ${exchange.error ?? 'the connection ended'}`, rules);
  if (response.status >= 500)
    return fail(exchange, `HTTP ${response.status}: the service failed on this input instead of answering`, rules);
  // U-CODES: a refusal as HTTP 4xx is one legal reading of the open error bodies.
  if (response.status !== 200) return { refusedHttp: response.status };
  const json = response.json as Record<string, unknown> | undefined;
  if (!json || typeof json !== 'object' || Array.isArray(json))
    return fail(exchange, 'HTTP 200 whose body is not a JSON envelope', [...rules, 'ENV-CODE']);
  const code = json.code;
  if (!(code instanceof LosslessNumber) || !/^-?\d+$/.test(code.value))
    return fail(exchange, `envelope code ${stringifyExact(code ?? null)} is not an integer`, [...rules, 'ENV-CODE']);
  return { envelope: json, code: String(BigInt(code.value)) };
}

/**
 * Property 1's reading of one answer to a valid request: a success with a result valid against its
 * schema that echoes the callBackId, or a refusal (non-zero code with a message, or HTTP 4xx).
 */
export function judgeValidAnswer(exchange: Exchange, testCase: ServiceCase, sent: Record<string, ExactJson>): Verdict {
  const rules = testCase.endpoint === 'energy' ? ['ENERGY-RES', 'ENV-CODE'] : ['ORDER-RES', 'ENV-CODE'];
  const read = readEnvelope(exchange, rules);
  if ('ok' in read) return read;
  if ('refusedHttp' in read) return { ok: true, tag: `refused HTTP ${read.refusedHttp}` };
  const { envelope, code } = read;
  if (code !== '0') {
    if (typeof envelope.message !== 'string' || envelope.message === '')
      return fail(exchange, `refusal code ${code} without an error text in message`, ['ENV-MSG']);
    return { ok: true, tag: `refused ${code}` };
  }
  if (envelope.message !== '' && envelope.message !== undefined && typeof envelope.message !== 'string')
    return fail(exchange, 'success whose message is not a string', ['ENV-MSG']);
  const response = exchange.response!;
  if (!response.decrypted) {
    return fail(
      exchange,
      response.decryptError
        ? `success whose data does not decrypt with the merchant's key: ${response.decryptError}`
        : 'success without data',
      ['CRYPTO-ENVELOPE', 'ENV-DATA', ...rules.slice(0, 1)],
    );
  }
  const schema = testCase.endpoint === 'energy' ? 'EnergyMaxCountResult' : 'OrderResult';
  const issues = validateSchema(schema, response.decrypted.value);
  if (issues.length > 0)
    return fail(
      exchange,
      `success whose decrypted result breaks ${schema}: ${issues
        .slice(0, 3)
        .map((issue) => issue.message)
        .join('; ')}`,
      [...new Set(issues.flatMap((issue) => issue.rules))],
    );
  if (testCase.endpoint === 'order') {
    const result = response.decrypted.value as Record<string, ExactJson>;
    const id = result.id;
    if (id !== sent.callBackId)
      return fail(
        exchange,
        `success whose result id ${stringifyExact(id ?? null)} is not the callBackId ${stringifyExact(sent.callBackId ?? null)} sent`,
        ['ORDER-RES'],
      );
    // ORDER-RES: the result's tenantUserId is the request's, typed integer. A canonical decimal that
    // fits a Java long must come back digit for digit (the suites' echo compares it the same way);
    // other text has no integer reading, and any integer is accepted for it.
    const tenant = sent.tenantUserId;
    const echoed = result.tenantUserId;
    if (
      typeof tenant === 'string' &&
      /^(0|[1-9]\d{0,18})$/.test(tenant) &&
      BigInt(tenant) <= JAVA_LONG_MAX &&
      !(echoed instanceof LosslessNumber && echoed.value === tenant)
    ) {
      return fail(
        exchange,
        `success whose result tenantUserId ${stringifyExact(echoed ?? null)} is not the request's tenantUserId "${tenant}" (${tenant.length} digits)`,
        ['ORDER-RES'],
      );
    }
  }
  return { ok: true, tag: 'accepted' };
}

/** Properties 2 and 3: bad input is refused (non-zero code with a message, or HTTP 4xx); never a success, never 5xx. */
export function judgeRefused(exchange: Exchange, rules: string[], what: string): Verdict {
  const read = readEnvelope(exchange, rules);
  if ('ok' in read) return read;
  if ('refusedHttp' in read) return { ok: true, tag: `refused HTTP ${read.refusedHttp}` };
  const { envelope, code } = read;
  if (code === '0') {
    const result = exchange.response?.decrypted?.text;
    return fail(exchange, `accepted (code 0) ${what}${result ? `, result ${result.slice(0, 200)}` : ''}`, rules);
  }
  if (typeof envelope.message !== 'string' || envelope.message === '')
    return fail(exchange, `refusal code ${code} without an error text in message`, ['ENV-MSG']);
  return { ok: true, tag: `refused ${code}` };
}
