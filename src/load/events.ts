import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { idempotencyKey } from '../merchant/idempotency.js';
import {
  CALLBACK_TYPES,
  callbackPayload,
  callbackTypeEntry,
  callbackTypeNumbers,
  otherCallbackType,
} from '../spec/callback-types.js';

/** One generated event of a storm: its payload without requestUUID (set per delivery, CB-UUID). */
export interface StormEvent {
  /** Position in the storm, from 0. */
  index: number;
  type: number;
  /** The idempotency key a correct merchant derives (CB-ID-*), to match probe entries. */
  key: string;
  trackingId: string;
  payload: Record<string, ExactJson>;
}

const ADDRESSES = [
  'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
  'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
  'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
  'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
];
const SYMBOLS = ['USDT', 'USDC', 'TRX'];

/** The callback types a storm can generate: all of the callback type table's. */
export const STORM_TYPES: readonly number[] = callbackTypeNumbers();

/**
 * N distinct events of the given types, in a fixed rotation, with realistic fields (the spec's
 * payload model, exact amounts with many digits). Every tenth deposit is a wrapped-contract twin
 * of the deposit before it (same txid, another toAddress or symbol): a distinct event
 * (CB-ID-DEPOSIT) that a merchant keying on txid alone would swallow.
 *
 * @example generateEvents(100, [1, 3])[0].key // 'deposit:…'
 */
export function generateEvents(count: number, types: readonly number[]): StormEvent[] {
  const events: StormEvent[] = [];
  let deposits = 0;
  let lastDeposit: Record<string, ExactJson> | undefined;
  for (let index = 0; index < count; index++) {
    const type = types[index % types.length]!;
    let payload = payloadOf(type, index);
    if (type === CALLBACK_TYPES.deposit) {
      if (lastDeposit && ++deposits % 10 === 0) {
        // Another symbol or another toAddress than the original: a distinct event, the same txid.
        const other = <T>(list: readonly T[], current: ExactJson | undefined) =>
          list[(list.indexOf(current as T) + 1) % list.length]!;
        payload = {
          ...lastDeposit,
          trackingId: `load-${randomUUID()}`,
          ...(index % 20 === 0
            ? { symbol: other(SYMBOLS, lastDeposit.symbol) }
            : { toAddress: other(ADDRESSES, lastDeposit.toAddress) }),
        };
      }
      lastDeposit = payload;
    }
    events.push({ index, type, key: idempotencyKey(payload), trackingId: String(payload.trackingId), payload });
  }
  return events;
}

/** One event of `type` (the callback type table's fields) with values varying by `index`. */
function payloadOf(type: number, index: number): Record<string, ExactJson> {
  const common: Record<string, ExactJson> = {
    trackingId: `load-${randomUUID()}`,
    tenantUserId: `u-${10_000 + (index % 997)}`,
    business: new LosslessNumber('0'),
  };
  // Amounts a float would round: the merchant must keep every digit (the probe shows it).
  const amount = new LosslessNumber(
    `${1 + (index % 99_999)}${String(index).padStart(12, '0')}.${String((index * 7919) % 1_000_000).padStart(6, '0')}123`,
  );
  const toAddress = ADDRESSES[index % ADDRESSES.length]!;
  return callbackPayload(callbackTypeEntry(type) ?? otherCallbackType(type), common, {
    txid: randomBytes(32).toString('hex'),
    callBackId: `load-${randomUUID()}`,
    chain: 'TRON',
    symbol: SYMBOLS[index % SYMBOLS.length]!,
    toAddress,
    fromAddress: ADDRESSES[(index + 2) % ADDRESSES.length]!,
    // An address event names the storm's address; an invalid one a mangled copy of it.
    address: (entry) => (entry.type === CALLBACK_TYPES.invalidAddress ? `${toAddress.slice(0, -1)}X` : toAddress),
    amount,
    txIndex: new LosslessNumber(String(index % 3)),
  });
}
