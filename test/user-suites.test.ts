// `--suites DIR`: a user's own suite files run with the built-in ones and are held to the same
// schema and the same checks; a bad file is one line naming it and exit 2, before any target starts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAllSuites } from '../src/cli/user-suites.js';
import { loadRules } from '../src/cli/report-output.js';
import { ROOT, runCli } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-user-suites-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A folder holding one suite file with `body` as its only case (the suite header is fixed). */
function folder(name: string, cases: string, file = 'mine.yaml'): string {
  const path = join(dir, name);
  mkdirSync(join(path, file, '..'), { recursive: true });
  writeFileSync(
    join(path, file),
    `# yaml-language-server: $schema=../node_modules/wallet-conformance/suites/suite.schema.json\ntitle: Mine\nside: service\ncases:\n${cases}`,
  );
  return path;
}

const CASE = (check: string, rule: string) => `  - id: one
    title: One energy query
    rules: [${rule}]
    steps:
      - request: { endpoint: energy, plain: { symbol: ENERGY, chainName: TRON } }
        expect:
          - { check: ${check} }
`;

describe('--suites DIR', () => {
  it('adds the folder suites, named by their path inside it, after the built-in ones', () => {
    const good = folder('good', CASE('status, equals: 200', 'ENERGY-PATH'), 'nested/extra.yaml');
    const suites = loadAllSuites([good], loadRules());
    expect(suites.at(-1)).toMatchObject({ name: 'nested/extra', side: 'service', cases: [{ id: 'one' }] });
    expect(suites.some((suite) => suite.name === 'service/energy')).toBe(true);
  });

  it.each([
    ['a folder that does not exist', () => join(dir, 'nowhere'), /cannot read suites folder .*nowhere: no such folder/],
    [
      'a folder without suite files',
      () => (mkdirSync(join(dir, 'empty')), join(dir, 'empty')),
      /suites folder .*empty holds no \.yaml or \.yml file/,
    ],
    [
      'a file the schema refuses',
      () => folder('schema', '  - id: one\n    title: t\n    rules: [ENERGY-PATH]\n    stepz: []\n'),
      /suite .*schema\/mine\.yaml: .*\(suites\/suite\.schema\.json\)/,
    ],
    [
      'a check that does not exist',
      () => folder('check', CASE('statuz', 'ENERGY-PATH')),
      /check\/mine\.yaml:11: case "one": no check named "statuz" \(known: status, /,
    ],
    [
      "a typo in a check's parameter",
      () => folder('param', CASE('status, equal: 200', 'ENERGY-PATH')),
      /param\/mine\.yaml:11: case "one" expects status: unknown parameter "equal" \(known: equals\)/,
    ],
    [
      'a check of what its step does not produce',
      () => folder('needs', CASE('processed, count: "1"', 'CB-ONCE')),
      /needs\/mine\.yaml:11: case "one" expects processed: it judges the probe's processed list, which a request step does not produce \(deliver steps do\)/,
    ],
    [
      'a parameter of the wrong type',
      () => folder('typed', CASE('status, equals: "2OO"', 'ENERGY-PATH')),
      /typed\/mine\.yaml:11: case "one" expects status: parameter "equals" must be an integer, not "2OO"/,
    ],
    [
      'a rule id that is not in the catalog',
      () => folder('rule', CASE('status, equals: 200', 'ENERGY-PATHS')),
      /suite mine, case one: rule ENERGY-PATHS is not in the rule catalog/,
    ],
    [
      'a suite name the built-in suites use',
      () => folder('clash', CASE('status, equals: 200', 'ENERGY-PATH'), 'service/energy.yaml'),
      /suite service\/energy of .*clash: a suite of that name is loaded already/,
    ],
  ])('refuses %s with one line and exit 2, before starting anything', (_, make, message) => {
    const run = runCli(['run', '--suites', make(), '--reports', join(dir, 'reports')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).not.toContain('emulator http');
  });

  it('exports the suite schema as wallet-conformance/suite.schema.json, for editors and your own tooling', () => {
    const path = createRequire(join(ROOT, 'package.json')).resolve('wallet-conformance/suite.schema.json');
    expect(path).toBe(join(ROOT, 'suites', 'suite.schema.json'));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({
      title: 'wallet-conformance suite',
      required: ['title', 'side', 'cases'],
    });
  });
});
