import type { AnyCheck } from './checks/check.js';
import { CHECKS } from './checks/index.js';

type Json = Record<string, unknown>;

/** The `$defs` name of a check's parameters in suites/suite.schema.json. */
export const paramsDef = (id: string): string => `params-${id}`;

/**
 * suites/suite.schema.json with every check's parameters in it, for editors and the user's own
 * tooling: `$defs.expectation` names the registered checks and, per check id (`if`/`then`),
 * `$defs.params-<id>`: the check's `params` schema beside `check`, `rules` and `title`. The
 * parameters are the checks' (code); the shipped file is this function's output, and a unit test
 * fails when they drift apart. Applying it again changes nothing.
 *
 * @example withCheckParams(shipped).$defs['params-status'].required // ['equals']
 */
export function withCheckParams(schema: Json, checks: readonly AnyCheck[] = CHECKS): Json {
  const defs = Object.fromEntries(
    Object.entries((schema.$defs ?? {}) as Json).filter(([name]) => !name.startsWith('params-')),
  );
  const expectation = (defs.expectation ?? {}) as Json;
  const properties = (expectation.properties ?? {}) as Json;
  defs.expectation = {
    ...expectation,
    properties: {
      ...properties,
      check: {
        type: 'string',
        enum: checks.map((check) => check.id),
        description: 'a registered check (src/runner/checks); its parameters sit beside it',
      },
    },
    allOf: checks.map((check) => ({
      if: { properties: { check: { const: check.id } }, required: ['check'] },
      then: { $ref: `#/$defs/${paramsDef(check.id)}` },
    })),
  };
  for (const check of checks) {
    defs[paramsDef(check.id)] = {
      description: `parameters of the check ${check.id} (${check.title}; rules ${check.rules.join(', ')})`,
      type: 'object',
      properties: { check: true, rules: true, title: true, ...check.params.properties },
      ...(check.params.required.length ? { required: [...check.params.required] } : {}),
      additionalProperties: false,
    };
  }
  return { ...schema, $defs: defs };
}
