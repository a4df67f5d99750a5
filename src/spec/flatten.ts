import { SpecError } from '../core/errors.js';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { isNode, rulesOf, type Node } from './document.js';

/** One `x-unspecified` entry: what the interface leaves open there and what the toolkit assumes. */
export interface UnspecifiedNote {
  rule: string;
  note: string;
}

/** A string carrying RSA-encrypted Base64 (`x-encrypted`): its direction and the schema of its plain form. */
export interface EncryptedMarker {
  /** As written; spec-lint refuses anything but request, response or callback. */
  direction: string;
  /** The component schema of the plain (decrypted) JSON; undefined when the marker names none. */
  plaintext: string | undefined;
  /** The marker's `plaintext.$ref` as written (spec-lint checks it). */
  plaintextRef: string | undefined;
}

/** An `if`/`then` of a schema (or of one of its `allOf` parts), both flattened. */
interface FlatCondition {
  if: FlatSchema;
  then: FlatSchema;
}

/**
 * A schema of the spec with every `$ref` followed and every `allOf` merged: the one plain view all
 * readers share. Numbers in values (`const`, `enum`, `default`, `examples`) are exact
 * (LosslessNumber with the written digits); bounds (`minimum`, `maxLength`, …) are JS numbers.
 *
 * Merging: a `$ref`'s sibling keywords override its target's; `allOf` parts come first, the schema's
 * own keywords last; a property named in several places is merged the same way (later wins, rules
 * add up); `required` lists unite. `rules`, `description` and `examples` each say whose they are.
 */
export interface FlatSchema {
  /** The component schema this view was reached through (the last `$ref` of a chain), if any. */
  name?: string;
  type?: string | string[];
  /** The site's description if it has one, else the referenced schema's (not inherited from `allOf` parts). */
  description?: string;
  title?: string;
  /** Every property, those of the `allOf` parts first, each flattened and merged. */
  properties: Record<string, FlatSchema>;
  required: string[];
  /**
   * `anyOf` branches that only require names: a choice of spellings (`[[txid], [txId]]`, U-CB-FIELDS).
   * One entry per such `anyOf`, each a list of alternatives.
   */
  requiredChoices: string[][][];
  const?: ExactJson;
  enum?: ExactJson[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: ExactJson;
  additionalProperties?: boolean;
  /** `type` includes `'null'`, or an `anyOf`/`oneOf` branch is `{type: 'null'}`. */
  nullable: boolean;
  anyOf?: FlatSchema[];
  oneOf?: FlatSchema[];
  items?: FlatSchema;
  /** The schema's own examples (the site's if it has any, else the referenced schema's; not the `allOf` parts'). */
  examples: ExactJson[];
  /** Every rule: the referenced schema's and the `allOf` parts' first, then the site's (each once). */
  rules: string[];
  /** The `x-rules` of the schema the `$ref` chain ends at (not its `allOf` parts, not the `$ref` site). */
  ownRules: string[];
  /** The `x-unspecified` notes of the schema, its `allOf` parts and its site, in that order. */
  unspecified: UnspecifiedNote[];
  encrypted?: EncryptedMarker;
  /** `if`/`then` of the `allOf` parts, then the schema's own. */
  conditions: FlatCondition[];
  /** The `allOf` parts that are schemas (not a bare `if`/`then`, not a spelling choice), flattened, in order. */
  parts: FlatSchema[];
  /**
   * What is written at this node itself, beside its `$ref` (a property's own description, rules
   * and notes); for a node without `$ref` the same as the schema's own. Merged properties unite their sites.
   */
  site: { description?: string; rules: string[]; unspecified: UnspecifiedNote[] };
}

/** The JSON Schema keywords a flat schema keeps as they are (src/property/schema-arbitrary.ts writes them back). */
export const SCALARS = [
  'type',
  'description',
  'title',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'additionalProperties',
] as const;

/** Numbers of a bound keyword as JS numbers. */
const numberOf = (value: unknown): number | undefined =>
  value instanceof LosslessNumber ? Number(value.value) : typeof value === 'number' ? value : undefined;

const union = (...lists: string[][]): string[] => [...new Set(lists.flat())];

function unspecifiedOf(node: Node): UnspecifiedNote[] {
  const list = node['x-unspecified'];
  return Array.isArray(list)
    ? list.filter(isNode).map((entry) => ({ rule: String(entry.rule ?? ''), note: String(entry.note ?? '') }))
    : [];
}

/** An `anyOf` whose branches each only name required fields: a choice of spellings. */
function requiredChoice(anyOf: unknown): string[][] | undefined {
  if (!Array.isArray(anyOf) || anyOf.length === 0) return undefined;
  if (
    !anyOf.every(
      (branch) =>
        isNode(branch) && Array.isArray(branch.required) && Object.keys(branch).every((key) => key === 'required'),
    )
  )
    return undefined;
  return anyOf.map((branch) => ((branch as Node).required as unknown[]).map(String));
}

/** A bare `if`/`then` part of an `allOf` (the callback type dispatch). */
const isConditionPart = (part: unknown): part is Node =>
  isNode(part) && 'if' in part && !('properties' in part) && !('$ref' in part);

/** The empty view: what `{}` flattens to. */
function emptyFlat(): FlatSchema {
  return {
    properties: {},
    required: [],
    requiredChoices: [],
    nullable: false,
    examples: [],
    rules: [],
    ownRules: [],
    unspecified: [],
    conditions: [],
    parts: [],
    site: { rules: [], unspecified: [] },
  };
}

/**
 * `b` laid over `a`: b's keywords win where it has them, properties merge by name, lists unite.
 * Used for `allOf` parts, for a `$ref`'s siblings and for a property named twice.
 */
function mergeFlat(a: FlatSchema, b: FlatSchema): FlatSchema {
  const out: FlatSchema = { ...a, ...definedOf(b) };
  const properties: Record<string, FlatSchema> = { ...a.properties };
  for (const [key, value] of Object.entries(b.properties))
    properties[key] = properties[key] ? mergeFlat(properties[key], value) : value;
  out.properties = properties;
  out.required = union(a.required, b.required);
  out.requiredChoices = [...a.requiredChoices, ...b.requiredChoices];
  out.nullable = a.nullable || b.nullable;
  out.examples = b.examples.length > 0 ? b.examples : a.examples;
  out.rules = union(a.rules, b.rules);
  out.ownRules = b.ownRules.length > 0 ? b.ownRules : a.ownRules;
  out.unspecified = [...a.unspecified, ...b.unspecified];
  out.conditions = [...a.conditions, ...b.conditions];
  out.parts = [...a.parts, ...b.parts];
  out.site = {
    ...((b.site.description ?? a.site.description) !== undefined
      ? { description: (b.site.description ?? a.site.description)! }
      : {}),
    rules: union(a.site.rules, b.site.rules),
    unspecified: [...a.site.unspecified, ...b.site.unspecified],
  };
  return out;
}

/** The keywords of a view that are set (undefined ones do not override). */
function definedOf(view: FlatSchema): Partial<FlatSchema> {
  const out: Partial<FlatSchema> = {};
  for (const key of [...SCALARS, 'name', 'anyOf', 'oneOf', 'items', 'encrypted'] as const) {
    if (view[key] !== undefined) (out as Record<string, unknown>)[key] = view[key];
  }
  if ('const' in view) out.const = view.const;
  if (view.enum !== undefined) out.enum = view.enum;
  if ('default' in view) out.default = view.default;
  return out;
}

/**
 * Flattens schema nodes of one document: follows local `$ref`s through `follow` and merges
 * `allOf`. Results are cached per node, so a component reached many times is flattened once.
 */
export class Flattener {
  private readonly cache = new WeakMap<Node, FlatSchema>();
  private readonly busy = new Set<Node>();

  /** `follow(ref)` returns the node a `$ref` points at, or throws a SpecError. */
  constructor(private readonly follow: (ref: string) => unknown) {}

  /** The flat view of a schema node (anything else flattens to the empty view). */
  flatten(node: unknown): FlatSchema {
    if (!isNode(node)) return emptyFlat();
    const cached = this.cache.get(node);
    if (cached) return cached;
    if (this.busy.has(node))
      throw new SpecError(
        'bad-spec',
        `a schema contains itself${typeof node.$ref === 'string' ? ` through $ref ${node.$ref}` : ''}; the toolkit reads no recursive schemas`,
      );
    this.busy.add(node);
    try {
      const view = this.build(node);
      this.cache.set(node, view);
      return view;
    } finally {
      this.busy.delete(node);
    }
  }

  private build(node: Node): FlatSchema {
    const own = this.own(node);
    if (typeof node.$ref !== 'string') return own;
    const name = /^#\/components\/schemas\/([^/]+)$/.exec(node.$ref)?.[1] ?? node.$ref.split('/').pop();
    const target = this.flatten(this.follow(node.$ref));
    const merged = mergeFlat(
      { ...target, ...(target.name === undefined && name !== undefined ? { name } : {}) },
      { ...own, ownRules: [] },
    );
    // The target's own rules stay its own; the site is what this node writes beside its $ref.
    return { ...merged, ownRules: target.ownRules, site: own.site };
  }

  /** A node's own keywords and its `allOf` parts (its `$ref`, if any, is the caller's). */
  private own(node: Node): FlatSchema {
    let view = emptyFlat();
    const rest: Node[] = [];
    for (const part of Array.isArray(node.allOf) ? node.allOf : []) {
      const choice = isNode(part) ? requiredChoice(part.anyOf) : undefined;
      if (choice && Object.keys(part as Node).every((key) => key === 'anyOf')) view.requiredChoices.push(choice);
      else if (isConditionPart(part)) rest.push(part);
      else {
        // A part lends its properties, required names, rules, notes and conditions, not its name,
        // description, examples or title: those stay the part's (see `parts`).
        const flat = this.flatten(part);
        const { name: _name, description: _description, title: _title, ...lent } = flat;
        view = mergeFlat(view, {
          ...lent,
          parts: [flat],
          ownRules: [],
          examples: [],
          site: { rules: [], unspecified: [] },
        });
      }
    }
    for (const part of rest) view.conditions.push(...this.conditionOf(part));
    const self = this.keywords(node);
    view = mergeFlat(view, self);
    if (Array.isArray(node.allOf) && view.type === undefined) view.type = 'object';
    return view;
  }

  /** The keywords written on this node itself (no `$ref`, no `allOf`). */
  private keywords(node: Node): FlatSchema {
    const view = emptyFlat();
    for (const key of ['description', 'title', 'format', 'pattern'] as const)
      if (typeof node[key] === 'string') view[key] = node[key];
    for (const key of ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems'] as const) {
      const n = numberOf(node[key]);
      if (n !== undefined) view[key] = n;
    }
    if (typeof node.type === 'string' || Array.isArray(node.type))
      view.type = Array.isArray(node.type) ? node.type.map(String) : node.type;
    if (typeof node.additionalProperties === 'boolean') view.additionalProperties = node.additionalProperties;
    if ('const' in node) view.const = node.const as ExactJson;
    if (Array.isArray(node.enum)) view.enum = node.enum as ExactJson[];
    if ('default' in node) view.default = node.default as ExactJson;
    if (Array.isArray(node.examples)) view.examples = node.examples as ExactJson[];
    if (isNode(node.properties))
      for (const [key, value] of Object.entries(node.properties)) view.properties[key] = this.flatten(value);
    if (Array.isArray(node.required)) view.required = node.required.map(String);
    const choice = requiredChoice(node.anyOf);
    if (choice) view.requiredChoices.push(choice);
    else if (Array.isArray(node.anyOf)) view.anyOf = node.anyOf.map((branch) => this.flatten(branch));
    if (Array.isArray(node.oneOf)) view.oneOf = node.oneOf.map((branch) => this.flatten(branch));
    if (isNode(node.items)) view.items = this.flatten(node.items);
    view.nullable =
      (Array.isArray(node.type) ? node.type.includes('null') : node.type === 'null') ||
      [...(view.anyOf ?? []), ...(view.oneOf ?? [])].some((branch) => branch.type === 'null');
    const marker = node['x-encrypted'];
    if (isNode(marker)) {
      const ref =
        isNode(marker.plaintext) && typeof marker.plaintext.$ref === 'string' ? marker.plaintext.$ref : undefined;
      view.encrypted = {
        direction: String(marker.direction ?? ''),
        plaintext: ref ? /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1] : undefined,
        plaintextRef: ref,
      };
    }
    view.rules = rulesOf(node);
    view.ownRules = rulesOf(node);
    view.unspecified = unspecifiedOf(node);
    view.conditions = this.conditionOf(node);
    view.site = {
      ...(typeof node.description === 'string' ? { description: node.description } : {}),
      rules: rulesOf(node),
      unspecified: unspecifiedOf(node),
    };
    return view;
  }

  private conditionOf(node: Node): FlatCondition[] {
    return isNode(node.if) && isNode(node.then) ? [{ if: this.flatten(node.if), then: this.flatten(node.then) }] : [];
  }
}

/** The property marked `x-encrypted` (for `direction`, if given), with its name; the first one found. */
export function encryptedField(
  schema: FlatSchema,
  direction?: string,
): { field: string; schema: FlatSchema; marker: EncryptedMarker } | undefined {
  for (const [field, property] of Object.entries(schema.properties)) {
    if (property.encrypted && (direction === undefined || property.encrypted.direction === direction))
      return { field, schema: property, marker: property.encrypted };
  }
  return undefined;
}
