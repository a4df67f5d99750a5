import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES_PATH } from '../core/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { findCheck } from './checks/index.js';
import { loadSuites, matchesGlob, parseShard, selectSuites } from './suite.js';
import { fill } from './template.js';

const suites = loadSuites();

describe('built-in suites', () => {
  it('load and validate against suites/suite.schema.json, on both sides', () => {
    expect(new Set(suites.map((s) => s.side))).toEqual(new Set(['service', 'merchant']));
  });

  it('name only registered checks and catalogued rule ids', () => {
    const ids = new Set(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((r) => r.id));
    for (const suite of suites) for (const c of suite.cases) {
      for (const id of c.rules) expect(ids.has(id), `${suite.name}/${c.id}: ${id}`).toBe(true);
      for (const step of c.steps) for (const e of step.expect ?? []) {
        expect(findCheck(e.check), `${suite.name}/${c.id}: ${e.check}`).toBeDefined();
        for (const id of e.rules ?? []) expect(ids.has(id), `${suite.name}/${c.id}: ${id}`).toBe(true);
      }
    }
  });

  it('enforce every MUST and SHOULD rule with at least one check, unless the catalog says it is not black-box', () => {
    const cited = new Set<string>();
    for (const suite of suites) for (const c of suite.cases) for (const step of c.steps) for (const e of step.expect ?? []) for (const id of e.rules ?? c.rules) cited.add(id);
    const uncovered = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).filter((r) => r.severity !== 'UNSPECIFIED' && r.blackBox && !cited.has(r.id));
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
    const shards = [1, 2, 3].map((index) => selectSuites(suites, { shard: { index, total: 3 } }).flatMap((s) => s.cases.map((c) => `${s.name}/${c.id}`)));
    expect(shards.flat().length).toBe(total);
    expect(new Set(shards.flat()).size).toBe(total);
    expect(() => parseShard('0/2')).toThrow(/--shard/);
  });
});

describe('templates', () => {
  it('fill ids, numbers and exact decimals', () => {
    const filled = fill({ a: '{{userId}}', b: '{{userIdText}}', c: 'x-{{id}}', d: '#decimal:12345678901234567890.123', e: '{{long:3}}' }, { userId: 7, caseId: 'c1', saved: {} }) as Record<string, unknown>;
    expect(filled.a).toBe(7);
    expect(filled.b).toBe('7');
    expect(filled.c).toBe('x-c1');
    expect(String(filled.d)).toBe('12345678901234567890.123');
    expect(filled.e).toBe('LLL');
  });
});
