import * as generated from '../generated/validators.js';
import { toValidationView } from './exact-json.js';

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
  if (validate(toValidationView(value))) return [];
  return (validate.errors ?? [])
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

/** The x-rules of the schema that failed (of the missing property, for `required`). */
function rulesOf(error: AjvError, missing: string): string[] | undefined {
  const parent = error.parentSchema;
  if (!parent) return undefined;
  const property = missing ? (parent.properties as Record<string, Record<string, unknown>> | undefined)?.[missing] : undefined;
  const rules = (property?.['x-rules'] ?? parent['x-rules']) as string[] | undefined;
  return rules && rules.length > 0 ? rules : undefined;
}

/** The rules of the deepest schema node on the error's path (relative to schema `name`) that has any. */
function rulesAt(name: string, schemaPath: string): string[] {
  let pointer = schemaPath.startsWith('#/$defs/') ? schemaPath.slice('#/$defs'.length) : `/${name}${schemaPath.replace(/^#/, '')}`;
  while (pointer.length > 0) {
    const rules = generated.RULE_INDEX[pointer];
    if (rules) return rules;
    pointer = pointer.slice(0, pointer.lastIndexOf('/'));
  }
  return [];
}
