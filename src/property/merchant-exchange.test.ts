import { describe, expect, it } from 'vitest';
import { parseProbe } from '../runner/merchant-steps.js';
import { parseExactJson } from '../core/exact-json.js';
import { probeEntryTexts } from '../runner/api.js';
import { isOurs, type MerchantEnv } from './merchant-exchange.js';

describe('reading a long probe without parsing its whole history', () => {
  it('finds the same entries as the full parse, in both probe shapes', () => {
    const entries = [
      '{"type":1,"amount":12345678901234567890.123,"note":"a \\"quoted\\" ], { text"}',
      '{"type":3,"list":[1,[2,{"x":"]"}]]}',
      '"plain"',
      '42',
    ];
    for (const text of [
      `{"processed": [${entries.join(', ')}]}`,
      `[${entries.join(',')}]`,
      `{"count": 4, "meta": {"a": [1, 2]}, "processed":[${entries.join(',\n ')}], "after": true}`,
    ]) {
      const found = probeEntryTexts(text)!;
      expect(found).toEqual(entries);
      expect(found.map((entry) => parseProbe(`[${entry}]`, 'x')[0])).toEqual(parseProbe(text, 'x'));
    }
    expect(probeEntryTexts('{"processed": []}')).toEqual([]);
  });

  it('gives up on other shapes, so the full parse can name the problem', () => {
    expect(probeEntryTexts('{"items": [1]}')).toBeUndefined();
    expect(probeEntryTexts('{"processed": 3}')).toBeUndefined();
    expect(probeEntryTexts('{"processed": [1, 2')).toBeUndefined();
  });
});

describe("the probe's entries of this run", () => {
  const env = { tag: 'Ab-_' } as MerchantEnv;
  it("are those whose identity field carries the run suffix; the service's own callbacks meanwhile are not", () => {
    expect(isOurs(env, parseExactJson('{"type":3,"trackingId":"wd-e~Ab-_00001","txid":"9f2c"}'))).toBe(true);
    expect(isOurs(env, parseExactJson('{"type":1,"trackingId":"dep-1~Zz9900002","txid":"ab~Ab-_00001"}'))).toBe(true);
    expect(
      isOurs(env, parseExactJson('{"type":3,"trackingId":"wd-7f3a9c","txid":"9f2c","callBackId":"c~Zz9900003"}')),
    ).toBe(false);
    // Garbage a merchant stored cannot be told apart: it counts against the merchant.
    expect(isOurs(env, parseExactJson('{"note":"x"}'))).toBe(true);
    expect(isOurs(env, parseExactJson('"text"'))).toBe(true);
  });
});
