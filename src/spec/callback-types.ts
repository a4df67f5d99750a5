import { LosslessNumber, type ExactJson } from '../core/exact-json.js';

/**
 * How the idempotency key of a callback type is made (CB-ONCE), as data; `merchant/idempotency.ts`
 * computes it.
 *
 * - `digest`: `<prefix>:<sha256 hex of the JSON array of the fields>` (CB-ID-DEPOSIT);
 * - `value`: `<prefix>:<the one field's text>` (CB-ID-WITHDRAW);
 * - `tuple`: `<prefix>:<the JSON array of the fields, then the optional ones or null>` (CB-ID-OTHER).
 */
interface IdempotencyRecipe {
  /** The CB-ID-* rule the key follows. */
  rule: string;
  form: 'digest' | 'value' | 'tuple';
  prefix: string;
  /** Fields the key needs (interface spelling; aliases are read too). */
  fields: readonly string[];
  /** Fields the key takes when present (`null` otherwise). */
  optional?: readonly string[];
  /** The callback in an error message: `a deposit (CB-ID-DEPOSIT)`. */
  subject: string;
}

/** One callback type: what every layer needs to know about it, in one place. */
export interface CallbackTypeEntry {
  /** The payload's `type`. */
  type: number;
  /** camelCase identifier (`withdrawalRequest`). */
  id: string;
  /** Its name in words (`withdrawal request`): Pact titles, docs labels, `callback send --help`. */
  name: string;
  /** The component schema the spec's CallbackPayload dispatches this type to. */
  schema: string;
  /** The type's own payload fields after the common ones, in payload order, interface spelling. */
  fields: readonly string[];
  key: IdempotencyRecipe;
  /** trackingId prefix of the emulator's events (`dep-…`), so a log line says what an event is. */
  trackingPrefix: string;
  /** Default values of `fields`: the example payload every builder starts from. */
  example: Readonly<Record<string, ExactJson>>;
}

/** A callback type table: the built-in one, or one extended by a caller (a test adding type 8). */
export type CallbackTypeTable = readonly CallbackTypeEntry[];

/** The key of an event without a key of its own (CB-ID-OTHER): type, trackingId and callBackId when present. */
export function eventKey(type: number): IdempotencyRecipe {
  return {
    rule: 'CB-ID-OTHER',
    form: 'tuple',
    prefix: `event:${type}`,
    fields: ['trackingId'],
    optional: ['callBackId'],
    subject: `a type ${type} callback (CB-ID-OTHER)`,
  };
}

const TRON = 'TRON';
const USDT = 'USDT';
const TO_ADDRESS = 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE';
const FROM_ADDRESS = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const TXID = '9f2c4e0b7d1a3c5e8f6b2d4a0c9e7f1b3d5a8c6e4f2b0d9a7c5e3f1b8d6a4c2e';
const CALLBACK_ID = 'wd-2026-11-23-000042';
const ORDER_AMOUNT = new LosslessNumber('100.5');

/** The built-in entries, kept literal so {@link CALLBACK_TYPES} knows each id's type. */
const BUILT_IN = [
  {
    type: 1,
    id: 'deposit',
    name: 'deposit',
    schema: 'DepositCallback',
    fields: ['txid', 'chain', 'symbol', 'toAddress', 'fromAddress', 'amount', 'txIndex'],
    key: {
      rule: 'CB-ID-DEPOSIT',
      form: 'digest',
      prefix: 'deposit',
      fields: ['txid', 'chain', 'symbol', 'toAddress'],
      subject: 'a deposit (CB-ID-DEPOSIT)',
    },
    trackingPrefix: 'dep',
    example: {
      txid: TXID,
      chain: TRON,
      symbol: USDT,
      toAddress: TO_ADDRESS,
      fromAddress: FROM_ADDRESS,
      amount: '250.000001',
      txIndex: new LosslessNumber('0'),
    },
  },
  {
    type: 2,
    id: 'withdrawalRequest',
    name: 'withdrawal request',
    schema: 'WithdrawalRequestCallback',
    fields: ['callBackId', 'chain', 'symbol', 'toAddress', 'amount'],
    key: eventKey(2),
    trackingPrefix: 'wrq',
    example: { callBackId: CALLBACK_ID, chain: TRON, symbol: USDT, toAddress: TO_ADDRESS, amount: ORDER_AMOUNT },
  },
  {
    type: 3,
    id: 'withdrawal',
    name: 'withdrawal',
    schema: 'WithdrawalCallback',
    fields: ['txid', 'callBackId', 'chain', 'symbol', 'toAddress', 'amount'],
    key: {
      rule: 'CB-ID-WITHDRAW',
      form: 'value',
      prefix: 'withdrawal',
      fields: ['txid'],
      subject: 'a withdrawal (CB-ID-WITHDRAW)',
    },
    trackingPrefix: 'wd',
    example: {
      txid: TXID,
      callBackId: CALLBACK_ID,
      chain: TRON,
      symbol: USDT,
      toAddress: TO_ADDRESS,
      amount: ORDER_AMOUNT,
    },
  },
  {
    type: 4,
    id: 'address',
    name: 'address',
    schema: 'AddressCallback',
    fields: ['chain', 'address'],
    key: eventKey(4),
    trackingPrefix: 'adr',
    example: { chain: TRON, address: TO_ADDRESS },
  },
  {
    type: 5,
    id: 'invalidAddress',
    name: 'invalid address',
    schema: 'InvalidAddressCallback',
    fields: ['callBackId', 'chain', 'address'],
    key: eventKey(5),
    trackingPrefix: 'iad',
    example: { callBackId: CALLBACK_ID, chain: TRON, address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLX' },
  },
  {
    type: 6,
    id: 'notEnoughMoney',
    name: 'not enough money',
    schema: 'NotEnoughMoneyCallback',
    fields: ['callBackId', 'chain', 'symbol', 'amount'],
    key: eventKey(6),
    trackingPrefix: 'nem',
    example: { callBackId: CALLBACK_ID, chain: TRON, symbol: USDT, amount: '99999.5' },
  },
  {
    type: 7,
    id: 'notEnoughHotMoney',
    name: 'not enough hot money',
    schema: 'NotEnoughHotMoneyCallback',
    fields: ['callBackId', 'chain', 'symbol', 'amount'],
    key: eventKey(7),
    trackingPrefix: 'nhm',
    example: { callBackId: CALLBACK_ID, chain: TRON, symbol: USDT, amount: '99999.5' },
  },
] as const satisfies CallbackTypeTable;

/**
 * The callback types of the interface (the merchant guide's "Callback types and fields"; the spec's CallbackPayload
 * dispatch): the only list of them in the toolkit. Adding a type is one schema and dispatch entry
 * in the spec plus one entry here.
 */
export const CALLBACK_TYPE_TABLE: CallbackTypeTable = BUILT_IN;

/** The built-in types by identifier: `CALLBACK_TYPES.deposit` is 1. */
export const CALLBACK_TYPES = Object.fromEntries(BUILT_IN.map((entry) => [entry.id, entry.type])) as {
  readonly [E in (typeof BUILT_IN)[number] as E['id']]: E['type'];
};

/** The entry of `type`, undefined when the table has none. */
export function callbackTypeEntry(
  type: number,
  table: CallbackTypeTable = CALLBACK_TYPE_TABLE,
): CallbackTypeEntry | undefined {
  return table.find((entry) => entry.type === type);
}

/**
 * What a builder uses for a type the table does not know (a suite testing an unknown type): an
 * event with an order's fields, keyed as CB-ID-OTHER.
 */
export function otherCallbackType(type: number): CallbackTypeEntry {
  return {
    type,
    id: `type${type}`,
    name: `type ${type}`,
    schema: 'CallbackPayload',
    fields: ['callBackId', 'chain', 'symbol', 'amount'],
    key: eventKey(type),
    trackingPrefix: 'cb',
    example: { callBackId: CALLBACK_ID, chain: TRON, symbol: USDT, amount: '99999.5' },
  };
}

/** The types of a table in ascending order. */
export function callbackTypeNumbers(table: CallbackTypeTable = CALLBACK_TYPE_TABLE): number[] {
  return table.map((entry) => entry.type).sort((a, b) => a - b);
}

/** A field's value for a builder: a value, or a function of the type's entry (called in field order). */
type CallbackFieldValue = ExactJson | ((entry: CallbackTypeEntry) => ExactJson);

/**
 * A callback payload of one type: `type`, then `common` (trackingId, tenantUserId, …), then the
 * type's own fields in order, each from `values` when given there (a function is called, in field
 * order, so a seeded random source draws in a fixed order), else from the table's example.
 *
 * @example callbackPayload(callbackTypeEntry(4)!, { trackingId: 'adr-1' }).address // 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE'
 */
export function callbackPayload(
  entry: CallbackTypeEntry,
  common: Readonly<Record<string, ExactJson>>,
  values: Readonly<Record<string, CallbackFieldValue | undefined>> = {},
): Record<string, ExactJson> {
  const payload: Record<string, ExactJson> = { type: new LosslessNumber(String(entry.type)), ...common };
  for (const field of entry.fields) {
    const given = values[field];
    const value = typeof given === 'function' ? given(entry) : given !== undefined ? given : entry.example[field];
    if (value === undefined)
      throw new TypeError(`callback type ${entry.type} has no example value for its field ${field}`);
    payload[field] = value;
  }
  return payload;
}

/**
 * Callback field spellings (U-CB-FIELDS): the interface's idempotency table writes `txid` and
 * `chain`; the provider's public documentation writes `txId` and `chainName`. Real callbacks may
 * carry either, so every reader of a payload reads both as one field.
 */
export const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  txid: ['txId'],
  chain: ['chainName'],
};

/**
 * A payload field by its interface name, or by an alias when the interface name is absent.
 *
 * @example callbackField({ txId: 'ab12' }, 'txid') // 'ab12'
 */
export function callbackField(payload: Readonly<Record<string, unknown>>, name: string): unknown {
  if (payload[name] !== undefined) return payload[name];
  for (const alias of FIELD_ALIASES[name] ?? []) if (payload[alias] !== undefined) return payload[alias];
  return undefined;
}

/** The interface's name of a field, for a field spelt either way (`txId` → `txid`). */
export function interfaceName(field: string): string {
  for (const [name, aliases] of Object.entries(FIELD_ALIASES)) if (aliases.includes(field)) return name;
  return field;
}

/** The provider's documentation's name of a field (`txid` → `txId`): its first alias, else itself. */
export function providerName(field: string): string {
  return FIELD_ALIASES[field]?.[0] ?? field;
}

/** The other spellings of a field (`chain` → `chainName`), none for most. */
export function aliasesOf(field: string): readonly string[] {
  return FIELD_ALIASES[field] ?? [];
}
