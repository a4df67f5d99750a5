import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { Rule } from '../core/rules.js';
import { componentSchemas, type SpecSource } from '../spec/document.js';
import { specModel } from '../spec/model.js';
import { createAjv, schemaBundle } from './codegen/validators.js';

/** One problem found in the spec. */
interface LintProblem {
  severity: 'error' | 'warning';
  /** `openapi` for the OpenAPI 3.1 validator, `toolkit` for our own rules. */
  source: 'openapi' | 'toolkit';
  /** JSON pointer into the spec, when known. */
  pointer: string;
  message: string;
}

const DIRECTIONS = new Set(['request', 'response', 'callback']);

/** Redocly's structural validation of OpenAPI 3.1 plus its recommended rules. */
export async function lintOpenApi(spec: SpecSource): Promise<LintProblem[]> {
  const config = await createConfig({
    extends: ['recommended'],
    rules: {
      'info-license': 'off',
      'info-license-url': 'off',
      'security-defined': 'off',
      // Plain payload schemas are reached through x-encrypted, which Redocly does not follow.
      'no-unused-components': 'off',
      // Redocly closes example objects (unevaluatedProperties) and then misjudges if/then; ajv
      // validates every example against the real schema in lintToolkitRules instead.
      'no-invalid-schema-examples': { severity: 'warn', allowAdditionalProperties: true },
    } as never,
  });
  const problems = await lintFromString({ source: spec.text, absoluteRef: spec.name, config });
  return problems.map((problem) => ({
    severity: problem.severity === 'error' ? 'error' : 'warning',
    source: 'openapi',
    pointer: problem.location[0]?.pointer ?? '',
    message: `${problem.ruleId}: ${problem.message}`,
  }));
}

/**
 * The toolkit's own rules: every encrypted string names the schema of its plain form, every cited
 * rule id exists, every MUST rule is cited, every schema has examples and they validate.
 */
export function lintToolkitRules(spec: SpecSource, rules: Rule[]): LintProblem[] {
  const problems: LintProblem[] = [];
  const error = (pointer: string, message: string) =>
    problems.push({ severity: 'error', source: 'toolkit', pointer, message });
  const known = new Set(rules.map((rule) => rule.id));
  const cited = new Set<string>();
  const model = specModel(spec);
  const schemaNames = new Set(model.schemaNames());

  for (const { pointer, rules: ids, unspecified, encrypted } of model.annotations()) {
    if (ids !== undefined) {
      if (!Array.isArray(ids) || ids.length === 0) error(pointer, 'x-rules must be a non-empty list of rule ids');
      else {
        for (const id of ids.map(String)) {
          if (known.has(id)) cited.add(id);
          else error(pointer, `x-rules cites ${id}, which is not in the rule catalog`);
        }
      }
    }
    if (unspecified !== undefined) {
      for (const entry of Array.isArray(unspecified) ? unspecified : [unspecified]) {
        const id = String((entry as { rule?: unknown })?.rule ?? '');
        if (known.has(id)) cited.add(id);
        else error(pointer, `x-unspecified names ${id || 'no rule'}, which is not in the rule catalog`);
      }
    }
    if (encrypted !== undefined) {
      if (!DIRECTIONS.has(encrypted.direction))
        error(pointer, `x-encrypted.direction must be request, response or callback`);
      const ref = encrypted.plaintextRef ?? '';
      const target = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1];
      if (!target || !schemaNames.has(target))
        error(pointer, `x-encrypted.plaintext must $ref an existing component schema, not ${JSON.stringify(ref)}`);
    }
  }
  for (const rule of rules) {
    if (rule.severity !== 'UNSPECIFIED' && !cited.has(rule.id))
      error('', `rule ${rule.id} (${rule.severity}) is not cited by any x-rules in the spec`);
  }

  const ajv = createAjv();
  ajv.addSchema(schemaBundle(spec));
  for (const [name, schema] of componentSchemas(spec)) {
    const examples = schema.examples;
    const pointer = `/components/schemas/${name}`;
    if (!Array.isArray(examples) || examples.length === 0) {
      problems.push({ severity: 'warning', source: 'toolkit', pointer, message: `schema ${name} has no examples` });
      continue;
    }
    const validate = ajv.getSchema(`wallet-api#/$defs/${name}`);
    examples.forEach((example, i) => {
      if (validate && !validate(example)) {
        error(
          `${pointer}/examples/${i}`,
          `example ${i} of ${name} does not validate: ${ajv.errorsText(validate.errors)}`,
        );
      }
    });
  }
  return problems;
}
