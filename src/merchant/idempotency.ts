import { createHash } from 'node:crypto';
import { callbackField } from '../core/callback-fields.js';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';

/** Callback `type` values of design.md ("Callback payloads"). */
export const CALLBACK_TYPES = {
  deposit: 1,
  withdrawalRequest: 2,
  withdrawal: 3,
  address: 4,
  invalidAddress: 5,
  notEnoughMoney: 6,
  notEnoughHotMoney: 7,
} as const;

/** Which rule an idempotency key follows: CB-ID-DEPOSIT, CB-ID-WITHDRAW or CB-ID-OTHER. */
export type IdempotencyKind = 'deposit' | 'withdrawal' | 'event';

/** A decrypted callback payload: a JSON object (exact numbers as LosslessNumber, or plain numbers). */
export type CallbackPayload = Readonly<Record<string, unknown>>;

/**
 * The idempotency key of a callback (CB-ONCE). Never derived from `requestUUID`, which changes on
 * every delivery (CB-UUID).
 *
 * - type 1, deposit (CB-ID-DEPOSIT): `deposit:<sha256 hex>` over the JSON array text
 *   `[txid, chain, symbol, toAddress]` (values as received, numbers exact). JSON array encoding is
 *   unambiguous (quotes and separators are escaped), so no two field tuples share a key, and
 *   wrapped-contract twins (same txid, another toAddress or symbol) stay apart.
 * - type 3, withdrawal (CB-ID-WITHDRAW): `withdrawal:<txid>`; the txid is globally unique.
 * - every other type (CB-ID-OTHER): `event:<type>:<JSON array [trackingId, callBackId]>`, the
 *   missing callBackId of an event without an order written as `null`.
 *
 * `txId` and `chainName` (the provider's documented spelling) are read as `txid` and `chain`
 * (U-CB-FIELDS), so one event keeps one key whichever spelling a delivery carries.
 *
 * A payload without the fields its key needs is a TypeError: validate it first.
 *
 * @example idempotencyKey({ type: 3, txid: 'ab12', requestUUID: 'r-1' }) // 'withdrawal:ab12'
 */
export function idempotencyKey(payload: CallbackPayload): string {
  const type = callbackType(payload);
  if (type === CALLBACK_TYPES.deposit) {
    const tuple = ['txid', 'chain', 'symbol', 'toAddress'].map((field) => required(payload, field, 'a deposit (CB-ID-DEPOSIT)'));
    return `deposit:${createHash('sha256').update(stringifyExact(tuple)).digest('hex')}`;
  }
  if (type === CALLBACK_TYPES.withdrawal) {
    return `withdrawal:${text(required(payload, 'txid', 'a withdrawal (CB-ID-WITHDRAW)'))}`;
  }
  const trackingId = required(payload, 'trackingId', `a type ${type} callback (CB-ID-OTHER)`);
  return `event:${type}:${stringifyExact([trackingId, payload.callBackId ?? null])}`;
}

/** The integer `type` of a payload; a TypeError when it has none. */
export function callbackType(payload: CallbackPayload): number {
  const raw = payload.type;
  const type = raw instanceof LosslessNumber ? Number(raw.value) : typeof raw === 'number' ? raw : Number.NaN;
  if (!Number.isSafeInteger(type)) throw new TypeError(`the callback has no integer type (got ${stringifyExact(raw ?? null)})`);
  return type;
}

function required(payload: CallbackPayload, field: string, what: string): unknown {
  const value = callbackField(payload, field);
  if (value === undefined || value === null || value === '') throw new TypeError(`${what} needs ${field} for its idempotency key`);
  return value;
}

/** A key part as text: strings as they are, anything else as exact JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : stringifyExact(value);
}
