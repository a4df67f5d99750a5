/** What the generators of derived cases share: their type, and the rules a variant is judged by. */
import type { Dimension, DimensionClass } from '../../spec/dimensions.js';
import type { Case, Expectation, KeyNearMiss } from '../model.js';

/** Makes the cases of one row of the table; `variants` are the names it knows (a row naming another is a table error). */
interface Generator {
  variants: readonly string[];
  cases: (dimension: Dimension) => Case[];
}

/** The generators of one side, by class; a class a side has no generator for is a table error. */
export type Generators = Partial<Record<DimensionClass, Generator>>;

/**
 * The rules a derived expectation names: the open point when a legal reading may answer this variant
 * otherwise (so a finding warns: `readings` in the table), else `rules`.
 */
function ruled(dimension: Dimension, variant: string, rules: string[]): string[] {
  const reading = dimension.readings[variant];
  return reading ? [reading] : rules;
}

/** An expectation of `check` under the rules `variant` is judged by. */
export function expect(dimension: Dimension, variant: string, check: string, params: Record<string, unknown>, rules: string[]): Expectation {
  return { check, ...params, rules: ruled(dimension, variant, rules) };
}

/** The near misses of a key the exact-comparison generators know, on either side, and the key outside its window. */
export const KEY_VARIANTS: readonly (KeyNearMiss | 'out-of-window')[] = [
  'upper-case',
  'lower-case',
  'one-letter-case',
  'appended',
  'last-removed',
  'first-removed',
  'accented-letter',
  'nbsp-before',
  'nbsp-after',
  'twice-unknown-first',
  'out-of-window',
];
