/** What the generators of derived cases share: their type, and the rules a variant is judged by. */
import type { Dimension, DimensionClass } from '../../spec/dimensions.js';
import type { Case, Expectation, KeyNearMiss, Need } from '../model.js';

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
export function expect(
  dimension: Dimension,
  variant: string,
  check: string,
  params: Record<string, unknown>,
  rules: string[],
): Expectation {
  return { check, ...params, rules: ruled(dimension, variant, rules) };
}

/** The keys of the right merchant outside their validity window: past its end, or before its start. */
const WINDOW_KEYS = {
  'out-of-window': { apiKey: 'expired', need: 'expiredKey', what: 'an expired key' },
  'not-yet-valid': { apiKey: 'future', need: 'futureKey', what: 'a key whose validity has not begun' },
} as const;

type KeyVariant = KeyNearMiss | keyof typeof WINDOW_KEYS;

const CASED: readonly string[] = ['upper-case', 'lower-case', 'one-letter-case'];

/**
 * What a key variant sends and needs: a key of the target's outside its window (which the user
 * gives), or a near miss of the right key (the letter-case ones need a key with letters).
 */
export function keyOfVariant(variant: string): {
  key: { apiKey: 'expired' | 'future' } | { keyVariant: KeyNearMiss };
  needs: Need[];
  what: string;
} {
  const window = WINDOW_KEYS[variant as keyof typeof WINDOW_KEYS];
  if (window) return { key: { apiKey: window.apiKey }, needs: [window.need], what: window.what };
  return {
    key: { keyVariant: variant as KeyNearMiss },
    needs: CASED.includes(variant) ? ['casedKey'] : [],
    what: `a near miss of the key (${variant})`,
  };
}

/** The near misses of a key the exact-comparison generators know, on either side, and the keys outside their window. */
export const KEY_VARIANTS: readonly KeyVariant[] = [
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
  'not-yet-valid',
];
