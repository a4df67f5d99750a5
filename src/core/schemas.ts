import { isSafeNumber } from 'lossless-json';
import * as generated from '../generated/validators.js';
import { LosslessNumber } from './exact-json.js';

/** The name of a component schema of the spec (e.g. `OrderRequest`, `CallbackPayload`). */
export type SchemaName = (typeof generated.SCHEMA_NAMES)[number];

/** One way a value breaks its schema, with the rule ids the spec attaches there. */
export interface SchemaIssue {
  /** JSON pointer of the offending value (`/amount`), `''` for the root. */
  path: string;
  message: string;
  keyword: string;
  /** JSON pointer into the schema, relative to the component (`/properties/tenantType/const`). */
  schemaPath: string;
  /** Rule ids from the spec's `x-rules` at the deepest schema location that has them. */
  rules: string[];
}

interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** The schema object holding the failed keyword (ajv's `verbose`). */
  parentSchema?: Record<string, unknown>;
}
type GeneratedValidator = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const validators = generated as unknown as Record<string, GeneratedValidator>;

/** Is `name` a component schema of the spec? */
export function isSchemaName(name: string): name is SchemaName {
  return (generated.SCHEMA_NAMES as readonly string[]).includes(name);
}

/**
 * Validates a value (plain or exact JSON, see exact-json.ts) against a component schema of the
 * spec with the generated standalone validators. Failures are data.
 *
 * @example validateSchema('OrderResult', { tenantUserId: '7', id: 'cb-1' })[0]?.rules // ['ORDER-RES']
 */
export function validateSchema(name: SchemaName, value: unknown): SchemaIssue[] {
  const validate = validators[name];
  if (typeof validate !== 'function') throw new TypeError(`no generated validator for schema ${name}`);
  const rounded = new Set<string>();
  const view = numberView(value, '', rounded, undefined);
  const errors = validate(view) ? [] : [...(validate.errors ?? [])];
  if (rounded.size > 0) {
    // A fraction that a float rounds to a whole number (1.000000000000000000001) was shown as that
    // whole number, so an integer check, an enum or a const could wrongly accept it. Judge those
    // places again with a plain non-integer in its stead, keeping only what says "not an integer".
    validate(numberView(value, '', rounded, 0.5));
    const probe = (validate.errors ?? []).filter((error) => rounded.has(error.instancePath));
    const notInteger = new Set(
      probe
        .filter((error) => error.keyword === 'type' && [error.params.type].flat().includes('integer'))
        .map((error) => error.instancePath),
    );
    const seen = new Set(errors.map((error) => `${error.instancePath} ${error.schemaPath}`));
    for (const error of probe) {
      const counts =
        ['enum', 'const'].includes(error.keyword) ||
        (notInteger.has(error.instancePath) && ['type', 'anyOf', 'oneOf', 'multipleOf'].includes(error.keyword));
      if (counts && !seen.has(`${error.instancePath} ${error.schemaPath}`)) errors.push(error);
    }
  }
  return errors
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const missing = error.keyword === 'required' ? String(error.params.missingProperty) : '';
      return {
        path: error.instancePath + (missing ? `/${missing}` : ''),
        message: `${error.instancePath || '(root)'} ${error.message ?? error.keyword}`,
        keyword: error.keyword,
        schemaPath: error.schemaPath.replace(/^#/, ''),
        rules: rulesOf(error, missing) ?? rulesAt(name, error.schemaPath),
      };
    });
}

/**
 * The form the validator judges: every exact number as a JS number, so a number is never taken
 * for a string (a long fraction shown as its text passed `type: string`). A fraction whose float
 * is a whole number is noted in `rounded` (by JSON pointer) and, when `stand` is given, replaced
 * by it.
 */
function numberView(value: unknown, pointer: string, rounded: Set<string>, stand: number | undefined): unknown {
  if (value instanceof LosslessNumber) {
    const text = value.value;
    const number = Number(text);
    if (isSafeNumber(text) || !Number.isInteger(number) || isWholeLiteral(text)) return number;
    rounded.add(pointer);
    return stand ?? number;
  }
  if (Array.isArray(value)) return value.map((item, i) => numberView(item, `${pointer}/${i}`, rounded, stand));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = numberView(v, `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`, rounded, stand);
    return out;
  }
  return value;
}

/** Is a JSON number literal a whole number, digit for digit (`12.000`, `1.5e3`; not `1.0000000000000000001`)? */
function isWholeLiteral(text: string): boolean {
  const match = /^-?\d+(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return false;
  const fraction = (match[1] ?? '').replace(/0+$/, '');
  return fraction.length <= Number(match[2] ?? 0);
}

/** The x-rules of the schema that failed (of the missing property, for `required`). */
function rulesOf(error: AjvError, missing: string): string[] | undefined {
  const parent = error.parentSchema;
  if (!parent) return undefined;
  const property = missing
    ? (parent.properties as Record<string, Record<string, unknown>> | undefined)?.[missing]
    : undefined;
  const rules = (property?.['x-rules'] ?? parent['x-rules']) as string[] | undefined;
  return rules && rules.length > 0 ? rules : undefined;
}

/** The rules of the deepest schema node on the error's path (relative to schema `name`) that has any. */
function rulesAt(name: string, schemaPath: string): string[] {
  let pointer = schemaPath.startsWith('#/$defs/')
    ? schemaPath.slice('#/$defs'.length)
    : `/${name}${schemaPath.replace(/^#/, '')}`;
  while (pointer.length > 0) {
    const rules = generated.RULE_INDEX[pointer];
    if (rules) return rules;
    pointer = pointer.slice(0, pointer.lastIndexOf('/'));
  }
  return [];
}
