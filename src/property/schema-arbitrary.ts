import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { plainNumbers } from '../spec/document.js';
import { SCALARS, type FlatSchema } from '../spec/flatten.js';
import { specModel } from '../spec/model.js';
import { packagedSpec } from '../spec/packaged.js';

/** A JSON Schema node of the spec (OpenAPI 3.1 schema object). */
export type SchemaNode = Record<string, unknown>;

/** How strings without a rule of their own are drawn: plain printable text, or any Unicode grapheme. */
export type StringFlavour = 'ascii' | 'unicode';

/**
 * What a refinement sees: the property name the node sits under (when it is a property), the rule
 * ids on the node, and the node itself. A refinement that returns an arbitrary replaces the
 * generic one; `undefined` keeps the schema's own generation.
 */
export interface RefineSite {
  property: string | undefined;
  rules: readonly string[];
  node: SchemaNode;
}

/** Everything a derivation needs besides the schema: the value rules, the string flavour. */
interface DeriveOptions {
  refine?: (site: RefineSite) => Arbitrary<ExactJson> | undefined;
  strings?: StringFlavour;
}

/**
 * A component schema of the spec by name, as the derivation reads it: the spec model's one
 * flattening (`$ref`s followed, `allOf` merged; see src/spec/flatten.ts) written back as a plain
 * JSON Schema node (numbers as the JSON Schema compiler reads them, rules in `x-rules`, spelling
 * choices in `x-any-required`, the last condition as `if`/`then`).
 */
export function componentSchema(name: string): SchemaNode {
  const model = specModel(packagedSpec());
  if (!model.schemaNames().includes(name)) throw new TypeError(`no component schema ${name} in the spec`);
  return schemaNodeOf(model.flatten(name));
}

/** A flat view of the spec model as the plain node the arbitraries read. */
function schemaNodeOf(view: FlatSchema): SchemaNode {
  const node: SchemaNode = {};
  // The title is the documentation's; no arbitrary reads it.
  for (const key of SCALARS) {
    if (key !== 'title' && view[key] !== undefined) node[key] = view[key];
  }
  if ('const' in view) node.const = plainNumbers(view.const);
  if (view.enum) node.enum = plainNumbers(view.enum);
  if ('default' in view) node.default = plainNumbers(view.default);
  if (view.examples.length > 0) node.examples = plainNumbers(view.examples);
  if (Object.keys(view.properties).length > 0)
    node.properties = Object.fromEntries(
      Object.entries(view.properties).map(([key, value]) => [key, schemaNodeOf(value)]),
    );
  if (view.required.length > 0) node.required = view.required;
  if (view.anyOf) node.anyOf = view.anyOf.map(schemaNodeOf);
  if (view.oneOf) node.oneOf = view.oneOf.map(schemaNodeOf);
  if (view.items) node.items = schemaNodeOf(view.items);
  if (view.requiredChoices.length > 0) node['x-any-required'] = view.requiredChoices;
  const condition = view.conditions.at(-1);
  if (condition) {
    node.if = schemaNodeOf(condition.if);
    node.then = schemaNodeOf(condition.then);
  }
  node['x-rules'] = view.rules;
  return node;
}

/** The node as derivation reads it. Nodes from {@link componentSchema} are already flat; kept for callers. */
export function flatten(input: SchemaNode): SchemaNode {
  return input;
}

/** Exact JSON of a literal from the spec: numbers become exact numbers. */
function exactLiteral(value: unknown): ExactJson {
  if (typeof value === 'number') return new LosslessNumber(String(value));
  if (Array.isArray(value)) return value.map(exactLiteral);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exactLiteral(v)]));
  return value as ExactJson;
}

/** Text of the flavour asked for; `unicode` draws graphemes (astral, combining sequences included). */
export function textArbitrary(flavour: StringFlavour, minLength = 0, maxLength = 40): Arbitrary<string> {
  return flavour === 'unicode'
    ? fc.string({ unit: 'grapheme', minLength, maxLength })
    : fc.string({ unit: 'grapheme-ascii', minLength, maxLength });
}

/**
 * Derives a fast-check arbitrary of exact JSON from a schema of the spec: `$ref`, `allOf`,
 * `anyOf`, `if`/`then` on a constant, `const`, `enum`, `type`, `required`, `minLength`, `pattern`,
 * `minimum` and `examples` (drawn often, as a person would write them). Value rules from `x-rules`
 * come in through `options.refine`, so "valid" means what the interface means.
 *
 * @example fc.sample(deriveArbitrary(componentSchema('EnergyMaxCountRequest')), 1)
 */
export function deriveArbitrary(
  input: SchemaNode,
  options: DeriveOptions = {},
  property?: string,
): Arbitrary<ExactJson> {
  const node = flatten(input);
  if ('const' in node) return fc.constant(exactLiteral(node.const));
  const refined = options.refine?.({ property, rules: (node['x-rules'] as string[] | undefined) ?? [], node });
  if (refined) return refined;
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum.map(exactLiteral));
  if (node.if && node.then) return conditional(node, options, property);
  if (Array.isArray(node.anyOf) && !node.type)
    return fc.oneof(
      ...(node.anyOf as SchemaNode[]).map((branch) =>
        deriveArbitrary({ ...branch, 'x-rules': node['x-rules'] }, options, property),
      ),
    );
  const examples = Array.isArray(node.examples) ? node.examples.map(exactLiteral) : [];
  const generic = byType(node, options);
  return examples.length > 0 && node.type !== 'object'
    ? fc.oneof({ arbitrary: fc.constantFrom(...examples), weight: 1 }, { arbitrary: generic, weight: 3 })
    : generic;
}

/** `if: {properties: {P: {const: C}}, required: [P]}, then: ...`: either P = C and `then` holds, or P ≠ C. */
function conditional(node: SchemaNode, options: DeriveOptions, property: string | undefined): Arbitrary<ExactJson> {
  const { if: condition, then: consequence, ...base } = node as SchemaNode & { if: SchemaNode; then: SchemaNode };
  const conditionProperties = (condition.properties as Record<string, SchemaNode> | undefined) ?? {};
  const entries = Object.entries(conditionProperties).filter(([, schema]) => 'const' in schema);
  if (entries.length !== 1) return deriveArbitrary(base, options, property);
  const [name, constant] = entries[0]!;
  const then = flatten(consequence);
  const baseProperties = (base.properties as Record<string, SchemaNode>) ?? {};
  const holds: SchemaNode = {
    ...base,
    required: [...new Set([...((base.required as string[]) ?? []), ...((then.required as string[]) ?? []), name])],
    properties: {
      ...baseProperties,
      ...Object.fromEntries(
        Object.entries((then.properties as Record<string, SchemaNode>) ?? {}).map(([key, schema]) => [
          key,
          {
            ...(baseProperties[key] ?? {}),
            ...schema,
            'x-rules': [
              ...new Set([
                ...(((baseProperties[key] ?? {})['x-rules'] as string[]) ?? []),
                ...((schema['x-rules'] as string[]) ?? []),
              ]),
            ],
          },
        ]),
      ),
      [name]: { ...(baseProperties[name] ?? {}), const: constant.const },
    },
  };
  const wanted = exactLiteral(constant.const);
  const fails = deriveArbitrary(base, options, property).filter(
    (value) => !sameLiteral((value as Record<string, ExactJson>)[name], wanted),
  );
  return fc.oneof(deriveArbitrary(holds, options, property), fails);
}

function sameLiteral(a: ExactJson | undefined, b: ExactJson): boolean {
  const text = (v: ExactJson | undefined) =>
    v instanceof LosslessNumber ? `n:${v.value}` : `${typeof v}:${String(v)}`;
  return text(a) === text(b);
}

function byType(node: SchemaNode, options: DeriveOptions): Arbitrary<ExactJson> {
  const flavour = options.strings ?? 'ascii';
  switch (node.type) {
    case 'object':
      return objectArbitrary(node, options);
    case 'integer': {
      const min = typeof node.minimum === 'number' ? node.minimum : -1_000_000;
      return fc.integer({ min, max: Math.max(min, 1_000_000) }).map((n) => new LosslessNumber(String(n)));
    }
    case 'number':
      return fc
        .double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 })
        .map((n) => new LosslessNumber(String(n)));
    case 'boolean':
      return fc.boolean();
    case 'string': {
      const minLength = typeof node.minLength === 'number' ? node.minLength : 0;
      if (typeof node.pattern === 'string') return fc.stringMatching(new RegExp(node.pattern));
      return textArbitrary(flavour, minLength);
    }
    default:
      return fc.constant(null);
  }
}

/** Required properties always; optional ones present or not; one alternative of each spelling choice. */
function objectArbitrary(node: SchemaNode, options: DeriveOptions): Arbitrary<ExactJson> {
  const properties = (node.properties as Record<string, SchemaNode> | undefined) ?? {};
  const required = new Set((node.required as string[] | undefined) ?? []);
  const choices = (node['x-any-required'] as string[][][] | undefined) ?? [];
  const spelled = new Set(choices.flat(2));
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [name, deriveArbitrary(schema, options, name)]),
  );
  const fixed = Object.keys(fields).filter((name) => required.has(name) && !spelled.has(name));
  const optional = Object.keys(fields).filter((name) => !required.has(name) && !spelled.has(name));
  const pick = fc.tuple(...choices.map((alternatives) => fc.constantFrom(...alternatives)));
  return fc.tuple(fc.record(fields), fc.subarray(optional), pick).map(([values, present, picked]) => {
    const out: Record<string, ExactJson> = {};
    const keep = new Set([...fixed, ...present, ...picked.flat()]);
    for (const name of Object.keys(properties)) {
      if (keep.has(name)) out[name] = values[name]!;
    }
    return out;
  });
}
