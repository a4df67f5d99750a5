import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { AnyCheck, Observation } from './checks/check.js';
import { CHECKS, findCheck } from './checks/index.js';
import { STEP_KINDS, stepKindOf, type StepKindName } from './step-kinds.js';
import type { Expectation, Step } from './model.js';
import { compiledParams } from './suite-cache.js';

/** Why an expectation's parameters do not fit its check: one line, and the parameter it is about. */
interface ParamsProblem {
  message: string;
  /** The parameter at fault; absent when one is missing (the expectation itself is at fault). */
  param?: string;
}

/** How each check's parameter schema is compiled, here and by `npm run generate` (src/generated/suites.ts). */
export const PARAMS_AJV_OPTIONS = { allErrors: true, strict: true } as const;

// Built on first use (an Ajv instance costs milliseconds to make); each check's schema is compiled
// once, when an expectation naming it is first checked.
let ajv: Ajv2020 | undefined;
let coercing: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();
const compiledCoercing = new Map<string, ValidateFunction>();

function validatorOf(
  check: AnyCheck,
  cache = compiled,
  compiler = () => (ajv ??= new Ajv2020(PARAMS_AJV_OPTIONS)),
): ValidateFunction {
  let validate = cache.get(check.id);
  if (!validate) {
    // Compiled by `npm run generate` while the schema is unchanged; the coercing ones are rare (loading YAML).
    validate = (cache === compiled ? compiledParams(check) : undefined) ?? compiler().compile(check.params);
    cache.set(check.id, validate);
  }
  return validate;
}

/**
 * Suite files written before parameters were typed may quote a whole number (`equals: "401"`); those
 * ran then, so the loader reads them as the number now. Only whole-number text where the check's
 * schema takes a number is changed, and only when that makes the parameters valid; anything else is
 * left for `paramsProblem` to refuse.
 *
 * @example const e = { check: 'status', equals: '401' }; numbersFromText(e); e.equals // 401
 */
export function numbersFromText(expectation: Record<string, unknown>): void {
  const check = findCheck(String(expectation.check));
  if (!check) return;
  const { check: _id, rules: _rules, title: _title, ...given } = expectation;
  const params: Record<string, unknown> = given;
  if (validatorOf(check)({ ...params })) return;
  const copy: Record<string, unknown> = structuredClone(params);
  if (
    !validatorOf(
      check,
      compiledCoercing,
      () => (coercing ??= new Ajv2020({ ...PARAMS_AJV_OPTIONS, coerceTypes: true })),
    )(copy)
  )
    return;
  const changed = Object.entries(copy).filter(
    ([name, value]) =>
      typeof value === 'number' &&
      typeof params[name] === 'string' &&
      /^-?(0|[1-9][0-9]*)$/.test(params[name] as string),
  );
  const next = { ...params, ...Object.fromEntries(changed) };
  if (!validatorOf(check)(next)) return;
  for (const [name, value] of changed) expectation[name] = value;
}

/** A value as a suite author wrote it, short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** The value at a JSON pointer below `root`. */
function at(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split('/').slice(1))
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

/** ajv's words for one failed keyword, made to read as the end of "parameter X …". */
function wording(error: ErrorObject, siblings: readonly ErrorObject[]): string {
  switch (error.keyword) {
    case 'type':
      return `must be ${/^[aeiou]/.test(String(error.params.type)) ? 'an' : 'a'} ${String(error.params.type)}`;
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'anyOf': {
      // The alternatives' own complaints at the same place say what would have been accepted.
      const own = siblings.filter(
        (other) => other !== error && other.instancePath === error.instancePath && other.keyword !== 'anyOf',
      );
      const words = [...new Set(own.map((other) => wording(other, [])))];
      if (words.length === 0) return 'has none of the accepted forms';
      const alike = words.every((word) => word.startsWith('must be '));
      const parts = alike ? words.map((word) => word.slice('must be '.length)) : words;
      const joined = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}` : parts[0]!;
      return alike ? `must be ${joined}` : joined;
    }
    default:
      return error.message ?? `breaks ${error.keyword}`;
  }
}

/**
 * Checks an expectation's parameters (`check`, `rules` and `title` taken out) against its check's
 * schema: an unknown parameter first (a typo is the likely cause of the rest), then a missing one,
 * then a mistyped one. Templates are not filled yet: the schema judges what the suite file says.
 *
 * @example paramsProblem(statusCheck, { equal: 200 }) // { message: 'unknown parameter "equal" (known: equals)', param: 'equal' }
 */
export function paramsProblem(check: AnyCheck, params: Record<string, unknown>): ParamsProblem | undefined {
  const known = Object.keys(check.params.properties);
  const unknown = Object.keys(params).find((name) => !known.includes(name));
  if (unknown !== undefined)
    return {
      message: `unknown parameter ${JSON.stringify(unknown)} (${known.length ? `known: ${known.join(', ')}` : 'it takes none'})`,
      param: unknown,
    };
  const validate = validatorOf(check);
  if (validate(params)) return undefined;
  const errors = validate.errors ?? [];
  const missing = errors.find((error) => error.keyword === 'required');
  if (missing) return { message: `parameter ${JSON.stringify(String(missing.params.missingProperty))} is missing` };
  // The innermost value at fault (an item of a list rather than the list), and there an anyOf's own
  // complaint, which names every accepted form, rather than one of its alternatives'.
  const error = [...errors].sort(
    (a, b) =>
      b.instancePath.split('/').length - a.instancePath.split('/').length ||
      Number(b.keyword === 'anyOf') - Number(a.keyword === 'anyOf'),
  )[0]!;
  const [, param = '', ...inner] = error.instancePath.split('/');
  const place = inner.length ? ` at /${inner.join('/')}` : '';
  return {
    message: `parameter ${JSON.stringify(param)}${place} ${wording(error, errors)}, not ${shown(at(params, error.instancePath))}`,
    param,
  };
}

const OBSERVATIONS: Record<Observation, string> = {
  exchange: 'requests and answers',
  callbacks: 'received callbacks',
  probe: "the probe's processed list",
};

/** The step kinds that produce an observation, for a message: `emit and await`. */
function producers(observation: Observation): string {
  const kinds = (Object.keys(STEP_KINDS) as StepKindName[]).filter((kind) =>
    STEP_KINDS[kind].produces.includes(observation),
  );
  return kinds.length > 1 ? `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}` : (kinds[0] ?? 'no');
}

/**
 * Why an expectation cannot be judged on its step, whatever the target does: no check of that name,
 * a check judging what the step's kind does not produce (`Check.needs`), or parameters its schema
 * refuses. The loader names the file and line; the engine reports a hand-built suite's as a suite error.
 *
 * @example expectationProblem({ check: 'status', equal: 200 }, { request: { endpoint: 'energy' } })?.message // 'unknown parameter "equal" (known: equals)'
 */
export function expectationProblem(
  expectation: Expectation,
  step: Step,
): (ParamsProblem & { check?: AnyCheck }) | undefined {
  const check = findCheck(expectation.check);
  if (!check)
    return {
      message: `no check named ${JSON.stringify(expectation.check)} (known: ${CHECKS.map((known) => known.id).join(', ')})`,
      param: 'check',
    };
  const kind = stepKindOf(step);
  if (kind && !STEP_KINDS[kind].produces.includes(check.needs)) {
    return {
      message: `it judges ${OBSERVATIONS[check.needs]}, which ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} step does not produce (${producers(check.needs)} steps do)`,
      param: 'check',
      check,
    };
  }
  const { check: _id, rules: _rules, title: _title, ...params } = expectation;
  const problem = paramsProblem(check, params);
  return problem ? { ...problem, check } : undefined;
}
