import { stringifyExact } from '../../core/exact-json.js';
import { isNode, literal, rulesOf, type Node } from '../../spec/document.js';
import type { SpecModel } from '../../spec/model.js';
import { union } from './lists.js';
import { unspecifiedOf, type UnspecifiedPoint } from './unspecified.js';

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
  /** Set when the field carries RSA-encrypted Base64 (`x-encrypted`). */
  encrypted?: { direction: string; plaintext: string };
}

/** A conditional part of a schema (`if`/`then`), in words. */
export interface Condition {
  when: string;
  then: string[];
  rules: string[];
}

/** An object schema flattened: its own and inherited (allOf) fields, conditions and examples. */
export interface ObjectView {
  name: string;
  description: string;
  rules: string[];
  unspecified: UnspecifiedPoint[];
  fields: FieldRow[];
  conditions: Condition[];
  examples: unknown[];
}

/**
 * The spec's schemas as the docs show them: types in words, constraints, flattened objects. Reads
 * the spec model (refs resolved there); presentation only.
 */
export class SchemaView {
  constructor(readonly model: SpecModel) {}

  /** Follows `$ref` chains (see SpecModel.resolve). */
  resolve(node: unknown): { node: Node; name?: string } {
    return this.model.resolve(node);
  }

  /** The component name a `$ref` names, if any. */
  refName(node: unknown): string | undefined {
    return this.model.refName(node);
  }

  /** The schema of an operation's request body (first media type), unresolved. */
  requestSchema(operation: Node): Node | undefined {
    return this.model.requestSchema(operation);
  }

  /** The x-rules of a node plus those of its referenced component. */
  rulesWithRef(node: unknown): string[] {
    return union(rulesOf(node), isNode(node) && typeof node.$ref === 'string' ? rulesOf(this.resolve(node).node) : []);
  }

  /** Is this schema (after refs) an object with properties? */
  isObject(node: unknown): boolean {
    const { node: schema } = this.resolve(node);
    if (isNode(schema.properties) || schema.type === 'object') return true;
    return Array.isArray(schema.allOf) && schema.allOf.some((part) => isNode(part) && !('if' in part) && this.isObject(part));
  }

  /** The type of a schema in words: `string`, `const 1`, `Decimal: number | string`, `integer: 1 | 2`. */
  typeText(node: unknown, depth = 0): string {
    if (!isNode(node)) return 'any';
    if (typeof node.$ref === 'string') {
      const { node: target, name } = this.resolve(node);
      if (this.isObject(target)) return `object (${name})`;
      return depth > 1 ? String(name) : `${name}: ${this.typeText(target, depth + 1)}`;
    }
    if ('const' in node) return `const ${stringifyExact(node.const)}`;
    if (Array.isArray(node.enum)) return `${node.type ? `${literal(node.type)}: ` : ''}${node.enum.map((value) => stringifyExact(value)).join(' | ')}`;
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = node[key];
      if (Array.isArray(options)) return options.map((option) => this.typeText(option, depth + 1)).join(' | ');
    }
    if (Array.isArray(node.type)) return node.type.map(String).join(' | ');
    if (node.type === 'array') return `array of ${this.typeText(node.items, depth + 1)}`;
    if (typeof node.type === 'string') return node.type;
    if (isNode(node.properties) || Array.isArray(node.allOf)) return 'object';
    return 'any';
  }

  /** Constraints worth showing beside the type (pattern, lengths, bounds, format, default). */
  constraints(node: unknown): string[] {
    if (!isNode(node)) return [];
    const { node: schema } = this.resolve(node);
    const out: string[] = [];
    const own = { ...schema, ...node };
    if (typeof own.pattern === 'string') out.push(`pattern ${own.pattern}`);
    if (own.format !== undefined) out.push(`format ${literal(own.format)}`);
    if (own.minLength !== undefined) out.push(`minLength ${literal(own.minLength)}`);
    if (own.maxLength !== undefined) out.push(`maxLength ${literal(own.maxLength)}`);
    if (own.minimum !== undefined) out.push(`minimum ${literal(own.minimum)}`);
    if (own.maximum !== undefined) out.push(`maximum ${literal(own.maximum)}`);
    if (own.maxItems !== undefined) out.push(`maxItems ${literal(own.maxItems)}`);
    if (own.default !== undefined) out.push(`default ${stringifyExact(own.default)}`);
    if (own.additionalProperties === false) out.push('no other fields');
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = schema[key];
      if (Array.isArray(options)) {
        for (const option of options) if (isNode(option) && typeof option.pattern === 'string') out.push(`pattern ${option.pattern}`);
      }
    }
    return union(out);
  }

  /**
   * Flattens an object schema: allOf parts first (inherited), then its own keywords; a property
   * named in several parts merges (the later part's type wins, rules add up).
   */
  objectView(node: unknown, label?: string): ObjectView {
    const { node: schema, name: refName } = this.resolve(node);
    const name = label ?? refName ?? 'object';
    const parts = this.parts(schema);
    const properties = new Map<string, Node[]>();
    const required = new Set<string>();
    const conditions: Condition[] = [];
    let unspecified: UnspecifiedPoint[] = [];
    for (const part of parts) {
      if (isNode(part.properties)) {
        for (const [key, value] of Object.entries(part.properties)) if (isNode(value)) properties.set(key, [...(properties.get(key) ?? []), value]);
      }
      if (Array.isArray(part.required)) for (const key of part.required) required.add(String(key));
      // `anyOf: [{required: [txid]}, {required: [txId]}]`: one of two spellings is required (U-CB-FIELDS);
      // the first is the interface's, shown as the required field, the other as its alias.
      const spellings = Array.isArray(part.anyOf) ? part.anyOf : [];
      const first = spellings[0] as Node | undefined;
      if (spellings.length > 1 && spellings.every((alt) => isNode(alt) && Array.isArray(alt.required) && alt.required.length === 1 && Object.keys(alt).length === 1)) {
        required.add(String((first!.required as unknown[])[0]));
      }
      conditions.push(...this.conditions(part));
      unspecified = [...unspecified, ...unspecifiedOf(part, name)];
    }
    const fields: FieldRow[] = [];
    for (const [key, variants] of properties) this.pushField(fields, key, 0, variants, required.has(key), name);
    const examples = Array.isArray(schema.examples) ? schema.examples : [];
    return {
      name,
      description: typeof schema.description === 'string' ? schema.description.trim() : '',
      rules: rulesOf(schema),
      unspecified: dedupe(unspecified),
      fields,
      conditions,
      examples,
    };
  }

  /** The schema's allOf parts (recursively, refs followed) then itself; `if`-only parts stay for conditions. */
  private parts(schema: Node, depth = 0): Node[] {
    if (depth > 8) return [schema];
    const out: Node[] = [];
    if (Array.isArray(schema.allOf)) {
      for (const part of schema.allOf) {
        if (isNode(part) && 'if' in part && !('properties' in part)) out.push(part);
        else out.push(...this.parts(this.resolve(part).node, depth + 1));
      }
    }
    out.push(schema);
    return out;
  }

  private pushField(fields: FieldRow[], path: string, depth: number, variants: Node[], required: boolean, owner: string): void {
    const typed = [...variants].reverse().find((v) => ['$ref', 'const', 'enum', 'type', 'anyOf', 'oneOf'].some((k) => k in v)) ?? variants[0] ?? {};
    const described = [...variants].reverse().find((v) => typeof v.description === 'string');
    const encrypted = variants.map((v) => v['x-encrypted']).find(isNode);
    const plaintext = isNode(encrypted) ? this.refName(encrypted.plaintext) : undefined;
    const where = `${owner}.${path}`;
    fields.push({
      path,
      depth,
      type: this.typeText(typed),
      required,
      description: typeof described?.description === 'string' ? described.description.trim() : '',
      rules: union(...variants.map(rulesOf)),
      constraints: this.constraints(typed),
      unspecified: dedupe(variants.flatMap((v) => unspecifiedOf(v, where))),
      ...(isNode(encrypted) ? { encrypted: { direction: String(encrypted.direction), plaintext: plaintext ?? 'JSON' } } : {}),
    });
    if (depth >= 2 || isNode(encrypted)) return;
    const child = this.childObject(typed);
    if (!child) return;
    const view = this.objectView(child.schema, owner);
    for (const row of view.fields) {
      fields.push({ ...row, path: `${path}${child.array ? '[]' : ''}.${row.path}`, depth: depth + 1 + row.depth });
    }
  }

  /** The object a field holds, directly, through anyOf (object or null) or as array items. */
  private childObject(node: Node): { schema: Node; array: boolean } | undefined {
    if (node.type === 'array' && isNode(node.items) && this.isObject(node.items)) return { schema: node.items, array: true };
    if (this.isObject(node)) return { schema: node, array: false };
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = node[key];
      if (Array.isArray(options)) {
        const objects = options.filter((option) => isNode(option) && this.isObject(option)) as Node[];
        if (objects.length === 1) return { schema: objects[0]!, array: false };
      }
    }
    return undefined;
  }

  /** `if`/`then` of one schema part in words. */
  private conditions(part: Node): Condition[] {
    const condition = part.if;
    const then = part.then;
    if (!isNode(condition) || !isNode(then)) return [];
    const when = isNode(condition.properties)
      ? Object.entries(condition.properties)
          .map(([key, value]) => (isNode(value) && 'const' in value ? `${key} = ${stringifyExact(value.const)}` : key))
          .join(' and ')
      : 'the condition holds';
    const { node: target, name } = this.resolve(then);
    const effects: string[] = [];
    if (name) effects.push(`the schema ${name} applies`);
    if (Array.isArray(target.required)) effects.push(...target.required.map((key) => `${String(key)} is required`));
    let rules = rulesOf(target);
    if (isNode(target.properties)) {
      for (const [key, value] of Object.entries(target.properties)) {
        if (!isNode(value)) continue;
        rules = union(rules, rulesOf(value));
        const facts = [...(['$ref', 'const', 'enum', 'type', 'anyOf'].some((k) => k in value) ? [this.typeText(value)] : []), ...this.constraints(value).filter((c) => !c.startsWith('pattern'))];
        if (facts.length > 0) effects.push(`${key}: ${facts.join(', ')}`);
      }
    }
    return [{ when, then: effects, rules }];
  }
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
