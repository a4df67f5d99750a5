import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { CHECKS, findCheck } from './checks/index.js';
import { loadSuites, matchesGlob, parseShard, parseSuite, selectSuites } from './suite.js';
import { fill } from './template.js';

const suites = loadSuites();
const CHECKS_LIST = CHECKS.map((check) => check.id).join(', ');

describe('built-in suites', () => {
  it('load and validate against suites/suite.schema.json, on both sides', () => {
    expect(new Set(suites.map((s) => s.side))).toEqual(new Set(['service', 'merchant']));
  });

  it('name only registered checks and catalogued rule ids', () => {
    const ids = new Set(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((r) => r.id));
    for (const suite of suites)
      for (const c of suite.cases) {
        for (const id of c.rules) expect(ids.has(id), `${suite.name}/${c.id}: ${id}`).toBe(true);
        for (const step of c.steps)
          for (const e of step.expect ?? []) {
            expect(findCheck(e.check), `${suite.name}/${c.id}: ${e.check}`).toBeDefined();
            for (const id of e.rules ?? []) expect(ids.has(id), `${suite.name}/${c.id}: ${id}`).toBe(true);
          }
      }
  });

  it('enforce every MUST and SHOULD rule with at least one check, unless the catalog says it is not black-box', () => {
    const cited = new Set<string>();
    for (const suite of suites)
      for (const c of suite.cases)
        for (const step of c.steps)
          for (const e of step.expect ?? []) for (const id of e.rules ?? c.rules) cited.add(id);
    const uncovered = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).filter(
      (r) => r.severity !== 'UNSPECIFIED' && r.blackBox && !cited.has(r.id),
    );
    expect(uncovered.map((r) => r.id)).toEqual([]);
  });
});

describe('selection', () => {
  it('matches globs on the suite name or its last segment', () => {
    expect(matchesGlob('service/energy', 'service/*')).toBe(true);
    expect(matchesGlob('merchant/idempotency', '*idem*')).toBe(true);
    expect(matchesGlob('service/energy', 'merchant/**')).toBe(false);
  });

  it('splits cases into disjoint shards that cover every case', () => {
    const total = suites.reduce((n, s) => n + s.cases.length, 0);
    const shards = [1, 2, 3].map((index) =>
      selectSuites(suites, { shard: { index, total: 3 } }).flatMap((s) => s.cases.map((c) => `${s.name}/${c.id}`)),
    );
    expect(shards.flat().length).toBe(total);
    expect(new Set(shards.flat()).size).toBe(total);
    expect(() => parseShard('0/2')).toThrow(/--shard/);
  });
});

describe('templates', () => {
  it('fill ids, numbers and exact decimals', () => {
    const filled = fill(
      { a: '{{userId}}', b: '{{userIdText}}', c: 'x-{{id}}', d: '#decimal:12345678901234567890.123', e: '{{long:3}}' },
      { userId: 7, caseId: 'c1', saved: {} },
    ) as Record<string, unknown>;
    expect(filled.a).toBe(7);
    expect(filled.b).toBe('7');
    expect(filled.c).toBe('x-c1');
    expect(String(filled.d)).toBe('12345678901234567890.123');
    expect(filled.e).toBe('LLL');
  });

  it('fill fresh decimal digits, kept a string (a digits-only callBackId stays one)', () => {
    const scope = { caseId: 'c1', saved: {} };
    const one = fill('000{{digits:12}}', scope);
    expect(one).toMatch(/^000\d{12}$/);
    expect(fill('{{digits:20}}', scope)).toMatch(/^\d{20}$/);
    expect(fill('000{{digits:12}}', scope)).not.toBe(one);
  });
});

/** A suite whose one case `floor` has a request step (line 8) with `expect` items from line 10 on. */
const SUITE = (expect: string, step = '      - request: { endpoint: energy }') => `title: t
side: service
cases:
  - id: floor
    title: energy floor
    rules: [ENERGY-FLOOR]
    steps:
${step}
        expect:
${expect}
`;

/** The message of what `run` throws. */
function thrown(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  return 'nothing was thrown';
}

describe('expectations the loader refuses, with the file, the case and the line', () => {
  it.each([
    [
      'a typo in a parameter name',
      SUITE('          - { check: status, equals: 200 }\n          - { check: status, equal: 200 }'),
      'suites/x.yaml:11: case "floor" expects status: unknown parameter "equal" (known: equals)',
    ],
    [
      'a parameter on its own line, named at that line',
      SUITE('          - check: status\n            title: mine\n            equals: 200\n            equls: 200'),
      'suites/x.yaml:13: case "floor" expects status: unknown parameter "equls" (known: equals)',
    ],
    [
      'a mistyped value, named at its line',
      SUITE('          - check: status\n            equals: "4o1"'),
      'suites/x.yaml:11: case "floor" expects status: parameter "equals" must be an integer, not "4o1"',
    ],
    [
      'a fractional number as text',
      SUITE('          - { check: status, equals: "401.5" }'),
      'suites/x.yaml:10: case "floor" expects status: parameter "equals" must be an integer, not "401.5"',
    ],
    [
      'a missing parameter, named at its expectation',
      SUITE('          - { check: energy-floor, balance: 1 }'),
      'suites/x.yaml:10: case "floor" expects energy-floor: parameter "costPerTx" is missing',
    ],
    [
      'a check that does not exist',
      SUITE('          - { check: statuz, equals: 200 }'),
      `suites/x.yaml:10: case "floor": no check named "statuz" (known: ${CHECKS_LIST})`,
    ],
    [
      'a check of what the step does not produce',
      SUITE('          - { check: callback-raw-body }'),
      'suites/x.yaml:10: case "floor" expects callback-raw-body: it judges received callbacks, which a request step does not produce (emit and await steps do)',
    ],
    [
      'a probe check on a restart step',
      SUITE('          - { check: processed, count: 1 }', '      - restart: true'),
      'suites/x.yaml:10: case "floor" expects processed: it judges the probe\'s processed list, which a restart step does not produce (deliver steps do)',
    ],
    [
      'a parameter the check does not take',
      SUITE('          - { check: refused, outcome: failure }'),
      'suites/x.yaml:10: case "floor" expects refused: unknown parameter "outcome" (it takes none)',
    ],
  ])('refuses %s', (_label, text, message) => {
    expect(thrown(() => parseSuite(text, 'x', 'suites/x.yaml'))).toBe(message);
  });

  it('reads a whole number written as text as the number, as suites written before typed parameters ran', () => {
    const suite = parseSuite(
      SUITE('          - { check: status, equals: "401" }\n          - { check: answers, status: "200" }'),
      'x',
      'suites/x.yaml',
    );
    expect(suite.cases[0]!.steps[0]!.expect).toEqual([
      { check: 'status', equals: 401 },
      { check: 'answers', status: 200 },
    ]);
  });

  it('names a suite given without a file by its name', () => {
    expect(() => parseSuite(SUITE('          - { check: status, equal: 200 }'), 'service/mine')).toThrow(
      'suite service/mine:10: case "floor" expects status: unknown parameter "equal" (known: equals)',
    );
  });

  it('names a case without an id by its position', () => {
    const text =
      'title: t\nside: service\ncases:\n  - { id: ok, title: t, rules: [ENERGY-PATH], steps: [{ request: { endpoint: energy } }] }\n  - title: t\n    steps:\n      - request: { endpoint: energy }\n        expect: [{ check: status, equal: 200 }]\n';
    expect(() => parseSuite(text, 'x', 'x.yaml')).toThrow(
      'x.yaml:8: case "#2" expects status: unknown parameter "equal" (known: equals)',
    );
  });

  it('keeps YAML errors and schema errors as they were', () => {
    expect(() => parseSuite('title: [', 'x')).toThrow(/^suite x: not valid YAML: /);
    expect(() =>
      parseSuite(SUITE('          - { check: status, equals: 200 }').replace('steps:', 'stepz:'), 'x'),
    ).toThrow(/^suite x: \/cases\/0 .+ \(suites\/suite\.schema\.json\)$/);
  });

  const dir = mkdtempSync(join(tmpdir(), 'wc-suite-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names a user suite by the path of its file (--suites DIR)', () => {
    mkdirSync(join(dir, 'service'));
    writeFileSync(join(dir, 'service', 'mine.yaml'), SUITE('          - { check: status, equal: 200 }'));
    expect(() => loadSuites(undefined, [dir])).toThrow(
      `${join(dir, 'service', 'mine.yaml')}:10: case "floor" expects status: unknown parameter "equal" (known: equals)`,
    );
  });
});

describe('another main folder than the built-in one (docs --suites DIR)', () => {
  it('names its files by the path given, not by one relative to the package', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-suite-main-'));
    try {
      writeFileSync(join(dir, 'x.yaml'), SUITE('          - { check: status, equal: 200 }'));
      expect(thrown(() => loadSuites(dir))).toBe(
        `${join(dir, 'x.yaml')}:10: case "floor" expects status: unknown parameter "equal" (known: equals)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
