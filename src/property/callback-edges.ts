/**
 * The edge cases of the merchant side, as plain sequences of the callbacks-once property: every
 * callback type at plaintext lengths one byte below, at and above the first three multiples of the
 * RSA block (tenantUserId, a free field every type carries, padded to the exact byte length),
 * every string field holding a 2-, 3- and 4-byte character, and amounts (and the other integers a
 * merchant reads) past 2^53 as JSON numbers and decimal strings.
 */
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { CALLBACK_TYPE_TABLE, callbackPayload, type CallbackTypeTable } from '../spec/callback-types.js';
import { BIG_INTEGERS, BLOCK_EDGES, blockEdgeLength, NON_ASCII, padField, type BlockEdge } from './edge-values.js';

/** The requestUUID a delivery adds: always 36 ASCII characters, so a placeholder measures the plaintext exactly. */
const UUID_PLACEHOLDER = '00000000-0000-0000-0000-000000000000';

/** The free field padded to reach a block edge: carried by every type, named in no idempotency key. */
const CALLBACK_PAD_FIELD = 'tenantUserId';

/** An event of a sequence, with where its plaintext length must land (undefined: as generated). */
interface EdgeEvent {
  payload: Record<string, ExactJson>;
  twin: boolean;
  length?: BlockEdge;
}

/** The plaintext of one delivery of `payload` as deliverEvent writes it (the requestUUID replaced, same width). */
export function deliveredText(payload: Record<string, ExactJson>): string {
  return stringifyExact({ ...payload, requestUUID: UUID_PLACEHOLDER });
}

/** The payload (as sent: identity suffixes applied) padded so that each delivery's plaintext is exactly at its block edge. */
export function padToEdge(
  payload: Record<string, ExactJson>,
  edge: BlockEdge,
  blockSize: number,
): Record<string, ExactJson> {
  const bytes = blockEdgeLength(Buffer.byteLength(deliveredText(payload), 'utf8'), blockSize, edge);
  return padField(payload, CALLBACK_PAD_FIELD, bytes, deliveredText) ?? payload;
}

/** The text fields of a payload (not the requestUUID, which each delivery replaces; not an amount written as a decimal string). */
function stringFields(payload: Record<string, ExactJson>): string[] {
  return Object.keys(payload).filter(
    (name) => typeof payload[name] === 'string' && name !== 'requestUUID' && name !== 'amount',
  );
}

/** A payload of `type` with short values (an edge case that fails is already small). */
function basePayload(table: CallbackTypeTable, index: number): Record<string, ExactJson> {
  const entry = table[index]!;
  return callbackPayload(entry, {
    requestUUID: UUID_PLACEHOLDER,
    trackingId: `${entry.trackingPrefix}-e`,
    tenantUserId: 'u',
  });
}

/** The payload with every string field set to `text` (identity fields keep a unique suffix at send). */
function allText(payload: Record<string, ExactJson>, text: string): Record<string, ExactJson> {
  const out = { ...payload };
  for (const field of stringFields(payload)) out[field] = text;
  return out;
}

/**
 * The sequences every merchant run starts with, round by round over the types (so a short run still
 * reaches each type): block edges at the multiple itself, every string field a 4-byte character,
 * one byte below, one byte above, 2- and 3-byte characters, then amounts and integers past 2^53.
 */
export function callbackEdgeExamples(
  table: CallbackTypeTable = CALLBACK_TYPE_TABLE,
): Array<{ events: EdgeEvent[]; redeliveries: never[] }> {
  const types = table.map((_, i) => i);
  const sequence = (events: EdgeEvent[]) => ({ events, redeliveries: [] as never[] });
  const atBlocks = (delta: BlockEdge['delta']) =>
    types.map((i) =>
      sequence(
        BLOCK_EDGES.filter((e) => e.delta === delta).map((length) => ({
          payload: basePayload(table, i),
          twin: false,
          length,
        })),
      ),
    );
  const withText = (texts: readonly string[]) =>
    types.map((i) => sequence(texts.map((text) => ({ payload: allText(basePayload(table, i), text), twin: false }))));
  const numbers = types
    .filter((i) => 'amount' in basePayload(table, i))
    .map((i) => {
      const base = basePayload(table, i);
      return sequence(
        BIG_INTEGERS.flatMap((value, j) => [
          {
            payload: {
              ...base,
              amount: new LosslessNumber(value),
              business: new LosslessNumber(value),
              ...('txIndex' in base ? { txIndex: new LosslessNumber(value) } : {}),
            },
            twin: false,
          },
          { payload: { ...base, amount: j % 2 === 0 ? value : `${value}.5` }, twin: false },
        ]),
      );
    });
  return [
    ...atBlocks(0),
    ...withText([NON_ASCII[2]]),
    ...atBlocks(-1),
    ...atBlocks(1),
    ...withText([NON_ASCII[0], NON_ASCII[1]]),
    ...numbers,
  ];
}
