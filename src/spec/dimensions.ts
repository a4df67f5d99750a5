import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { SpecError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';

/** The table of the rules' dimensions shipped with the package. */
const DIMENSIONS_PATH = resolve(PACKAGE_ROOT, 'spec', 'dimensions.yaml');

/** How the cases of a dimension are made (spec/dimensions.yaml explains each). */
const DIMENSION_CLASSES = [
  'exact-comparison',
  'composite-key',
  'echoed-identifier',
  'value-class',
  'computed-value',
  'block-edge',
  'durability',
] as const;
export type DimensionClass = (typeof DIMENSION_CLASSES)[number];

/**
 * One row of spec/dimensions.yaml: a MUST rule, the input it constrains and the variations an
 * implementation could get slightly wrong. The runner derives cases from it (src/runner/derive/).
 */
export interface Dimension {
  id: string;
  rule: string;
  /** Further rules a derived case's findings may name. */
  also: string[];
  side: 'service' | 'merchant';
  class: DimensionClass;
  input: string;
  variants: string[];
  /** Variants a legal reading of an open point may answer otherwise: variant → the U-* rule. */
  readings: Record<string, string>;
}

const ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const RULE = /^[A-Z0-9]+(-[A-Z0-9]+)+$/;

/** A string field of an entry, or a SpecError naming the entry and the field. */
function text(entry: Record<string, unknown>, field: string, where: string, pattern?: RegExp): string {
  const value = entry[field];
  if (typeof value !== 'string' || value === '' || (pattern && !pattern.test(value)))
    throw new SpecError(
      'bad-dimensions',
      `${where}: ${field} must be ${pattern ? `a name matching ${pattern}` : 'a non-empty string'}`,
    );
  return value;
}

/** A list of names, or a SpecError; absent is an empty list. */
function names(entry: Record<string, unknown>, field: string, where: string, pattern: RegExp): string[] {
  const value = entry[field] ?? [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !pattern.test(item)))
    throw new SpecError('bad-dimensions', `${where}: ${field} must be a list of names matching ${pattern}`);
  return value as string[];
}

/** Parses one entry; `where` names it in errors. */
function parseEntry(entry: Record<string, unknown>, where: string): Dimension {
  const side = entry.side;
  if (side !== 'service' && side !== 'merchant')
    throw new SpecError('bad-dimensions', `${where}: side must be service or merchant`);
  const kind = entry.class;
  if (!DIMENSION_CLASSES.includes(kind as DimensionClass))
    throw new SpecError('bad-dimensions', `${where}: class must be one of ${DIMENSION_CLASSES.join(', ')}`);
  const variants = names(entry, 'variants', where, ID);
  if (variants.length === 0)
    throw new SpecError('bad-dimensions', `${where}: variants must name at least one variation`);
  const readings = (entry.readings ?? {}) as Record<string, unknown>;
  if (typeof readings !== 'object' || readings === null || Array.isArray(readings))
    throw new SpecError('bad-dimensions', `${where}: readings must map a variant to a U-* rule`);
  for (const [variant, rule] of Object.entries(readings)) {
    if (!variants.includes(variant))
      throw new SpecError('bad-dimensions', `${where}: readings names ${variant}, which is not one of its variants`);
    if (typeof rule !== 'string' || !/^U-[A-Z0-9-]+$/.test(rule))
      throw new SpecError('bad-dimensions', `${where}: the reading of ${variant} must be an open point (U-*)`);
  }
  return {
    id: text(entry, 'id', where, ID),
    rule: text(entry, 'rule', where, RULE),
    also: names(entry, 'also', where, RULE),
    side,
    class: kind as DimensionClass,
    input: text(entry, 'input', where),
    variants,
    readings: readings as Record<string, string>,
  };
}

/**
 * Parses a dimensions table; a malformed entry or a repeated id is a SpecError naming it. Rule ids
 * are checked against the catalogue by the caller that has it (test/dimensions.test.ts).
 */
export function parseDimensions(source: string, name = 'spec/dimensions.yaml'): Dimension[] {
  let parsed: unknown;
  try {
    parsed = parseYaml(source);
  } catch (error) {
    throw new SpecError('bad-dimensions', `${name}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const list = (parsed as { dimensions?: unknown } | null)?.dimensions;
  if (!Array.isArray(list)) throw new SpecError('bad-dimensions', `${name}: expected a 'dimensions:' list`);
  const seen = new Set<string>();
  return list.map((entry: unknown, i) => {
    const where = `${name}: dimension #${i + 1}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw new SpecError('bad-dimensions', `${where}: not a mapping`);
    const dimension = parseEntry(entry as Record<string, unknown>, where);
    if (seen.has(dimension.id)) throw new SpecError('bad-dimensions', `${where}: id ${dimension.id} is used twice`);
    seen.add(dimension.id);
    return dimension;
  });
}

let packaged: Dimension[] | undefined;

/** The table shipped with the package, read once. */
export function packagedDimensions(): Dimension[] {
  packaged ??= parseDimensions(readFileSync(DIMENSIONS_PATH, 'utf8'));
  return packaged;
}
