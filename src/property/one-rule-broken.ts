import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { rulesOf } from '../spec/document.js';
import type { Property } from './property.js';
import { componentSchema, flatten, type SchemaNode } from './schema-arbitrary.js';
import {
  asSent,
  judgeRefused,
  seal,
  sendData,
  validCases,
  type ServiceCase,
  type ServiceEnv,
} from './service-exchange.js';

/** One way to break exactly one rule of a valid request, derived from its schema. */
interface Breakage {
  kind: 'missing' | 'mistyped' | 'wrong-literal';
  field: string;
  /** The value put in the field's place (absent for `missing`). */
  value?: ExactJson;
  rules: string[];
}

/** A valid case and the one rule it is made to break. */
interface BrokenCase {
  base: ServiceCase;
  breakage: Breakage;
}

/** The node's own x-rules, else the request schema's. */
const rulesOr = (node: SchemaNode | undefined, fallback: string[]): string[] => {
  const rules = rulesOf(node);
  return rules.length ? rules : fallback;
};

/** Values no JSON binding coerces into a string or an integer field (an object, an array). */
const UNCOERCIBLE: Arbitrary<ExactJson> = fc.constantFrom<ExactJson>({}, [], { value: 'x' }, [new LosslessNumber('1')]);

/**
 * The breakages of a case, from the schema of its endpoint: each required field missing, each
 * field typed as an object or array, each `const` given another value; an energy lease's amount
 * with a fraction (ORDER-ENERGY-AMOUNT). Open points (bounds, U-LIMITS) are not broken: refusing
 * them is not required.
 */
function breakagesOf(testCase: ServiceCase): Arbitrary<Breakage> {
  const schema = flatten(componentSchema(testCase.endpoint === 'energy' ? 'EnergyMaxCountRequest' : 'OrderRequest'));
  const properties = (schema.properties as Record<string, SchemaNode>) ?? {};
  const lease = testCase.endpoint === 'order' && testCase.plain.symbol === 'ENERGY';
  const base = testCase.endpoint === 'energy' ? ['ENERGY-REQ'] : ['ORDER-FIELDS'];
  const required = [...((schema.required as string[]) ?? []), ...(lease ? ['expiryHours'] : [])];
  const options: Arbitrary<Breakage>[] = [];
  for (const field of required) {
    const node = flatten(properties[field] ?? {});
    options.push(
      fc.constant({
        kind: 'missing' as const,
        field,
        rules: field === 'expiryHours' ? ['ORDER-EXPIRY'] : rulesOr(node, base),
      }),
    );
  }
  // Only fields the request needs: an optional one a service does not use (expiryHours on a withdrawal, ORDER-EXPIRY) may be ignored.
  for (const field of required.filter((name) => name in testCase.plain)) {
    const node = flatten(properties[field] ?? {});
    const rules = field === 'expiryHours' ? ['ORDER-EXPIRY'] : rulesOr(node, base);
    options.push(UNCOERCIBLE.map((value) => ({ kind: 'mistyped' as const, field, value, rules })));
    if ('const' in node && typeof node.const === 'number') {
      const wanted = node.const;
      options.push(
        fc
          .integer({ min: -5, max: 1000 })
          .filter((n) => n !== wanted)
          .map((n) => ({ kind: 'wrong-literal' as const, field, value: new LosslessNumber(String(n)), rules })),
      );
    }
  }
  if (lease) {
    options.push(
      fc
        .tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 99 }), fc.boolean())
        .map(([whole, fraction, asString]) => {
          const text = `${whole}.${String(fraction).padStart(2, '0').replace(/0$/, '5')}`;
          return {
            kind: 'wrong-literal' as const,
            field: 'amount',
            value: asString ? text : new LosslessNumber(text),
            rules: ['ORDER-ENERGY-AMOUNT'],
          };
        }),
    );
  }
  return fc.oneof(...options);
}

/** The case with its breakage applied. */
function applyBreakage(plain: Record<string, ExactJson>, breakage: Breakage): Record<string, ExactJson> {
  const out = { ...plain };
  if (breakage.kind === 'missing') delete out[breakage.field];
  else out[breakage.field] = breakage.value!;
  return out;
}

/**
 * Property 2: any request that breaks exactly one rule (a required field missing, a field of the
 * wrong type, a wrong literal) is refused the way the interface says, never a success, never 5xx.
 */
export function oneRuleBroken(env: ServiceEnv): Property<BrokenCase> {
  return {
    id: 'one-rule-broken',
    title: 'Any request breaking exactly one rule is refused, never a success',
    rules: ['ENERGY-REQ', 'ORDER-FIELDS', 'ORDER-TENANT-TYPE', 'ORDER-EXPIRY', 'ORDER-ENERGY-AMOUNT', 'ENV-CODE'],
    arbitrary: validCases(env.target).chain((base) => breakagesOf(base).map((breakage) => ({ base, breakage }))),
    async judge({ base, breakage }) {
      const sent = applyBreakage(asSent(env, base), breakage);
      const text = stringifyExact(sent);
      const exchange = await sendData(env, base.endpoint, seal(env, text), text);
      const what =
        breakage.kind === 'missing'
          ? `without ${breakage.field}`
          : `with ${breakage.field} = ${stringifyExact(breakage.value ?? null)} (${breakage.kind})`;
      return judgeRefused(exchange, [...breakage.rules, 'ENV-CODE'], what);
    },
  };
}
