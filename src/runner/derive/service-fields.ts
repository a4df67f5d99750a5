/**
 * The service side's derived cases that vary one part of a valid request (spec/dimensions.yaml):
 * near misses of the form's media type (ENERGY-CT, ORDER-CT), and value classes of the fields of an
 * order (ORDER-FIELDS and the rules of its fields) and of an energy query (ENERGY-REQ). The valid
 * requests they vary are here too; every service row starts from them.
 */
import type { Dimension } from '../../spec/dimensions.js';
import type { Case, Step } from '../model.js';
import { expect } from './common.js';

export const ENERGY_QUERY = { symbol: 'ENERGY', chainName: 'TRON' };

/** A valid withdrawal order (suites/service/orders.yaml) with the given callBackId. */
export function withdrawal(callBackId: string): Record<string, unknown> {
  return {
    userId: '{{userId}}',
    tenantUserId: '20931',
    tenantType: 1,
    callBackId,
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: '#decimal:123456789012.123456',
  };
}

/**
 * Near misses of the form's media type, each with the whole valid form: a body a service reads
 * when it checks the type by prefix (`startsWith`), by substring (`includes`), or takes every form
 * its framework parses (Flask's `request.form`, Spring's `@RequestParam` read multipart too).
 */
const MEDIA_TYPES: Record<string, { contentType?: string; multipart?: true; what: string }> = {
  'multipart-form': { multipart: true, what: 'the form sent as multipart/form-data' },
  'prefix-extended': {
    contentType: 'application/x-www-form-urlencoded-v2',
    what: 'Content-Type application/x-www-form-urlencoded-v2 (the form type as a prefix)',
  },
  'other-top-level-type': {
    contentType: 'text/x-www-form-urlencoded',
    what: 'Content-Type text/x-www-form-urlencoded (the form subtype under text/)',
  },
  'in-parameter': {
    contentType: 'text/plain; format=application/x-www-form-urlencoded',
    what: 'Content-Type text/plain naming the form type in a parameter',
  },
};

/**
 * Near misses of the form's media type on the energy query (ENERGY-CT) and on order submission
 * (ORDER-CT): refused, as under any other type. The order is a valid one, so a service that takes
 * the near miss places it: it needs --allow-orders.
 */
export function mediaTypeNearMisses(dimension: Dimension): Case[] {
  return dimension.variants.flatMap((variant): Case[] => {
    const near = MEDIA_TYPES[variant];
    if (!near) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no media type for the variant ${variant}`);
    const sent = {
      ...(near.contentType ? { contentType: near.contentType } : {}),
      ...(near.multipart ? { form: 'multipart' as const } : {}),
    };
    return [
      {
        id: `energy-media-type-${variant}`,
        title: `An energy query with ${near.what} is refused`,
        rules: ['ENERGY-CT'],
        needs: [],
        steps: [
          {
            request: { endpoint: 'energy', ...sent, plain: ENERGY_QUERY },
            expect: [expect(dimension, variant, 'refused', {}, ['ENERGY-CT'])],
          },
        ],
      },
      {
        id: `order-media-type-${variant}`,
        title: `An order with ${near.what} is refused`,
        rules: ['ORDER-CT'],
        needs: ['userId', 'orders'],
        steps: [
          {
            request: { endpoint: 'order', ...sent, plain: withdrawal('{{id}}') },
            expect: [expect(dimension, variant, 'refused', {}, ['ORDER-CT'])],
          },
        ],
      },
    ];
  });
}

/** A valid energy lease (ORDER-KIND: exactly ENERGY) of two transactions for a day, with the given callBackId. */
export function lease(callBackId: string): Record<string, unknown> {
  return { ...withdrawal(callBackId), symbol: 'ENERGY', amount: 2, expiryHours: 24 };
}

/**
 * One value of one order field for each value class: a type the field is not (a boolean, null, an
 * object or a list), past its one allowed value (tenantType), or past the bounds a service may set
 * (zero, negative: U-LIMITS in the table's readings). Each replaces the field in a valid order, and
 * names the rules its acceptance breaks (true for tenantType is neither an integer nor 1).
 */
type FieldValue = { order: 'withdrawal' | 'lease'; field: string; value: unknown; what: string; rules: string[] };
const value = (
  order: FieldValue['order'],
  field: string,
  sent: unknown,
  what: string,
  ...rules: string[]
): FieldValue => ({
  order,
  field,
  value: sent,
  what,
  rules,
});

const FIELD_VALUES: Record<string, FieldValue> = {
  'tenant-type-negative': value('withdrawal', 'tenantType', -1, 'tenantType -1', 'ORDER-TENANT-TYPE'),
  // 2^32 + 1: a 32-bit integer keeps its low bits, 1.
  'tenant-type-wraps-to-one': value(
    'withdrawal',
    'tenantType',
    4_294_967_297,
    'tenantType 4294967297 (2^32 + 1, which a 32-bit integer wraps to 1)',
    'ORDER-TENANT-TYPE',
  ),
  'tenant-type-boolean': value(
    'withdrawal',
    'tenantType',
    true,
    'tenantType true',
    'ORDER-FIELDS',
    'ORDER-TENANT-TYPE',
  ),
  'tenant-type-null': value('withdrawal', 'tenantType', null, 'tenantType null', 'ORDER-FIELDS', 'ORDER-TENANT-TYPE'),
  'user-id-boolean': value('withdrawal', 'userId', true, 'userId true', 'ORDER-FIELDS'),
  'user-id-null': value('withdrawal', 'userId', null, 'userId null', 'ORDER-FIELDS'),
  'string-field-object': value('withdrawal', 'tenantUserId', { id: '20931' }, 'tenantUserId an object', 'ORDER-FIELDS'),
  'string-field-array': value(
    'withdrawal',
    'toAddr',
    ['TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE'],
    'toAddr a list of one address',
    'ORDER-FIELDS',
  ),
  'string-field-null': value('withdrawal', 'chainName', null, 'chainName null', 'ORDER-FIELDS'),
  'amount-boolean': value('withdrawal', 'amount', true, 'amount true', 'ORDER-FIELDS'),
  'amount-null': value('withdrawal', 'amount', null, 'amount null', 'ORDER-FIELDS'),
  'amount-zero': value('withdrawal', 'amount', 0, 'a withdrawal amount of 0', 'ORDER-FIELDS'),
  'amount-negative': value('withdrawal', 'amount', -1.5, 'a withdrawal amount of -1.5', 'ORDER-FIELDS'),
  'lease-amount-zero': value('lease', 'amount', 0, 'a lease of 0 transactions', 'ORDER-ENERGY-AMOUNT'),
  'lease-amount-negative': value('lease', 'amount', -2, 'a lease of -2 transactions', 'ORDER-ENERGY-AMOUNT'),
  'expiry-boolean': value('lease', 'expiryHours', true, 'a lease whose expiryHours is true', 'ORDER-EXPIRY'),
  'expiry-fraction': value('lease', 'expiryHours', 1.5, 'a lease whose expiryHours is 1.5', 'ORDER-EXPIRY'),
  'expiry-zero': value('lease', 'expiryHours', 0, 'a lease whose expiryHours is 0', 'ORDER-EXPIRY'),
  'expiry-negative': value('lease', 'expiryHours', -24, 'a lease whose expiryHours is -24', 'ORDER-EXPIRY'),
};

/** One value of one field of the energy query for each value class it can get wrong: null, another type. */
const ENERGY_FIELD_VALUES: Record<string, { field: 'symbol' | 'chainName'; value: unknown; what: string }> = {
  'symbol-null': { field: 'symbol', value: null, what: 'symbol null' },
  'symbol-boolean': { field: 'symbol', value: true, what: 'symbol true' },
  'symbol-object': { field: 'symbol', value: { name: 'ENERGY' }, what: 'symbol an object' },
  'chain-name-null': { field: 'chainName', value: null, what: 'chainName null' },
  'chain-name-array': { field: 'chainName', value: ['TRON'], what: 'chainName a list of TRON' },
};

/**
 * Each value class of a field of the energy query in an otherwise valid query: refused
 * (ENERGY-REQ: both fields are required strings; only another symbol may be taken).
 */
function energyFieldValues(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const entry = ENERGY_FIELD_VALUES[variant];
    if (!entry) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no field value for the variant ${variant}`);
    return {
      id: `energy-${variant}`,
      title: `An energy query with ${entry.what} is refused`,
      rules: [dimension.rule],
      needs: [],
      steps: [
        {
          request: { endpoint: 'energy', plain: { ...ENERGY_QUERY, [entry.field]: entry.value } },
          expect: [expect(dimension, variant, 'refused', {}, [dimension.rule])],
        },
      ],
    };
  });
}

/** Value classes of a request's fields: the energy query's (ENERGY-REQ) or the order's (ORDER-FIELDS), by the row's rule. */
export function valueClasses(dimension: Dimension): Case[] {
  return dimension.rule === 'ENERGY-REQ' ? energyFieldValues(dimension) : fieldValues(dimension);
}

/** The energy a lease case sets first: enough for its order, so a service that takes the value cannot refuse for want of energy. */
const LEASE_ENERGY = { control: { energy: { balance: 1_000_000, costPerTx: 65_000 } } };

/**
 * Each value class of each order field in an otherwise valid order: refused (ORDER-FIELDS and the
 * rule of the field's one value). A variant the table lists under `readings` (a bound the interface
 * leaves open, a value a JSON binder truncates) warns when accepted.
 */
function fieldValues(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const entry = FIELD_VALUES[variant];
    if (!entry) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no field value for the variant ${variant}`);
    const base = entry.order === 'lease' ? lease('{{id}}') : withdrawal('{{id}}');
    const reading = dimension.readings[variant];
    const order: Step = {
      request: { endpoint: 'order', plain: { ...base, [entry.field]: entry.value } },
      expect: [expect(dimension, variant, 'refused', {}, entry.rules)],
    };
    return {
      id: `order-${variant}`,
      title: `An order with ${entry.what} is refused${reading ? ` (a service may take it, ${reading})` : ''}`,
      rules: [...entry.rules, ...(reading ? [reading] : [])],
      needs: entry.order === 'lease' ? ['userId', 'orders', 'control'] : ['userId', 'orders'],
      steps: entry.order === 'lease' ? [LEASE_ENERGY, order] : [order],
    };
  });
}

/** The variants the media-type rows know. */
export const MEDIA_TYPE_VARIANTS: readonly string[] = Object.keys(MEDIA_TYPES);

/** The variants the value-class rows know. */
export const VALUE_CLASS_VARIANTS: readonly string[] = [
  ...Object.keys(FIELD_VALUES),
  ...Object.keys(ENERGY_FIELD_VALUES),
];
