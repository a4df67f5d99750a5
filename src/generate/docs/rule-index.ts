import type { Rule } from '../../core/rules.js';
import type { DocsCheck, DocsSuite } from './options.js';

/** One case expectation that judges a rule: rule → check → suite/case. */
interface Coverage {
  check: string;
  suite: string;
  caseId: string;
  caseTitle: string;
}

/** The rule catalog, the registered checks and which suite cases judge each rule. */
export interface RuleIndex {
  rules: Rule[];
  ruleById: Map<string, Rule>;
  ruleIds: Set<string>;
  checks: Map<string, DocsCheck>;
  /** rule → every (check, suite, case) that judges it. */
  coverage: Map<string, Coverage[]>;
}

/** Indexes the catalog by id, the checks by id and the suites' expectations by rule. */
export function indexRules(rules: Rule[], checks: readonly DocsCheck[], suites: readonly DocsSuite[]): RuleIndex {
  return {
    rules,
    ruleById: new Map(rules.map((rule) => [rule.id, rule])),
    ruleIds: new Set(rules.map((rule) => rule.id)),
    checks: new Map(checks.map((check) => [check.id, check])),
    coverage: coverageOf(suites),
  };
}

/** rule → every (check, suite, case) that judges it, as the engine attributes results. */
function coverageOf(suites: readonly DocsSuite[]): Map<string, Coverage[]> {
  const coverage = new Map<string, Coverage[]>();
  const seen = new Set<string>();
  for (const suite of suites) {
    for (const testCase of suite.cases) {
      for (const step of testCase.steps) {
        for (const expectation of step.expect ?? []) {
          // The engine's attribution: an expectation's rules, else its case's.
          for (const rule of expectation.rules ?? testCase.rules) {
            const key = `${rule}\u0000${expectation.check}\u0000${suite.name}\u0000${testCase.id}`;
            if (seen.has(key)) continue;
            seen.add(key);
            coverage.set(rule, [
              ...(coverage.get(rule) ?? []),
              { check: expectation.check, suite: suite.name, caseId: testCase.id, caseTitle: testCase.title },
            ]);
          }
        }
      }
    }
  }
  return coverage;
}
