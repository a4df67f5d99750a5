import { stringifyExact } from '../../core/exact-json.js';
import { literal } from '../../spec/document.js';
import type { FlatSchema } from '../../spec/flatten.js';
import { union } from './lists.js';
import { located, type UnspecifiedPoint } from './unspecified.js';

/** One row of a field table; nested fields have dotted paths (`data.bizId`). */
export interface FieldRow {
  path: string;
  depth: number;
  type: string;
  required: boolean;
  description: string;
  rules: string[];
  constraints: string[];
  unspecified: UnspecifiedPoint[];
  /** Set when the field carries RSA-encrypted Base64 (the spec marks it encrypted). */
  encrypted?: { direction: string; plaintext: string };
}

/** A conditional part of a schema (`if`/`then`), in words. */
export interface Condition {
  when: string;
  then: string[];
  rules: string[];
}

/** An object schema as a page shows it: its own and inherited fields, conditions and examples. */
export interface ObjectView {
  name: string;
  description: string;
  rules: string[];
  unspecified: UnspecifiedPoint[];
  fields: FieldRow[];
  conditions: Condition[];
  examples: unknown[];
}

/** Is this schema an object with properties? */
function isObject(schema: FlatSchema): boolean {
  return Object.keys(schema.properties).length > 0 || schema.type === 'object';
}

/** The type of a schema in words: `string`, `const 1`, `Decimal: number | string`, `integer: 1 | 2`. */
export function typeText(schema: FlatSchema | undefined, depth = 0): string {
  if (!schema) return 'any';
  if (schema.name !== undefined) {
    const { name, ...target } = schema;
    if (isObject(schema)) return `object (${name})`;
    return depth > 1 ? name : `${name}: ${typeText(target, depth + 1)}`;
  }
  if ('const' in schema) return `const ${stringifyExact(schema.const)}`;
  if (schema.enum)
    return `${schema.type ? `${literal(schema.type)}: ` : ''}${schema.enum.map((value) => stringifyExact(value)).join(' | ')}`;
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return options.map((option) => typeText(option, depth + 1)).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (schema.type === 'array') return `array of ${typeText(schema.items, depth + 1)}`;
  if (typeof schema.type === 'string') return schema.type;
  if (isObject(schema)) return 'object';
  return 'any';
}

/** Constraints worth showing beside the type (pattern, lengths, bounds, format, default). */
function constraints(schema: FlatSchema): string[] {
  const out: string[] = [];
  if (schema.pattern !== undefined) out.push(`pattern ${schema.pattern}`);
  if (schema.format !== undefined) out.push(`format ${schema.format}`);
  if (schema.minLength !== undefined) out.push(`minLength ${schema.minLength}`);
  if (schema.maxLength !== undefined) out.push(`maxLength ${schema.maxLength}`);
  if (schema.minimum !== undefined) out.push(`minimum ${schema.minimum}`);
  if (schema.maximum !== undefined) out.push(`maximum ${schema.maximum}`);
  if (schema.maxItems !== undefined) out.push(`maxItems ${schema.maxItems}`);
  if ('default' in schema) out.push(`default ${stringifyExact(schema.default)}`);
  if (schema.additionalProperties === false) out.push('no other fields');
  // A pattern written on an option itself; a named option's pattern shows on its own type.
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    if (option.name === undefined && option.pattern !== undefined) out.push(`pattern ${option.pattern}`);
  return union(out);
}

/**
 * An object schema (flattened by the spec model: inherited parts first, then its own keywords) as
 * rows: nested objects become dotted paths; a field that spells one of two names (`anyOf` of
 * `required`, U-CB-FIELDS) shows the interface's spelling as required.
 */
export function objectView(schema: FlatSchema, label?: string): ObjectView {
  const name = label ?? schema.name ?? 'object';
  const required = new Set(schema.required);
  for (const choice of schema.requiredChoices) {
    // The first spelling is the interface's, shown as the required field; the other is its alias.
    if (choice.length > 1 && choice.every((alternative) => alternative.length === 1)) required.add(choice[0]![0]!);
  }
  const fields: FieldRow[] = [];
  for (const [key, property] of Object.entries(schema.properties))
    pushField(fields, key, 0, property, required.has(key), name);
  return {
    name,
    description: schema.description?.trim() ?? '',
    rules: schema.ownRules,
    unspecified: dedupe(located(schema.unspecified, name)),
    fields,
    conditions: schema.conditions.map(({ if: when, then }) => condition(when, then)),
    examples: schema.examples,
  };
}

function pushField(
  fields: FieldRow[],
  path: string,
  depth: number,
  property: FlatSchema,
  required: boolean,
  owner: string,
): void {
  const encrypted = property.encrypted;
  fields.push({
    path,
    depth,
    type: typeText(property),
    required,
    description: property.site.description?.trim() ?? '',
    rules: property.site.rules,
    constraints: constraints(property),
    unspecified: dedupe(located(property.site.unspecified, `${owner}.${path}`)),
    ...(encrypted ? { encrypted: { direction: encrypted.direction, plaintext: encrypted.plaintext ?? 'JSON' } } : {}),
  });
  if (depth >= 2 || encrypted) return;
  const child = childObject(property);
  if (!child) return;
  const view = objectView(child.schema, owner);
  for (const row of view.fields) {
    fields.push({ ...row, path: `${path}${child.array ? '[]' : ''}.${row.path}`, depth: depth + 1 + row.depth });
  }
}

/** The object a field holds, directly, through anyOf (object or null) or as array items. */
function childObject(schema: FlatSchema): { schema: FlatSchema; array: boolean } | undefined {
  if (schema.type === 'array' && schema.items && isObject(schema.items)) return { schema: schema.items, array: true };
  if (isObject(schema)) return { schema, array: false };
  for (const options of [schema.anyOf, schema.oneOf]) {
    const objects = (options ?? []).filter(isObject);
    if (objects.length === 1) return { schema: objects[0]!, array: false };
  }
  return undefined;
}

/** One `if`/`then` in words. */
function condition(when: FlatSchema, then: FlatSchema): Condition {
  const terms = Object.entries(when.properties).map(([key, value]) =>
    'const' in value ? `${key} = ${stringifyExact(value.const)}` : key,
  );
  const effects: string[] = [];
  if (then.name) effects.push(`the schema ${then.name} applies`);
  effects.push(...then.required.map((key) => `${key} is required`));
  let rules = then.ownRules;
  for (const [key, value] of Object.entries(then.properties)) {
    rules = union(rules, value.site.rules);
    const typed =
      value.name !== undefined ||
      'const' in value ||
      value.enum !== undefined ||
      value.type !== undefined ||
      value.anyOf !== undefined;
    const facts = [...(typed ? [typeText(value)] : []), ...constraints(value).filter((c) => !c.startsWith('pattern'))];
    if (facts.length > 0) effects.push(`${key}: ${facts.join(', ')}`);
  }
  return { when: terms.length > 0 ? terms.join(' and ') : 'the condition holds', then: effects, rules };
}

function dedupe(points: UnspecifiedPoint[]): UnspecifiedPoint[] {
  const seen = new Set<string>();
  return points.filter((point) => {
    const key = `${point.rule}\u0000${point.note}\u0000${point.where}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
