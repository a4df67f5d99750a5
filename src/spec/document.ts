import { createHash } from 'node:crypto';
import type { OpenAPIV3_1 } from 'openapi-types';
import { parseDocument, visit } from 'yaml';
import { SpecError } from '../core/errors.js';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';

/** A JSON object node of the spec. */
export type Node = Record<string, unknown>;

/**
 * The spec, loaded once: its text and hash, and its document in two number forms. `exact` keeps
 * every number's literal text (LosslessNumber: examples carry BigDecimal amounts such as
 * `12345678901234567890.123`, which a float rounds); `document` is the same tree with plain JS
 * numbers, for the JSON Schema compiler (ajv), which needs them. Both come from one parse.
 */
export interface SpecSource {
  /** Where it came from, for messages (e.g. `spec/wallet-api.yaml`). */
  name: string;
  text: string;
  sha256: string;
  /** The document with every number a LosslessNumber holding its literal digits. */
  exact: Node;
  /** The document with plain numbers (for ajv). */
  document: OpenAPIV3_1.Document;
}

/** Keywords the spec uses that carry no validation: OpenAPI's and ours (the schema compiler ignores them). */
export const ANNOTATION_KEYWORDS = [
  'x-rules',
  'x-encrypted',
  'x-unspecified',
  'x-toolkit',
  'discriminator',
  'xml',
  'externalDocs',
  'example',
];

/** The HTTP methods an OpenAPI path item may hold, in the order every reader walks them. */
export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** One of {@link METHODS}. */
export type Method = (typeof METHODS)[number];

/** A JSON number literal (the JSON grammar): the digits kept as they are written. */
const NUMBER_LITERAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Parses the spec's YAML text; a broken spec is a SpecError naming the line. Numbers keep their
 * literal text in `exact` (a literal outside the JSON grammar, such as `0x1F`, keeps its value).
 */
export function parseSpec(text: string, name = 'spec/wallet-api.yaml'): SpecSource {
  const parsed = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (parsed.errors.length > 0)
    throw new SpecError('bad-spec', `${name}: not valid YAML: ${parsed.errors[0]!.message.split('\n')[0]}`);
  visit(parsed, {
    Scalar(_key, node) {
      if (typeof node.value === 'number' && Number.isFinite(node.value)) {
        node.value = new LosslessNumber(
          node.source !== undefined && NUMBER_LITERAL.test(node.source) ? node.source : String(node.value),
        );
      }
    },
  });
  const exact = parsed.toJS() as unknown;
  if (!isNode(exact) || !('openapi' in exact))
    throw new SpecError('bad-spec', `${name}: not an OpenAPI document (no 'openapi' field)`);
  return {
    name,
    text,
    sha256: createHash('sha256').update(text).digest('hex'),
    exact,
    document: plainNumbers(exact) as OpenAPIV3_1.Document,
  };
}

/** The same tree with every LosslessNumber as a JS number. */
export function plainNumbers(value: unknown): unknown {
  if (value instanceof LosslessNumber) return Number(value.value);
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (isNode(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainNumbers(item)]));
  return value;
}

/** Is this a JSON object (not an array, not an exact number)? */
export function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof LosslessNumber);
}

/** A value as short text: strings as they are, anything else as exact JSON. */
export function literal(value: unknown): string {
  return typeof value === 'string' ? value : stringifyExact(value ?? null);
}

/** Rule ids of a node's `x-rules` (none for anything else). */
export function rulesOf(node: unknown): string[] {
  const rules = isNode(node) ? node['x-rules'] : undefined;
  return Array.isArray(rules) ? rules.map(String) : [];
}

/** Component schemas by name, in the spec's order (plain numbers: what ajv compiles). */
export function componentSchemas(spec: SpecSource): Array<[string, Record<string, unknown>]> {
  const schemas = spec.document.components?.schemas ?? {};
  return Object.entries(schemas) as Array<[string, Record<string, unknown>]>;
}

/** Calls `visit` on every object node of a JSON tree with its JSON pointer. */
export function walkJson(
  node: unknown,
  visit: (value: Record<string, unknown>, pointer: string) => void,
  pointer = '',
): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walkJson(item, visit, `${pointer}/${i}`));
  } else if (node !== null && typeof node === 'object' && !(node instanceof LosslessNumber)) {
    const record = node as Record<string, unknown>;
    visit(record, pointer);
    for (const [key, value] of Object.entries(record)) {
      walkJson(value, visit, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    }
  }
}

/**
 * The node a local JSON pointer `$ref` (`#/components/schemas/X`, `~0`/`~1` escapes) points at;
 * undefined when it is not local or points nowhere. Callers word the error for their product.
 */
export function followLocalRef(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = Array.isArray(node)
      ? node[Number(key)]
      : node !== null && typeof node === 'object'
        ? (node as Record<string, unknown>)[key]
        : undefined;
  }
  return node;
}

/**
 * Where rules live in a JSON tree: JSON pointer → rule ids, from the spec's `x-rules`. The
 * validators attribute a validation error to the deepest pointer that has rules.
 */
export function ruleIndex(tree: unknown): Record<string, string[]> {
  const index: Record<string, string[]> = {};
  walkJson(tree, (node, pointer) => {
    const rules = node['x-rules'];
    if (Array.isArray(rules) && rules.length > 0) index[pointer] = rules.map(String);
  });
  return index;
}
