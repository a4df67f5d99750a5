import { describe, expect, it } from 'vitest';
import { parseExactJson, stringifyExact, toValidationView } from './exact-json.js';

describe('exact JSON', () => {
  it('keeps a BigDecimal amount digit for digit through parse and stringify', () => {
    const text = '{"amount":12345678901234567890.123,"n":1,"s":"x"}';
    expect(stringifyExact(parseExactJson(text))).toBe(text);
  });

  it('shows a validator a float-rounded fraction as its literal text, so it is not taken for an integer', () => {
    const view = toValidationView(
      parseExactJson('{"a":12345678901234567890.5,"b":5,"c":0.1,"d":123456789012345678901234}'),
    ) as Record<string, unknown>;
    expect(view.a).toBe('12345678901234567890.5');
    expect(view.b).toBe(5);
    expect(view.c).toBe(0.1);
    expect(Number.isInteger(view.d)).toBe(true);
  });
});
