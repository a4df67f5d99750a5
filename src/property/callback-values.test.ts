import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ExactJson } from '../core/exact-json.js';
import { callbackArbitrary } from './callbacks-once.js';
import { callbackValueRules, valueRules } from './refinements.js';
import { componentSchema, deriveArbitrary } from './schema-arbitrary.js';
import { CALLBACK_TYPE_TABLE } from '../spec/callback-types.js';

const blankFields = (payload: Record<string, ExactJson>) =>
  Object.entries(payload)
    .filter(([, value]) => typeof value === 'string' && value.trim() === '')
    .map(([name]) => name);

describe('generated valid callbacks (finding: blank identity fields are not a valid event)', () => {
  it('the schema alone allows blank strings (no minLength): the plain value rules do generate them', () => {
    const schemas = CALLBACK_TYPE_TABLE.map((entry) => componentSchema(entry.schema));
    const loose = fc.oneof(
      ...schemas.map(
        (schema) =>
          deriveArbitrary(schema, { refine: valueRules({ strings: 'ascii' }) }) as fc.Arbitrary<
            Record<string, ExactJson>
          >,
      ),
    );
    expect(fc.sample(loose, { numRuns: 400, seed: 7 }).some((payload) => blankFields(payload).length > 0)).toBe(true);
  });

  it('no string field of a generated valid callback is blank, on any seed', () => {
    for (const seed of [1, 7, 42]) {
      const blanks = fc.sample(callbackArbitrary(), { numRuns: 400, seed }).flatMap(blankFields);
      expect(blanks).toEqual([]);
    }
  });

  it('keeps const, enum and the interface value rules as they are', () => {
    const refine = callbackValueRules({ strings: 'ascii' });
    expect(refine({ property: 'kind', rules: [], node: { type: 'string', enum: ['a', 'b'] } })).toBeUndefined();
    expect(refine({ property: 'kind', rules: [], node: { type: 'string', const: 'a' } })).toBeUndefined();
    expect(refine({ property: 'n', rules: [], node: { type: 'integer' } })).toBeUndefined();
    expect(fc.sample(refine({ property: 'symbol', rules: ['ENERGY-REQ'], node: { type: 'string' } })!, 5)).toEqual(
      Array(5).fill('ENERGY'),
    );
    const text = refine({ property: 'chain', rules: [], node: { type: 'string', minLength: 3 } })!;
    expect(
      fc
        .sample(text, { numRuns: 200, seed: 3 })
        .every((value) => typeof value === 'string' && [...value].length >= 3 && value.trim() !== ''),
    ).toBe(true);
  });
});
