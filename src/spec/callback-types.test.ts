/**
 * The callback type table and the spec say the same: the same types and schemas, fields the schema
 * has, key fields the spec marks with the key's rule, and example payloads that validate.
 */
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import {
  CALLBACK_TYPE_TABLE,
  CALLBACK_TYPES,
  callbackField,
  callbackPayload,
  callbackTypeEntry,
  callbackTypeNumbers,
  FIELD_ALIASES,
  interfaceName,
  otherCallbackType,
} from './callback-types.js';
import { specModel } from './model.js';
import { packagedSpec } from './packaged.js';

const model = specModel(packagedSpec());

describe('the callback type table', () => {
  it('lists exactly the types the spec dispatches, with the same schemas', () => {
    expect(CALLBACK_TYPE_TABLE.map((entry) => [entry.type, entry.schema])).toEqual(
      model.callbackTypes().map(({ type, schema }) => [type, schema]),
    );
    expect(callbackTypeNumbers()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(CALLBACK_TYPES).toMatchObject({ deposit: 1, withdrawal: 3, notEnoughHotMoney: 7 });
  });

  it.each(CALLBACK_TYPE_TABLE.map((entry) => [entry.type, entry] as const))(
    "type %i: fields and key fields are the schema's, the key fields carry the key's rule",
    (_type, entry) => {
      const schema = model.flatten(entry.schema);
      const props = schema.properties;
      for (const field of entry.fields) expect(Object.keys(props), field).toContain(field);
      expect(schema.ownRules).toContain(entry.key.rule);
      for (const field of [...entry.key.fields, ...(entry.key.optional ?? [])])
        expect(props[field]?.rules, `${entry.schema}.${field}`).toContain(entry.key.rule);
      for (const [field, aliases] of Object.entries(FIELD_ALIASES)) {
        if (entry.fields.includes(field))
          for (const alias of aliases)
            expect(Object.keys(props), `${entry.schema} spells ${field} also ${alias}`).toContain(alias);
      }
    },
  );

  it.each(CALLBACK_TYPE_TABLE.map((entry) => [entry.type, entry] as const))(
    "type %i: the example payload validates against CallbackPayload and the type's schema",
    (_type, entry) => {
      const payload = callbackPayload(entry, {
        requestUUID: 'r-1',
        trackingId: `${entry.trackingPrefix}-1`,
        tenantUserId: 'u-1',
        business: new LosslessNumber('0'),
      });
      expect(Object.keys(payload)).toEqual([
        'type',
        'requestUUID',
        'trackingId',
        'tenantUserId',
        'business',
        ...entry.fields,
      ]);
      expect(validateSchema('CallbackPayload', payload)).toEqual([]);
    },
  );

  it('builds a payload from given values in field order, functions called once each, the example filling the rest', () => {
    const calls: string[] = [];
    const value = (name: string) => () => {
      calls.push(name);
      return name;
    };
    const payload = callbackPayload(
      callbackTypeEntry(1)!,
      { trackingId: 't' },
      { fromAddress: value('from'), txid: value('tx'), toAddress: value('to') },
    );
    expect(calls).toEqual(['tx', 'to', 'from']);
    expect(payload).toMatchObject({
      trackingId: 't',
      txid: 'tx',
      chain: 'TRON',
      toAddress: 'to',
      fromAddress: 'from',
      amount: '250.000001',
    });
    expect(() => callbackPayload({ ...callbackTypeEntry(4)!, fields: ['chain', 'nothing'] }, {})).toThrow(
      'callback type 4 has no example value for its field nothing',
    );
  });

  it('gives an unknown type an order-like event keyed as CB-ID-OTHER', () => {
    expect(otherCallbackType(9)).toMatchObject({
      type: 9,
      name: 'type 9',
      fields: ['callBackId', 'chain', 'symbol', 'amount'],
      key: { rule: 'CB-ID-OTHER', prefix: 'event:9' },
    });
    expect(callbackTypeEntry(9)).toBeUndefined();
  });

  it('reads a field by either spelling (U-CB-FIELDS)', () => {
    expect(callbackField({ txId: 'ab' }, 'txid')).toBe('ab');
    expect(callbackField({ txid: 'a', txId: 'b' }, 'txid')).toBe('a');
    expect(callbackField({ chainName: 'TRON' }, 'chain')).toBe('TRON');
    expect(callbackField({}, 'chain')).toBeUndefined();
    expect(interfaceName('chainName')).toBe('chain');
    expect(interfaceName('amount')).toBe('amount');
  });
});
