import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { AnyCheck } from './checks/check.js';
import { CHECKS } from './checks/index.js';
import { readFileSync } from 'node:fs';
import { parseRuleCatalog } from '../core/rules.js';
import { RULES_PATH } from '../platform/package-paths.js';
import { cachedRules, cachedSuites, compiledParams } from './suite-cache.js';
import { loadSuites, parseBuiltinSuites } from './suite.js';

describe('the generated copy of the built-in suites (src/generated/suites.ts)', () => {
  const parsed = parseBuiltinSuites();

  it('is what parsing the YAML gives, and what loadSuites returns', () => {
    expect(cachedSuites(parsed.files)).toEqual(parsed.suites);
    expect(loadSuites().slice(0, parsed.suites.length)).toEqual(parsed.suites);
  });

  it('is a fresh copy each time: a caller that changes a suite changes no other run', () => {
    const first = cachedSuites(parsed.files)!;
    first[0]!.cases.length = 0;
    expect(cachedSuites(parsed.files)![0]!.cases.length).toBeGreaterThan(0);
  });

  it('is not used once a file differs from the one it was made from (one character, or a file more)', () => {
    const [head, ...rest] = parsed.files;
    expect(cachedSuites([{ ...head!, text: `${head!.text} ` }, ...rest])).toBeUndefined();
    expect(cachedSuites([...parsed.files, { name: 'merchant/extra', text: 'cases: []\n' }])).toBeUndefined();
    expect(cachedSuites(parsed.files.slice(1))).toBeUndefined();
  });
});

describe('the generated copy of the rule catalog', () => {
  const text = readFileSync(RULES_PATH, 'utf8');

  it('is what parsing spec/rules.yaml gives, a fresh copy each time', () => {
    expect(cachedRules(text)).toEqual(parseRuleCatalog(text));
    cachedRules(text)![0]!.severity = 'SHOULD';
    expect(cachedRules(text)).toEqual(parseRuleCatalog(text));
  });

  it('is not used once the catalog differs by one character', () => {
    expect(cachedRules(`${text}\n`)).toBeUndefined();
  });
});

describe("the checks' parameter validators compiled by npm run generate", () => {
  const fresh = new Ajv2020({ allErrors: true, strict: true });

  it('exist for every check and judge as a fresh compile does, errors included', () => {
    const samples: unknown[] = [{}, { equals: 200 }, { equals: '200' }, { unknown: 1 }, { rules: ['X'] }, []];
    for (const check of CHECKS) {
      const compiled = compiledParams(check);
      expect(compiled, check.id).toBeDefined();
      const validate = fresh.compile(structuredClone(check.params));
      for (const sample of samples) {
        expect(compiled!(sample), `${check.id} ${JSON.stringify(sample)}`).toBe(validate(sample));
        expect(compiled!.errors ?? null).toEqual(validate.errors ?? null);
      }
    }
  });

  it('are not used for a check whose schema changed since, nor for a check they do not know', () => {
    const status = CHECKS.find((check) => check.id === 'status')!;
    const changed = {
      ...status,
      params: { ...status.params, properties: { equals: { type: 'string' } } },
    } as unknown as AnyCheck;
    expect(compiledParams(changed)).toBeUndefined();
    expect(compiledParams({ ...status, id: 'no-such-check' } as AnyCheck)).toBeUndefined();
    expect(compiledParams({ ...status, id: 'toString' } as AnyCheck)).toBeUndefined();
  });
});
