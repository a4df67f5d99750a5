import { createHash } from 'node:crypto';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import {
  CALLBACK_TYPE_TABLE,
  callbackField,
  callbackTypeEntry,
  eventKey,
  type CallbackTypeTable,
} from '../spec/callback-types.js';

/** A decrypted callback payload: a JSON object (exact numbers as LosslessNumber, or plain numbers). */
export type CallbackPayload = Readonly<Record<string, unknown>>;

/**
 * The idempotency key of a callback (CB-ONCE), made as its type's entry in the callback type table
 * says. Never derived from `requestUUID`, which changes on every
 * delivery (CB-UUID).
 *
 * - type 1, deposit (CB-ID-DEPOSIT): `deposit:<sha256 hex>` over the JSON array text
 *   `[txid, chain, symbol, toAddress]` (values as received, numbers exact). JSON array encoding is
 *   unambiguous (quotes and separators are escaped), so no two field tuples share a key, and
 *   wrapped-contract twins (same txid, another toAddress or symbol) stay apart.
 * - type 3, withdrawal (CB-ID-WITHDRAW): `withdrawal:<txid>`; the txid is globally unique.
 * - every other type, and a type the table does not know (CB-ID-OTHER):
 *   `event:<type>:<JSON array [trackingId, callBackId]>`, the missing callBackId of an event
 *   without an order written as `null`.
 *
 * `txId` and `chainName` (the provider's documented spelling) are read as `txid` and `chain`
 * (U-CB-FIELDS), so one event keeps one key whichever spelling a delivery carries.
 *
 * A payload without the fields its key needs is a TypeError: validate it first.
 *
 * @example idempotencyKey({ type: 3, txid: 'ab12', requestUUID: 'r-1' }) // 'withdrawal:ab12'
 */
export function idempotencyKey(payload: CallbackPayload): string {
  return keyOf(payload, CALLBACK_TYPE_TABLE);
}

/**
 * The idempotency key function of another callback type table (one that adds a type): keys of the
 * built-in types are those of {@link idempotencyKey}.
 *
 * @example idempotencyKeyOf([...CALLBACK_TYPE_TABLE, type8])({ type: 8, refundId: 'r-1', … })
 */
export function idempotencyKeyOf(table: CallbackTypeTable): (payload: CallbackPayload) => string {
  return (payload) => keyOf(payload, table);
}

function keyOf(payload: CallbackPayload, table: CallbackTypeTable): string {
  const type = callbackType(payload);
  const recipe = callbackTypeEntry(type, table)?.key ?? eventKey(type);
  const values = recipe.fields.map((field) => required(payload, field, recipe.subject));
  switch (recipe.form) {
    case 'digest':
      return `${recipe.prefix}:${createHash('sha256').update(stringifyExact(values)).digest('hex')}`;
    case 'value':
      return `${recipe.prefix}:${text(values[0])}`;
    case 'tuple':
      return `${recipe.prefix}:${stringifyExact([...values, ...(recipe.optional ?? []).map((field) => callbackField(payload, field) ?? null)])}`;
  }
}

/** The integer `type` of a payload; a TypeError when it has none. */
export function callbackType(payload: CallbackPayload): number {
  const raw = payload.type;
  const type = raw instanceof LosslessNumber ? Number(raw.value) : typeof raw === 'number' ? raw : Number.NaN;
  if (!Number.isSafeInteger(type))
    throw new TypeError(`the callback has no integer type (got ${stringifyExact(raw ?? null)})`);
  return type;
}

function required(payload: CallbackPayload, field: string, what: string): unknown {
  const value = callbackField(payload, field);
  if (value === undefined || value === null || value === '')
    throw new TypeError(`${what} needs ${field} for its idempotency key`);
  return value;
}

/** A key part as text: strings as they are, anything else as exact JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : stringifyExact(value);
}
