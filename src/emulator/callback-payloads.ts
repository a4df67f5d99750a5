import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import {
  CALLBACK_TYPE_TABLE,
  callbackPayload,
  callbackTypeEntry,
  otherCallbackType,
  type CallbackTypeTable,
} from '../spec/callback-types.js';
import type { EmulatorRandom } from './emulator-context.js';

/** A callback type (`type` of the payload): one of the callback type table's. */
export type CallbackType = number;

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A TRON-looking address (T + 33 Base58 characters); not a valid checksum, which no callback needs. */
function tronAddress(random: EmulatorRandom): string {
  const hex = random.hex(33);
  let out = 'T';
  for (let i = 0; i < 33; i++) out += BASE58[Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16) % BASE58.length];
  return out;
}

/** A new trackingId for an event of `type` (stable across its deliveries, CB-ID-OTHER); its prefix says the type. */
export function newTrackingId(
  type: CallbackType,
  random: EmulatorRandom,
  table: CallbackTypeTable = CALLBACK_TYPE_TABLE,
): string {
  return `${(callbackTypeEntry(type, table) ?? otherCallbackType(type)).trackingPrefix}-${random.hex(8)}`;
}

/**
 * The default payload of a callback type, without requestUUID (set per delivery, CB-UUID): the
 * callback type table's fields and example values (`table`, default the built-in one), with fresh
 * random ids, transaction hashes and addresses. Fields follow the spec's CallbackPayload model
 * (U-CB-FIELDS).
 *
 * @example defaultCallbackPayload(1, 'dep-1', cryptoRandom).txid.length // 64
 */
export function defaultCallbackPayload(
  type: CallbackType,
  trackingId: string,
  random: EmulatorRandom,
  table: CallbackTypeTable = CALLBACK_TYPE_TABLE,
): Record<string, ExactJson> {
  const callBackId = `cb-${random.hex(8)}`;
  const address = () => tronAddress(random);
  // Values are drawn in field order, so a seeded random source gives the same payload every time.
  return callbackPayload(
    callbackTypeEntry(type, table) ?? otherCallbackType(type),
    { trackingId, tenantUserId: '10001', business: new LosslessNumber('0') },
    { callBackId, txid: () => random.hex(32), toAddress: address, fromAddress: address, address },
  );
}
