import { createHash } from 'node:crypto';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { Rule } from '../core/rules.js';
import * as generated from '../generated/suites.js';
import type { AnyCheck } from './checks/check.js';
import type { Suite } from './model.js';

/**
 * What `npm run generate` keeps of the built-in suites, the rule catalog and the checks' parameter
 * schemas (src/generated/suites.ts), so a run does not parse and check ten YAML files and compile a
 * schema per check each time it starts (about half a second of CPU). Each is used only while its
 * source is what it was generated from (the digest of the suite files, of the catalog, of each
 * schema); otherwise the caller parses and compiles as before, so a stale file costs time, never a
 * wrong suite.
 */
interface Generated {
  SUITES_SHA256: string;
  SUITES_JSON: string;
  RULES_SHA256: string;
  RULES_JSON: string;
  CHECK_PARAMS: Record<string, { sha256: string; validate: ValidateFunction }>;
}
const cache = generated as unknown as Generated;

/** One built-in suite file as read: its suite name and its text. */
export interface SuiteText {
  name: string;
  text: string;
}

/** sha256 over the built-in suite files: each name and text, in the order given (name order). */
export function suitesDigest(files: readonly SuiteText[]): string {
  const hash = createHash('sha256');
  for (const { name, text } of files) hash.update(`${name}\u0000${text}\u0000`);
  return hash.digest('hex');
}

/** The suites as generated from these very files (a fresh copy each call), or undefined when they changed since. */
export function cachedSuites(files: readonly SuiteText[]): Suite[] | undefined {
  if (suitesDigest(files) !== cache.SUITES_SHA256) return undefined;
  return JSON.parse(cache.SUITES_JSON) as Suite[];
}

/** sha256 of a text (the rule catalog's, a schema's JSON). */
export function textDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The rule catalog as generated from this very text of spec/rules.yaml (a fresh copy), or undefined when it changed since. */
export function cachedRules(text: string): Rule[] | undefined {
  if (textDigest(text) !== cache.RULES_SHA256) return undefined;
  return JSON.parse(cache.RULES_JSON) as Rule[];
}

/** sha256 of a check's parameter schema. */
export function paramsDigest(check: AnyCheck): string {
  return textDigest(JSON.stringify(check.params));
}

/** The check's parameter validator compiled by `npm run generate`, while its schema is still that one. */
export function compiledParams(check: AnyCheck): ValidateFunction | undefined {
  const entry = Object.hasOwn(cache.CHECK_PARAMS, check.id) ? cache.CHECK_PARAMS[check.id] : undefined;
  return entry && entry.sha256 === paramsDigest(check) ? entry.validate : undefined;
}
