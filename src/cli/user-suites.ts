import { ConfigError } from '../core/errors.js';
import type { Rule } from '../core/rules.js';
import { loadSuites, type Suite } from '../runner/suite.js';

/**
 * The built-in suites plus the user's own (`--suites DIR`, repeatable), each validated against
 * suites/suite.schema.json and held to what the built-in ones are: every expectation names a
 * registered check with the parameters its schema declares (the loader refuses anything else with
 * the file and the line) and every rule id is in the catalog (a report names only known rules).
 *
 * @example loadAllSuites(['my-suites'], loadRules()).map((s) => s.name) // [..., 'service/my-energy']
 */
export function loadAllSuites(dirs: readonly string[], rules: readonly Rule[]): Suite[] {
  const suites = loadSuites(undefined, dirs);
  if (dirs.length === 0) return suites;
  const known = new Set(rules.map((rule) => rule.id));
  for (const suite of suites) {
    for (const c of suite.cases) {
      const where = `suite ${suite.name}, case ${c.id}`;
      for (const id of c.rules)
        if (!known.has(id)) throw new ConfigError('bad-suite', `${where}: rule ${id} is not in the rule catalog`);
      for (const step of c.steps) {
        for (const expectation of step.expect ?? []) {
          for (const id of expectation.rules ?? [])
            if (!known.has(id)) throw new ConfigError('bad-suite', `${where}: rule ${id} is not in the rule catalog`);
        }
      }
    }
  }
  return suites;
}
