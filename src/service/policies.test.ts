import { describe, expect, it } from 'vitest';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import {
  acceptedBase64,
  acceptsWithdrawalSymbol,
  coerceFields,
  DEFAULT_POLICIES,
  POLICIES,
  POLICY_NAMES,
  resolvePolicies,
  shapeCallbackPayload,
  type ServicePolicies,
} from './policies.js';

const fail = (where: string, message: string): never => {
  throw new Error(`${where}: ${message}`);
};
const number = (text: string) => new LosslessNumber(text);

describe('emulator policies', () => {
  it('default to the historical behaviour when the config has none', () => {
    expect(resolvePolicies(undefined, fail)).toEqual(DEFAULT_POLICIES);
    expect(resolvePolicies({}, fail)).toEqual(DEFAULT_POLICIES);
  });

  it('name an open point (a U-* rule) for every policy, and list the default among its values', () => {
    for (const name of POLICY_NAMES) {
      expect(POLICIES[name].rule, name).toMatch(/^U-[A-Z-]+$/);
      expect(
        POLICIES[name].values.map((value) => JSON.stringify(value)),
        name,
      ).toContain(JSON.stringify(DEFAULT_POLICIES[name]));
    }
  });

  it('accept every listed value of every policy', () => {
    for (const name of POLICY_NAMES) {
      for (const value of POLICIES[name].values)
        expect(resolvePolicies({ [name]: value }, fail)[name], name).toEqual(value);
    }
  });

  it('refuse an unknown policy or value in one line naming it', () => {
    expect(() => resolvePolicies({ cardRegistery: 'off' }, fail)).toThrow(
      /^policies: unknown policy 'cardRegistery' \(known: cardRegistry, /,
    );
    expect(() => resolvePolicies({ refusals: '4xx' }, fail)).toThrow(
      'policies.refusals: must be one of envelope, http, not "4xx"',
    );
    expect(() => resolvePolicies({ amountIntegerDigits: 8 }, fail)).toThrow(
      'policies.amountIntegerDigits: must be a whole number from 12 to 1000, not 8',
    );
    expect(() => resolvePolicies({ withdrawalSymbols: ['USDT', 'ENERGY'] }, fail)).toThrow(
      /withdrawalSymbols: must be pattern, any, or a non-empty list of symbols other than ENERGY/,
    );
    expect(() => resolvePolicies(['cardRegistry'], fail)).toThrow(/^policies: expected a mapping/);
  });

  it('judge withdrawal symbols by pattern, by list or by anything non-empty', () => {
    const withSymbols = (withdrawalSymbols: ServicePolicies['withdrawalSymbols']) => ({
      ...DEFAULT_POLICIES,
      withdrawalSymbols,
    });
    expect(['USDT', 'WCTEST', 'usdt', ''].map((s) => acceptsWithdrawalSymbol(withSymbols('pattern'), s))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(['USDT', 'WCTEST', 'usdt', ' '].map((s) => acceptsWithdrawalSymbol(withSymbols('any'), s))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(['USDT', 'WCTEST'].map((s) => acceptsWithdrawalSymbol(withSymbols(['USDT', 'TRX']), s))).toEqual([
      true,
      false,
    ]);
  });

  it('shape a callback payload: provider spellings in place, the amount as a number or a string with the same digits', () => {
    const payload = {
      type: number('1'),
      txid: 'ab',
      chain: 'TRON',
      amount: '12345678901234567890.123',
      symbol: 'USDT',
    };
    const provider = shapeCallbackPayload(
      payload,
      { ...DEFAULT_POLICIES, callbackFieldNames: 'provider', callbackAmount: 'number' },
      number,
    );
    expect(Object.keys(provider)).toEqual(['type', 'txId', 'chainName', 'amount', 'symbol']);
    expect(provider.amount).toEqual(number('12345678901234567890.123'));
    const asString = shapeCallbackPayload(
      { amount: number('100.50') },
      { ...DEFAULT_POLICIES, callbackAmount: 'string' },
      number,
    );
    expect(asString).toEqual({ amount: '100.50' });
    expect(shapeCallbackPayload(payload, DEFAULT_POLICIES, number)).toEqual(payload);
  });

  it('keep a provider-spelled field given explicitly rather than write it twice', () => {
    const shaped = shapeCallbackPayload<ExactJson>(
      { txid: 'a', txId: 'b' },
      { ...DEFAULT_POLICIES, callbackFieldNames: 'provider' },
      number,
    );
    expect(shaped).toEqual({ txId: 'b' });
  });

  it('read the Base64 forms the interface pattern allows only under base64Padding: optional', () => {
    expect([...acceptedBase64(DEFAULT_POLICIES)]).toEqual([]);
    expect([...acceptedBase64({ ...DEFAULT_POLICIES, base64Padding: 'optional' })].sort()).toEqual([
      'missing-padding',
      'non-canonical-base64',
    ]);
  });

  it('bind "42" to an integer field and 42 to a string field only under typeCoercion: on, keeping the digits', () => {
    const types = { integers: ['userId', 'tenantType'], strings: ['tenantUserId', 'symbol'] };
    const plain = {
      userId: '12345678901234567890',
      tenantType: '1.0',
      tenantUserId: number('20931.50'),
      symbol: 'USDT',
      amount: '1.5',
    };
    expect(coerceFields(plain, DEFAULT_POLICIES, types)).toBe(plain);
    const on = coerceFields(plain, { ...DEFAULT_POLICIES, typeCoercion: 'on' }, types);
    expect(on).toEqual({
      userId: number('12345678901234567890'),
      tenantType: '1.0',
      tenantUserId: '20931.50',
      symbol: 'USDT',
      amount: '1.5',
    });
    expect(plain.userId).toBe('12345678901234567890');
  });
});
