import { describe, expect, it } from 'vitest';
import { decimalToBigInt, formatDecimal, integerDigits, isPositive, isWholeDecimal, parseDecimal } from './decimal.js';

describe('exact decimals', () => {
  it('keeps every digit of amounts a float would round', () => {
    expect(formatDecimal(parseDecimal('12345678901234567890.123')!)).toBe('12345678901234567890.123');
    expect(formatDecimal(parseDecimal('0.000000000000000001')!)).toBe('0.000000000000000001');
    expect(formatDecimal(parseDecimal('10.50')!)).toBe('10.50');
  });

  it('normalises signs, leading zeros and exponents into plain decimal text', () => {
    expect(formatDecimal(parseDecimal('+007.5')!)).toBe('7.5');
    expect(formatDecimal(parseDecimal('.5')!)).toBe('0.5');
    expect(formatDecimal(parseDecimal('5.')!)).toBe('5');
    expect(formatDecimal(parseDecimal('1.5e3')!)).toBe('1500');
    expect(formatDecimal(parseDecimal('1.5E-3')!)).toBe('0.0015');
    expect(formatDecimal(parseDecimal('-0.0')!)).toBe('0.0');
    expect(formatDecimal(parseDecimal('-2.5')!)).toBe('-2.5');
  });

  it('refuses what is not a decimal and exponents that would allocate absurd strings', () => {
    for (const text of [
      '',
      '.',
      'e5',
      '1e',
      'abc',
      '1.2.3',
      '0x10',
      ' 1',
      '1e1001',
      '1e-99999999999',
      'Infinity',
      'NaN',
    ])
      expect(parseDecimal(text), text).toBeUndefined();
  });

  it('tells whole numbers, their value, integer digits and sign', () => {
    expect(isWholeDecimal(parseDecimal('20.000')!)).toBe(true);
    expect(isWholeDecimal(parseDecimal('2e1')!)).toBe(true);
    expect(isWholeDecimal(parseDecimal('20.5')!)).toBe(false);
    expect(isWholeDecimal(parseDecimal('0.05')!)).toBe(false);
    expect(decimalToBigInt(parseDecimal('20.000')!)).toBe(20n);
    expect(decimalToBigInt(parseDecimal('9'.repeat(40))!)).toBe(10n ** 40n - 1n);
    expect(decimalToBigInt(parseDecimal('-3')!)).toBe(-3n);
    expect(integerDigits(parseDecimal('0.001')!)).toBe(0);
    expect(integerDigits(parseDecimal('12345678901234567890.123')!)).toBe(20);
    expect(isPositive(parseDecimal('0.0')!)).toBe(false);
    expect(isPositive(parseDecimal('-1')!)).toBe(false);
    expect(isPositive(parseDecimal('1e-9')!)).toBe(true);
  });
});
