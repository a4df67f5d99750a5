import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { encodeBase64 } from '../crypto/base64.js';
import type { RunSession } from '../net/run-session.js';
import { callbackPayload, callbackTypeEntry, otherCallbackType, providerName, type CallbackTypeEntry } from '../spec/callback-types.js';
import { API_KEY_HEADER, CALLBACK_CONTENT_TYPE, callbackHeaders, sealCallback, spelledHeaders, withRequestUUID } from '../wire/callback-delivery.js';
import { redact } from './redact.js';
import { type Exchange } from './observation.js';
import { type StrangerKeys } from './stranger-keys.js';
import type { DeliverStep } from './model.js';
import { parseProbeAnswer, runShellCommand } from './probe-reader.js';
import { fill, type TemplateScope } from './template.js';
import { transportOf } from './transport.js';
import { StepError } from './step-fault.js';
import type { MerchantTarget } from './types.js';

/**
 * The default payload of a callback type (the callback type table's fields and example values,
 * U-CB-FIELDS), before overrides: fresh ids and txid, and every amount that the table gives as an
 * exact number the 20-digit `12345678901234567890.123`, which a float would round.
 */
export function defaultPayload(type: number, tenantUserId = 'u-20931'): Record<string, ExactJson> {
  const common: Record<string, ExactJson> = { requestUUID: '', trackingId: `wc-${randomUUID()}`, tenantUserId, business: new LosslessNumber('0') };
  const amount = (entry: CallbackTypeEntry): ExactJson =>
    entry.example.amount instanceof LosslessNumber ? new LosslessNumber('12345678901234567890.123') : (entry.example.amount ?? null);
  return callbackPayload(callbackTypeEntry(type) ?? otherCallbackType(type), common, {
    txid: randomBytes(32).toString('hex'),
    callBackId: `wc-${randomUUID()}`,
    amount,
  });
}

/** Named events of a case, for redeliveries (`same`) and wrapped-contract twins (`twin`). */
export type EventBook = Map<string, Record<string, ExactJson>>;

/**
 * How callback fields are spelt (U-CB-FIELDS): `interface` as the interface's idempotency table (CB-ID-*)
 * (`txid`, `chain`), `provider` as the provider's public documentation (`txId`, `chainName`).
 */
export type Spelling = 'interface' | 'provider';

/**
 * How a callback's `amount` is written (U-CB-FIELDS leaves it open; ORDER-FIELDS makes it a
 * BigDecimal either way): `number` a JSON number with the exact digits, `string` a decimal string
 * with the same digits. Undefined: as the case wrote it.
 */
export type AmountForm = 'number' | 'string';

/** The BigDecimal fields of a callback payload (the spec's `Decimal`). */
const DECIMAL_FIELDS = ['amount'];
/** A decimal string that is also a JSON number's text (a string like `+5` or `.5` stays a string). */
const JSON_NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The payload with its amounts written in `form` (same digits); the order of fields is kept. */
export function withAmountForm(payload: Record<string, ExactJson>, form: AmountForm | undefined): Record<string, ExactJson> {
  if (!form) return payload;
  return Object.fromEntries(
    Object.entries(payload).map(([name, value]) => {
      if (!DECIMAL_FIELDS.includes(name)) return [name, value];
      if (form === 'string' && value instanceof LosslessNumber) return [name, value.value];
      if (form === 'number' && typeof value === 'string' && JSON_NUMBER_TEXT.test(value)) return [name, new LosslessNumber(value)];
      return [name, value];
    }),
  );
}

/** The payload with its fields spelt as asked; the order of fields is kept. */
function spell(payload: Record<string, ExactJson>, spelling: Spelling): Record<string, ExactJson> {
  if (spelling === 'interface') return payload;
  return Object.fromEntries(Object.entries(payload).map(([name, value]) => [providerName(name), value]));
}

/** A fresh event like `base` (new trackingId, txid, callBackId): a distinct event of the same type. */
function distinctFrom(base: Record<string, ExactJson>): Record<string, ExactJson> {
  const fresh = defaultPayload(Number(String(base.type)));
  const copy: Record<string, ExactJson> = { ...base, trackingId: fresh.trackingId ?? `wc-${randomUUID()}` };
  for (const name of ['txid', 'txId', 'callBackId'])
    if (name in copy) copy[name] = name === 'callBackId' ? `wc-${randomUUID()}` : randomBytes(32).toString('hex');
  return copy;
}

/** The body of one delivery: encrypted, then mangled as the case asks. Bodies hold '+', '/' and '='. */
function deliveryBody(
  payload: Record<string, ExactJson>,
  step: DeliverStep,
  target: MerchantTarget,
  stranger: StrangerKeys,
): { body: string; contentType: string; text: string } {
  const mangle = step.mangle ?? 'none';
  const key = mangle === 'wrong-key' ? stranger.privateKey : target.privateKey;
  for (let attempt = 0; ; attempt++) {
    // A new requestUUID per delivery (CB-UUID) also varies the ciphertext until it shows all three characters.
    const stamped = withRequestUUID(payload);
    const text = mangle === 'invalid-payload' ? stringifyExact({ ...stamped, type: new LosslessNumber('99') }) : stringifyExact(stamped);
    const bytes =
      mangle === 'not-json'
        ? Buffer.from(`not json: ${text.slice(0, 40)}`)
        : mangle === 'not-utf8'
          ? Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text)])
          : Buffer.from(text, 'utf8');
    const sealed = sealCallback(bytes, key, target.profile);
    // '=' can only appear when the ciphertext's length is not a multiple of 3 bytes.
    const padded = sealed.includes('=') || Buffer.byteLength(sealed, 'base64') % 3 === 0;
    if (attempt < 200 && !(sealed.includes('+') && sealed.includes('/') && padded)) continue;
    const body = (() => {
      switch (mangle) {
        case 'form-field':
          return `data=${encodeURIComponent(sealed)}`;
        case 'plus-as-space':
          return sealed.replaceAll('+', ' ');
        case 'url-safe':
          return sealed.replaceAll('+', '-').replaceAll('/', '_');
        case 'line-breaks':
          return sealed.replace(/(.{76})/g, '$1\r\n');
        case 'garbage':
          return 'this is not Base64 at all: {"errCode":0} %%%';
        case 'truncated':
          return encodeBase64(Buffer.from(sealed, 'base64').subarray(0, -16));
        default:
          return sealed;
      }
    })();
    return { body, contentType: CALLBACK_CONTENT_TYPE, text };
  }
}

/** The X-API-KEY of a delivery; undefined sends none. */
function apiKeyFor(choice: DeliverStep['apiKey'], target: MerchantTarget): string | undefined {
  switch (choice ?? 'valid') {
    case 'missing':
      return undefined;
    case 'unknown':
      return `wc-unknown-${randomUUID()}`;
    case 'expired':
      return target.expiredKey;
    default:
      return target.apiKey;
  }
}

/** Parses a probe's answer (`{"processed": [...]}`, or a bare array from a probe command) into exact JSON texts. */
export function parseProbe(text: string, source: string): string[] {
  return parseProbeAnswer(text, source).entries;
}

/**
 * Posts one callback body as the service does (src/wire/callback-delivery.ts): the raw body, the
 * form content type, the given X-API-KEY (none when undefined; redacted in the evidence), its
 * header named `keyHeader` on the wire (`X-API-KEY` as the interface spells it). A transport
 * failure is the exchange's error.
 */
export async function postCallback(
  target: MerchantTarget,
  body: string,
  plainText: string,
  key: string | undefined,
  contentType = CALLBACK_CONTENT_TYPE,
  keyHeader = API_KEY_HEADER,
): Promise<Exchange> {
  const headers: Record<string, string> = { ...callbackHeaders(key), 'content-type': contentType };
  const request = { method: 'POST', url: target.callbackUrl, headers: key ? { ...headers, 'x-api-key': redact(key) } : headers, body, plain: plainText };
  try {
    const wire = await transportOf(target).send({ method: 'POST', url: target.callbackUrl, headers: spelledHeaders(headers, keyHeader), body });
    const answer = wire.body.toString('utf8');
    let json: ExactJson | undefined;
    try {
      json = parseExactJson(answer);
    } catch {
      json = undefined;
    }
    return { request, payloadText: plainText, response: { status: wire.status, headers: wire.headers, body: answer, ...(json === undefined ? {} : { json }) } };
  } catch (error) {
    return { request, payloadText: plainText, error: (error as Error).message };
  }
}

/**
 * Runs the user's `--restart` command, then waits (up to 30 s) until the callback URL answers again;
 * returns an error line or undefined. `session` is the run's (run-context.ts).
 */
export async function runRestart(target: MerchantTarget, session: RunSession): Promise<string | undefined> {
  // The receiver goes away on purpose: a refused connection now is not "the target stopped answering".
  for (const url of [target.callbackUrl, target.probeUrl]) if (url) session.forget(new URL(url).origin);
  try {
    if (target.restartHook) await target.restartHook();
    else if (target.restartCmd) await runShellCommand(target.restartCmd, '--restart', 120_000);
    else return 'no --restart command was given';
  } catch (error) {
    return (error as Error).message;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await transportOf(target).send({ method: 'GET', url: target.callbackUrl, headers: {}, timeoutMs: 2000 });
      return undefined;
    } catch (error) {
      if (Date.now() > deadline) return `the callback URL did not answer within 30 s of the restart: ${(error as Error).message}`;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Delivers a callback (or several identical ones, possibly at the same moment) to the merchant, as
 * the service would: raw Base64 body, form content type, the merchant's own key.
 */
export async function runDelivery(
  step: DeliverStep,
  target: MerchantTarget,
  scope: TemplateScope,
  events: EventBook,
  stranger: StrangerKeys,
  spelling: Spelling = 'interface',
  amounts?: AmountForm,
): Promise<{ exchanges: Exchange[]; delivered: string[] }> {
  let payload: Record<string, ExactJson>;
  if (step.same) {
    const known = events.get(step.same);
    if (!known) throw new StepError('suite', `deliver.same names ${step.same}, which no earlier step defined`);
    payload = known;
  } else {
    const base = step.twin ? events.get(step.twin) : defaultPayload(step.type ?? 1);
    if (!base) throw new StepError('suite', `deliver.twin names ${step.twin}, which no earlier step defined`);
    payload = withAmountForm(
      spell(
        { ...base, ...(step.twin ? { trackingId: `wc-${randomUUID()}` } : {}), ...(fill(step.fields ?? {}, scope) as Record<string, ExactJson>) },
        spelling,
      ),
      amounts,
    );
    if (step.event) events.set(step.event, payload);
  }
  const key = apiKeyFor(step.apiKey, target);
  const count = step.deliveries ?? 1;
  const deliverOne = async (event: Record<string, ExactJson>): Promise<Exchange> => {
    const { body, contentType, text } = deliveryBody({ ...event }, step, target, stranger);
    return postCallback(target, body, text, key, contentType);
  };
  const exchanges: Exchange[] = [];
  if (step.distinct) {
    // A long history: distinct events, each delivered once, eight at a time.
    const events = Array.from({ length: step.distinct }, () => distinctFrom(payload));
    for (let i = 0; i < events.length; i += 8) exchanges.push(...(await Promise.all(events.slice(i, i + 8).map((event) => deliverOne(event)))));
  } else if (step.concurrent) exchanges.push(...(await Promise.all(Array.from({ length: count }, () => deliverOne(payload)))));
  else for (let i = 0; i < count; i++) exchanges.push(await deliverOne(payload));
  return { exchanges, delivered: exchanges.map((exchange) => exchange.payloadText ?? '') };
}
