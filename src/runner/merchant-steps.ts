import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { plaintextBlockSize } from '../core/profile.js';
import { encodeBase64 } from '../crypto/base64.js';
import type { RunSession } from '../net/run-session.js';
import {
  callbackPayload,
  callbackTypeEntry,
  otherCallbackType,
  providerName,
  type CallbackTypeEntry,
} from '../spec/callback-types.js';
import {
  API_KEY_HEADER,
  CALLBACK_CONTENT_TYPE,
  callbackHeaders,
  sealCallback,
  spelledHeaders,
  withRequestUUID,
} from '../wire/callback-delivery.js';
import { redact } from './redact.js';
import { type Exchange } from './observation.js';
import { type StrangerKeys } from './stranger-keys.js';
import type { BlockEdge, DeliverStep, KeyNearMiss } from './model.js';
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
  const common: Record<string, ExactJson> = {
    requestUUID: '',
    trackingId: `wc-${randomUUID()}`,
    tenantUserId,
    business: new LosslessNumber('0'),
  };
  const amount = (entry: CallbackTypeEntry): ExactJson =>
    entry.example.amount instanceof LosslessNumber
      ? new LosslessNumber('12345678901234567890.123')
      : (entry.example.amount ?? null);
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
export function withAmountForm(
  payload: Record<string, ExactJson>,
  form: AmountForm | undefined,
): Record<string, ExactJson> {
  if (!form) return payload;
  return Object.fromEntries(
    Object.entries(payload).map(([name, value]) => {
      if (!DECIMAL_FIELDS.includes(name)) return [name, value];
      if (form === 'string' && value instanceof LosslessNumber) return [name, value.value];
      if (form === 'number' && typeof value === 'string' && JSON_NUMBER_TEXT.test(value))
        return [name, new LosslessNumber(value)];
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
    const text =
      mangle === 'invalid-payload'
        ? stringifyExact({ ...stamped, type: new LosslessNumber('99') })
        : stringifyExact(stamped);
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

/** Does the key have letters, so that another letter case of it exists? */
export function hasCasedLetter(key: string | undefined): boolean {
  return key !== undefined && key.toUpperCase() !== key.toLowerCase();
}

/** `key` with the case of each letter turned over. */
function swapCase(key: string): string {
  return [...key].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

/** Letters and their accented forms within Latin-1 (a header value's bytes on the wire). */
const ACCENTED: Record<string, string> = {
  a: '\u00e0',
  e: '\u00e9',
  i: '\u00ed',
  o: '\u00f3',
  u: '\u00fa',
  c: '\u00e7',
  n: '\u00f1',
  y: '\u00fd',
  A: '\u00c0',
  E: '\u00c9',
  I: '\u00cd',
  O: '\u00d3',
  U: '\u00da',
  C: '\u00c7',
  N: '\u00d1',
  Y: '\u00dd',
};

/**
 * A near miss of the right key (CB-KEY-401, ERR-401): each differs from `key` in one way a loose
 * comparison forgives. The case variants need a key with letters (the `casedKey` need); when the
 * whole key already is in the asked case, every letter is turned over instead, so it still differs.
 */
export function nearMiss(key: string, variant: KeyNearMiss): string | string[] {
  switch (variant) {
    case 'upper-case':
      return key.toUpperCase() !== key ? key.toUpperCase() : swapCase(key);
    case 'lower-case':
      return key.toLowerCase() !== key ? key.toLowerCase() : swapCase(key);
    case 'one-letter-case': {
      const at = [...key].findLastIndex((c) => c.toUpperCase() !== c.toLowerCase());
      const chars = [...key];
      if (at >= 0) chars[at] = swapCase(chars[at]!);
      return chars.join('');
    }
    case 'appended':
      return key + key.at(-1)!;
    case 'last-removed':
      return key.slice(0, -1);
    case 'first-removed':
      return key.slice(1);
    case 'accented-letter': {
      // An accent-insensitive compare (a collation such as MySQL's utf8mb4_0900_ai_ci, or stripping
      // marks after NFKD) takes it for the key. A key without such a letter gets one in place of its
      // last character: still a near miss that must be refused.
      const chars = [...key];
      const at = chars.findLastIndex((c) => c in ACCENTED);
      chars[at >= 0 ? at : chars.length - 1] = at >= 0 ? ACCENTED[chars[at]!]! : '\u00e9';
      return chars.join('');
    }
    case 'nbsp-before':
      return `\u00a0${key}`;
    case 'nbsp-after':
      // HTTP drops spaces and tabs around a field value, not U+00A0: it reaches the receiver, where a
      // trimming comparison (Python's strip, Go's TrimSpace, Java's strip) removes it.
      return `${key}\u00a0`;
    case 'twice-unknown-first':
      return [`wc-unknown-${randomUUID()}`, key];
  }
}

/** The X-API-KEY of a delivery (two values: the header twice); undefined sends none. */
function apiKeyFor(
  choice: DeliverStep['apiKey'],
  target: MerchantTarget,
  variant?: KeyNearMiss,
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
 * form content type, the given X-API-KEY (none when undefined; a list is the header repeated;
 * redacted in the evidence), its
 * header named `keyHeader` on the wire (`X-API-KEY` as the interface spells it). A transport
 * failure is the exchange's error.
 */
export async function postCallback(
  target: MerchantTarget,
  body: string,
  plainText: string,
  key: string | readonly string[] | undefined,
  contentType = CALLBACK_CONTENT_TYPE,
  keyHeader = API_KEY_HEADER,
): Promise<Exchange> {
  const keys = key === undefined ? [] : typeof key === 'string' ? [key] : key;
  const headers: Record<string, string> = { ...callbackHeaders(keys[0]), 'content-type': contentType };
  const shown = keys.length ? { ...headers, 'x-api-key': keys.map((one) => redact(one)).join(', ') } : headers;
  const request = { method: 'POST', url: target.callbackUrl, headers: shown, body, plain: plainText };
  // Several keys are several X-API-KEY lines, as a client that sets the header twice sends them.
  const wireHeaders: Record<string, string | string[]> = spelledHeaders(headers, keyHeader);
  if (keys.length > 1) wireHeaders[keyHeader] = [...keys];
  try {
    const wire = await transportOf(target).send({
      method: 'POST',
      url: target.callbackUrl,
      headers: wireHeaders,
      body,
    });
    const answer = wire.body.toString('utf8');
    let json: ExactJson | undefined;
    try {
      json = parseExactJson(answer);
    } catch {
      json = undefined;
    }
    return {
      request,
      payloadText: plainText,
      response: { status: wire.status, headers: wire.headers, body: answer, ...(json === undefined ? {} : { json }) },
    };
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
      if (Date.now() > deadline)
        return `the callback URL did not answer within 30 s of the restart: ${(error as Error).message}`;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** A three-byte UTF-8 character (U+20AC): its first byte ends a block, the other two begin the next. */
const SPLIT_CHARACTER = '\u20ac';

/**
 * `payload` with a memo holding SPLIT_CHARACTER and its trackingId lengthened so that character
 * starts on the last byte of a block (CB-DECRYPT): a receiver that decodes each block's plaintext
 * as UTF-8 on its own (a string per block, then joined) garbles or refuses it.
 */
function acrossBlockEdge(payload: Record<string, ExactJson>, block: number): Record<string, ExactJson> {
  const marked = { ...payload, memo: SPLIT_CHARACTER };
  const at = Buffer.from(stringifyExact(withRequestUUID(marked)), 'utf8').indexOf(Buffer.from(SPLIT_CHARACTER, 'utf8'));
  const pad = (((block - 1 - at) % block) + block) % block;
  return { ...marked, trackingId: `${String(payload.trackingId ?? 'wc')}${'x'.repeat(pad)}` };
}

/**
 * The event a deliver step sends: a named one again (`same`), a copy of one (`copy`: its fields,
 * trackingId included, under `type` if given), a new event like one (`twin`: a new trackingId), or
 * a fresh event of `type`; then `fields`, the spelling and the amounts' form.
 */
function eventOf(
  step: DeliverStep,
  scope: TemplateScope,
  events: EventBook,
  spelling: Spelling,
  amounts?: AmountForm,
): Record<string, ExactJson> {
  const named = (name: string, how: string) => {
    const known = events.get(name);
    if (!known) throw new StepError('suite', `deliver.${how} names ${name}, which no earlier step defined`);
    return known;
  };
  if (step.same) return named(step.same, 'same');
  const base = step.copy
    ? retyped(named(step.copy, 'copy'), step.type)
    : step.twin
      ? { ...named(step.twin, 'twin'), trackingId: `wc-${randomUUID()}` }
      : defaultPayload(step.type ?? 1);
  return withAmountForm(
    spell({ ...base, ...(fill(step.fields ?? {}, scope) as Record<string, ExactJson>) }, spelling),
    amounts,
  );
}

/**
 * `event` as an event of `type` (the same values under another type: CB-ID-*): the new type's
 * default payload, with every field the two types share taken from `event`, whichever spelling it
 * used. Without a type, or with the same one, `event` itself.
 */
function retyped(event: Record<string, ExactJson>, type: number | undefined): Record<string, ExactJson> {
  if (type === undefined || String(event.type) === String(type)) return { ...event };
  const fresh = defaultPayload(type);
  for (const name of Object.keys(fresh)) {
    if (name === 'type' || name === 'requestUUID') continue;
    const value = event[name] ?? event[providerName(name)];
    if (value !== undefined) fresh[name] = value;
  }
  return fresh;
}

/**
 * `payload` with its trackingId lengthened so the plaintext ends at `edge` of the RSA blocks of the
 * merchant's key: n·B−1, n·B or n·B+1 bytes for the smallest n that fits (CB-DECRYPT). The
 * requestUUID each delivery stamps has a fixed length, so every delivery keeps the length.
 */
export function atBlockEdge(
  payload: Record<string, ExactJson>,
  edge: BlockEdge,
  target: MerchantTarget,
): Record<string, ExactJson> {
  const block = plaintextBlockSize(target.profile, target.privateKey.modulusBytes);
  if (edge === 'split-character') return acrossBlockEdge(payload, block);
  const length = Buffer.byteLength(stringifyExact(withRequestUUID(payload)), 'utf8');
  const offset = edge === 'one-under' ? -1 : edge === 'whole' ? 0 : 1;
  const blocks = Math.ceil((length - offset) / block);
  const wanted = blocks * block + offset;
  return { ...payload, trackingId: `${String(payload.trackingId ?? 'wc')}${'x'.repeat(wanted - length)}` };
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
  let payload = eventOf(step, scope, events, spelling, amounts);
  if (step.plainLength) payload = atBlockEdge(payload, step.plainLength, target);
  if (step.event) events.set(step.event, payload);
  const key = apiKeyFor(step.apiKey, target, step.keyVariant);
  const count = step.deliveries ?? 1;
  const deliverOne = async (event: Record<string, ExactJson>): Promise<Exchange> => {
    const { body, contentType, text } = deliveryBody({ ...event }, step, target, stranger);
    return postCallback(target, body, text, key, contentType);
  };
  const exchanges: Exchange[] = [];
  if (step.distinct) {
    // A long history: distinct events, each delivered once, eight at a time.
    const events = Array.from({ length: step.distinct }, () => distinctFrom(payload));
    for (let i = 0; i < events.length; i += 8)
      exchanges.push(...(await Promise.all(events.slice(i, i + 8).map((event) => deliverOne(event)))));
  } else if (step.concurrent)
    exchanges.push(...(await Promise.all(Array.from({ length: count }, () => deliverOne(payload)))));
  else for (let i = 0; i < count; i++) exchanges.push(await deliverOne(payload));
  return { exchanges, delivered: exchanges.map((exchange) => exchange.payloadText ?? '') };
}
