/**
 * The promise for rules, as callback-type-8.test.ts makes it for callback types: a rule is one entry
 * in spec/rules.yaml (its text, severity, the party it binds) plus its id in the spec's `x-rules`
 * where the interface states it. This test adds a rule in memory, to a copy of the catalog and of
 * the spec, and follows it into what is built from them: the catalog, the spec model's rule index,
 * the docs site (the endpoint page, the rule's entry, traceability), a suite case labelled with it,
 * and the verdict of a finding under it (who it binds decides failed or warning; a SHOULD warns).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { RULES_PATH, SPEC_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { generateDocs } from '../src/generate/docs/site.js';
import { judgeFinding } from '../src/runner/verdict.js';
import { CHECKS } from '../src/runner/checks/index.js';
import { loadSuites, parseSuite } from '../src/runner/suite.js';
import { parseSpec, type SpecSource } from '../src/spec/document.js';
import { specModel } from '../src/spec/model.js';

const NEW_RULE = 'ENERGY-FRESH';
const RULE_TEXT = 'the answer reflects energy leased up to the moment of the query.';

/** The catalog with one more rule, after the energy rules. */
function catalogWithRule(severity: 'MUST' | 'SHOULD', binds: 'service' | 'merchant' | 'both'): string {
  const text = readFileSync(RULES_PATH, 'utf8');
  const entry = `  - id: ${NEW_RULE}\n    text: ${RULE_TEXT}\n    severity: ${severity}\n    binds: ${binds}\n    source: Energy capacity query\n`;
  return text.replace(/^( {2}- id: ENERGY-PATH\n)/m, `${entry}$1`);
}

/** The spec with the rule's id among the energy operation's x-rules. */
function specWithRule(): SpecSource {
  const document = parseDocument(readFileSync(SPEC_PATH, 'utf8'));
  const path = ['paths', '/api/v1/api/order/getEnergyMaxCount', 'post', 'x-rules'];
  const rules = (document.getIn(path) as { toJSON(): string[] }).toJSON();
  document.setIn(path, document.createNode([...rules, NEW_RULE], { flow: true }));
  return parseSpec(document.toString(), 'wallet-api.yaml (with a new rule)');
}

describe('a new rule: one catalog entry and its id in the spec', () => {
  const spec = specWithRule();
  const rules = parseRuleCatalog(catalogWithRule('MUST', 'service'));

  it('is in the catalog with what it says, and nowhere before it was added', () => {
    expect(rules.find((rule) => rule.id === NEW_RULE)).toMatchObject({
      id: NEW_RULE,
      text: RULE_TEXT,
      severity: 'MUST',
      binds: 'service',
    });
    expect(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).some((rule) => rule.id === NEW_RULE)).toBe(false);
  });

  it("is in the spec model's rules of the energy operation", () => {
    const endpoint = specModel(spec).endpoint('getEnergyMaxCount');
    expect(endpoint, 'the energy operation').toBeDefined();
    expect(endpoint!.rules).toContain(NEW_RULE);
    expect(
      specModel(parseSpec(readFileSync(SPEC_PATH, 'utf8'), 'wallet-api.yaml')).endpoint('getEnergyMaxCount')!.rules,
    ).not.toContain(NEW_RULE);
  });

  it('gets its text on the endpoint page of the docs site and a row in the traceability table, with no check yet', () => {
    const key = parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' }) as RsaPrivateKey;
    const files = new Map(
      generateDocs(spec, rules, loadSuites(), { checks: CHECKS, demo: { key } }).map((file) => [
        file.path,
        file.contents,
      ]),
    );
    const pages = [...files.entries()].filter(([, contents]) => contents.includes(NEW_RULE));
    expect(pages.map(([path]) => path)).toEqual(
      expect.arrayContaining([expect.stringMatching(/energy/i), expect.stringMatching(/traceability/)]),
    );
    expect(pages.some(([, contents]) => contents.includes(RULE_TEXT.replace(/\.$/, '')))).toBe(true);
    const row = files
      .get([...files.keys()].find((path) => /traceability/.test(path) && path.endsWith('.md'))!)!
      .split('\n')
      .find((line) => line.includes(NEW_RULE));
    expect(row, 'its traceability row').toBeDefined();
    // Its severity, and the gap said out loud: no suite case checks it yet.
    expect(row).toContain('**MUST**');
    expect(row).toContain('**no check**');
    expect(files.get('rules.md')).toContain(RULE_TEXT.replace(/\.$/, ''));
  });

  it('labels a suite case, which the loader accepts', () => {
    const suite = parseSuite(
      `title: Energy freshness\nside: service\ncases:\n  - id: fresh\n    title: fresh\n    rules: [${NEW_RULE}]\n    steps:\n      - request: { endpoint: getEnergyMaxCount }\n        expect:\n          - check: status\n            equals: 200\n`,
      'service/energy-fresh',
    );
    expect(suite.cases[0]!.rules).toEqual([NEW_RULE]);
  });

  it('judges a finding under it by what it binds and how strongly', () => {
    const finding = { status: 'failed' as const, message: 'the count did not move after a lease', rules: [NEW_RULE] };
    const must = new Map(rules.map((rule) => [rule.id, rule]));
    expect(judgeFinding(finding, [], must, false, 'service').status).toBe('failed');
    const other = judgeFinding(finding, [], must, false, 'merchant');
    expect(other.status).toBe('warning');
    const should = new Map(parseRuleCatalog(catalogWithRule('SHOULD', 'both')).map((rule) => [rule.id, rule]));
    expect(judgeFinding(finding, [], should, false, 'service').status).toBe('warning');
    expect(judgeFinding(finding, [], should, true, 'service').status).toBe('failed');
  });
});
