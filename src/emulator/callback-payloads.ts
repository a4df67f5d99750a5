import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import type { EmulatorRandom } from './context.js';

/** Callback types of design.md: 1 deposit … 7 not enough hot money. */
export type CallbackType = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** trackingId prefixes per type, so a log line says what an event is. */
const PREFIX: Readonly<Record<CallbackType, string>> = { 1: 'dep', 2: 'wrq', 3: 'wd', 4: 'adr', 5: 'iad', 6: 'nem', 7: 'nhm' };

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A TRON-looking address (T + 33 Base58 characters); not a valid checksum, which no callback needs. */
function tronAddress(random: EmulatorRandom): string {
  const hex = random.hex(33);
  let out = 'T';
  for (let i = 0; i < 33; i++) out += BASE58[Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16) % BASE58.length];
  return out;
}

/** A new trackingId for an event of `type` (stable across its deliveries, CB-ID-OTHER). */
export function newTrackingId(type: CallbackType, random: EmulatorRandom): string {
  return `${PREFIX[type]}-${random.hex(8)}`;
}

/**
 * The default payload of a callback type, without requestUUID (set per delivery, CB-UUID). Fields
 * follow the spec's CallbackPayload model (U-CB-FIELDS): deposits carry the amount as a decimal
 * string, withdrawals as an exact JSON number.
 *
 * @example defaultCallbackPayload(1, 'dep-1', cryptoRandom).txid.length // 64
 */
export function defaultCallbackPayload(type: CallbackType, trackingId: string, random: EmulatorRandom): Record<string, ExactJson> {
  const common = { type: new LosslessNumber(String(type)), trackingId, tenantUserId: '10001', business: new LosslessNumber('0') };
  const callBackId = `cb-${random.hex(8)}`;
  switch (type) {
    case 1:
      return { ...common, txid: random.hex(32), chain: 'TRON', symbol: 'USDT', toAddress: tronAddress(random), fromAddress: tronAddress(random), amount: '250.000001', txIndex: new LosslessNumber('0') };
    case 2:
      return { ...common, callBackId, chain: 'TRON', symbol: 'USDT', toAddress: tronAddress(random), amount: new LosslessNumber('100.5') };
    case 3:
      return { ...common, txid: random.hex(32), callBackId, chain: 'TRON', symbol: 'USDT', toAddress: tronAddress(random), amount: new LosslessNumber('100.5') };
    case 4:
      return { ...common, chain: 'TRON', address: tronAddress(random) };
    case 5:
      return { ...common, callBackId, chain: 'TRON', address: tronAddress(random) };
    case 6:
    case 7:
      return { ...common, callBackId, chain: 'TRON', symbol: 'USDT', amount: '99999.5' };
  }
}
