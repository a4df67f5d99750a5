/**
 * Derived cases: the suites the runner makes from the table of the rules' dimensions
 * (spec/dimensions.yaml), one suite per row, named `<side>/derived/<id>`. A generator per class and
 * side turns a row into cases; the cases are ordinary suite cases (same steps, same checks, same
 * verdicts), so a report, a baseline and `--suite` treat them like the hand-written ones.
 */
import { packagedDimensions, type Dimension } from '../../spec/dimensions.js';
import type { Suite } from '../model.js';
import type { Generators } from './common.js';
import { MERCHANT_GENERATORS } from './merchant.js';
import { SERVICE_GENERATORS } from './service.js';

const BY_SIDE: Record<Dimension['side'], Generators> = { merchant: MERCHANT_GENERATORS, service: SERVICE_GENERATORS };

/** The suite of one row: its cases, with the row's input as the description. */
function suiteOf(dimension: Dimension): Suite {
  const generator = BY_SIDE[dimension.side][dimension.class];
  if (!generator)
    throw new Error(
      `spec/dimensions.yaml: ${dimension.id}: no ${dimension.side} generator for class ${dimension.class}`,
    );
  const unknown = dimension.variants.filter((variant) => !generator.variants.includes(variant));
  if (unknown.length)
    throw new Error(
      `spec/dimensions.yaml: ${dimension.id}: the ${dimension.side} ${dimension.class} generator knows no variant ${unknown.join(', ')}`,
    );
  return {
    name: `${dimension.side}/derived/${dimension.id}`,
    title: `Derived: ${dimension.rule}, ${dimension.class}`,
    side: dimension.side,
    description: `Cases derived from ${dimension.rule}: ${dimension.input} (spec/dimensions.yaml, ${dimension.id}).`,
    cases: generator.cases(dimension),
  };
}

/** Every derived suite of the table (the packaged one by default), in the table's order. */
export function derivedSuites(dimensions: readonly Dimension[] = packagedDimensions()): Suite[] {
  return dimensions.map(suiteOf);
}
