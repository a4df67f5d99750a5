import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { packagedDimensions, parseDimensions } from './dimensions.js';

const row = (fields: Record<string, unknown>) =>
  `dimensions:\n  - ${Object.entries({
    id: 'keys',
    rule: 'CB-KEY-401',
    side: 'merchant',
    class: 'exact-comparison',
    input: 'the key',
    variants: ['upper-case'],
    ...fields,
  })
    .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
    .join('\n    ')}\n`;

describe('the dimensions table', () => {
  it('names only catalogued rules: each row a MUST the side it runs against is bound by, its readings open points', () => {
    const rules = new Map(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => [rule.id, rule]));
    for (const dimension of packagedDimensions()) {
      const rule = rules.get(dimension.rule);
      expect(rule?.severity, dimension.id).toBe('MUST');
      expect([undefined, 'both', dimension.side], dimension.id).toContain(rule?.binds);
      for (const id of [...dimension.also, ...Object.values(dimension.readings)])
        expect(rules.has(id), `${dimension.id}: ${id}`).toBe(true);
      for (const reading of Object.values(dimension.readings))
        expect(rules.get(reading)?.severity, dimension.id).toBe('UNSPECIFIED');
    }
  });

  it('reads a well-formed row', () => {
    expect(parseDimensions(row({ readings: { 'upper-case': 'U-LIMITS' } }))).toEqual([
      {
        id: 'keys',
        rule: 'CB-KEY-401',
        also: [],
        side: 'merchant',
        class: 'exact-comparison',
        input: 'the key',
        variants: ['upper-case'],
        readings: { 'upper-case': 'U-LIMITS' },
      },
    ]);
  });

  it.each([
    [{ side: 'both' }, /dimension #1: side must be service or merchant/],
    [{ class: 'fuzz' }, /class must be one of exact-comparison, /],
    [{ variants: [] }, /variants must name at least one variation/],
    [{ variants: ['Upper Case'] }, /variants must be a list of names/],
    [{ rule: 'cb-key' }, /rule must be a name matching/],
    [{ readings: { 'lower-case': 'U-LIMITS' } }, /readings names lower-case, which is not one of its variants/],
    [{ readings: { 'upper-case': 'CB-ONCE' } }, /the reading of upper-case must be an open point \(U-\*\)/],
  ])('refuses a malformed row (%o) with a line naming it', (fields, message) => {
    expect(() => parseDimensions(row(fields))).toThrow(message);
  });

  it('refuses a repeated id, a missing list and YAML that does not parse', () => {
    expect(() => parseDimensions(row({}) + row({}).replace('dimensions:\n', ''))).toThrow(
      /dimension #2: id keys is used twice/,
    );
    expect(() => parseDimensions('rules: []')).toThrow(/expected a 'dimensions:' list/);
    expect(() => parseDimensions('dimensions: [')).toThrow(/not valid YAML/);
  });
});
