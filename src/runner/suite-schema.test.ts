import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { findCheck } from './checks/index.js';
import { paramsProblem } from './params.js';
import { SUITES_DIR } from './suite.js';
import { paramsDef, withCheckParams } from './suite-schema.js';

const path = join(SUITES_DIR, 'suite.schema.json');
const text = readFileSync(path, 'utf8');
const shipped = JSON.parse(text) as Record<string, unknown>;
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(shipped);

/** A suite holding one request step with this one expectation. */
const suiteWith = (expectation: Record<string, unknown>) => ({
  title: 't',
  side: 'service',
  cases: [
    {
      id: 'c',
      title: 't',
      rules: ['ENERGY-PATH'],
      steps: [{ request: { endpoint: 'energy' }, expect: [expectation] }],
    },
  ],
});

describe("suites/suite.schema.json and the checks' parameter schemas", () => {
  // After changing a check's params, rewrite the file from them: npm run generate
  it("is exactly what withCheckParams makes of it: the checks' params are the source", () => {
    expect(text).toBe(`${JSON.stringify(withCheckParams(shipped), null, 2)}\n`);
  });

  it('keeps every definition it had before the parameters were added', () => {
    const defs = shipped.$defs as Record<string, unknown>;
    expect(Object.keys(defs).filter((name) => !name.startsWith('params-'))).toEqual([
      'ruleId',
      'case',
      'step',
      'control',
      'request',
      'emit',
      'deliver',
      'expectation',
      'await',
    ]);
    expect((defs[paramsDef('status')] as { required: string[] }).required).toEqual(['equals']);
  });

  it.each([
    [{ check: 'status', equals: 200, rules: ['ENERGY-PATH'], title: 'mine' }],
    [{ check: 'refused' }],
    [{ check: 'energy-floor', balance: [1000000, '870000'], costPerTx: 65000 }],
    [{ check: 'result', schema: 'OrderResult', echo: { id: 'callBackId' }, ifAccepted: true }],
  ])('accepts what the loader accepts: %j', (expectation) => {
    const { check, rules: _rules, title: _title, ...params } = expectation as Record<string, unknown>;
    expect(paramsProblem(findCheck(String(check))!, params)).toBeUndefined();
    expect(validate(suiteWith(expectation)), JSON.stringify(validate.errors)).toBe(true);
  });

  it.each([
    [{ check: 'status', equal: 200 }],
    [{ check: 'status', equals: '4o1' }],
    [{ check: 'status' }],
    [{ check: 'statuz' }],
    [{ check: 'refused', outcome: 'failure' }],
    [{ check: 'error-body', schema: 'Unauthorised' }],
    [{ check: 'energy-floor', balance: [1, -2], costPerTx: 1 }],
  ])('refuses what the loader refuses, for editors: %j', (expectation) => {
    expect(validate(suiteWith(expectation))).toBe(false);
  });
});
