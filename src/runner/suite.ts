import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';
import { derivedSuites } from './derive/index.js';
import { expectationProblem, numbersFromText } from './params.js';
import { cachedSuites, type SuiteText } from './suite-cache.js';
import type { Expectation, Step, Suite } from './model.js';

/** The folder of the built-in suites and their schema. */
export const SUITES_DIR = join(PACKAGE_ROOT, 'suites');

export type { Step, Suite } from './model.js';

let validateSuite: ReturnType<Ajv2020['compile']> | undefined;

function suiteValidator(): ReturnType<Ajv2020['compile']> {
  if (!validateSuite) {
    const schema = JSON.parse(readFileSync(join(SUITES_DIR, 'suite.schema.json'), 'utf8')) as Record<string, unknown>;
    validateSuite = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  }
  return validateSuite;
}

/**
 * Parses and validates one suite file; a bad suite is a ConfigError naming the file and the place.
 * An expectation its check cannot take (an unknown check, an unknown or mistyped parameter, a check
 * of what its step does not produce) is named by file and line: `suites/x.yaml:42: case "floor"
 * expects status: unknown parameter "equal" (known: equals)`; `file` defaults to `suite NAME`.
 */
export function parseSuite(text: string, name: string, file = `suite ${name}`): Suite {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, lineCounter: lines });
  const yamlError = doc.errors[0];
  if (yamlError)
    throw new ConfigError('bad-suite', `suite ${name}: not valid YAML: ${yamlError.message.split('\n')[0]}`);
  const data: unknown = doc.toJS();
  checkExpectations(data, doc, lines, file);
  const validate = suiteValidator();
  if (!validate(data)) {
    const first = validate.errors?.[0];
    throw new ConfigError(
      'bad-suite',
      `suite ${name}: ${first?.instancePath || '(root)'} ${first?.message ?? 'is invalid'} (suites/suite.schema.json)`,
    );
  }
  const suite = data as Omit<Suite, 'name'>;
  const ids = new Set<string>();
  for (const c of suite.cases) {
    if (ids.has(c.id)) throw new ConfigError('bad-suite', `suite ${name}: case id ${c.id} is used twice`);
    ids.add(c.id);
  }
  return { name, ...suite };
}

/** The node at `path` in the document, or its nearest ancestor that is there (an alias hides the rest). */
function lineOf(doc: Document, lines: LineCounter, path: readonly (string | number)[], key?: string): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true);
    const range = (node as { range?: [number, number, number] | null } | undefined)?.range;
    if (!range) continue;
    if (key !== undefined && depth === path.length && isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
      const at = (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
      if (at !== undefined) return lines.linePos(at).line;
    }
    return lines.linePos(range[0]).line;
  }
  return 1;
}

/**
 * Checks every expectation against its check (name, what its step produces, parameters) before the
 * suite schema: the first one that cannot be judged is a ConfigError with the file and the line.
 */
function checkExpectations(data: unknown, doc: Document, lines: LineCounter, file: string): void {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const record = (value: unknown): Record<string, unknown> | undefined =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  for (const [c, testCase] of list(record(data)?.cases).entries()) {
    const caseId = record(testCase)?.id;
    for (const [s, step] of list(record(testCase)?.steps).entries()) {
      const body = record(step);
      if (!body) continue;
      for (const [e, expectation] of list(body.expect).entries()) {
        const given = record(expectation);
        if (typeof given?.check !== 'string') continue;
        numbersFromText(given);
        const problem = expectationProblem(given as Expectation, body as Step);
        if (!problem) continue;
        const line = lineOf(doc, lines, ['cases', c, 'steps', s, 'expect', e], problem.param);
        const named = `case ${JSON.stringify(typeof caseId === 'string' ? caseId : `#${c + 1}`)}${problem.check ? ` expects ${problem.check.id}` : ''}`;
        throw new ConfigError('bad-suite', `${file}:${line}: ${named}: ${problem.message}`);
      }
    }
  }
}

/**
 * Loads every suite under `dir` (default: the built-in suites, then the derived ones), sorted by name, then the user's own
 * suites of each `extraDirs` folder (`--suites DIR`): same schema, same checks, named by their path
 * inside their folder; a name that is already taken is refused.
 */
export function loadSuites(dir = SUITES_DIR, extraDirs: readonly string[] = []): Suite[] {
  // The built-in suites come with the cases derived from the rules' dimensions (src/runner/derive/).
  const suites = dir === SUITES_DIR ? [...suitesIn(dir), ...derivedSuites()] : suitesIn(dir);
  const names = new Set(suites.map((suite) => suite.name));
  for (const extra of extraDirs) {
    for (const suite of suitesIn(extra, true)) {
      if (names.has(suite.name))
        throw new ConfigError(
          'bad-suite',
          `suite ${suite.name} of ${extra}: a suite of that name is loaded already; rename the file`,
        );
      names.add(suite.name);
      suites.push(suite);
    }
  }
  return suites;
}

/** A suite file as read: its path, its suite name (its path inside the folder, without .yaml) and its text. */
interface SuiteFile extends SuiteText {
  file: string;
}

/** Every .yaml/.yml file under `dir`, in name order; a user's folder that cannot be read or holds none is one line. */
function readSuiteFiles(dir: string, userFolder: boolean): SuiteFile[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      if (!userFolder) throw error;
      throw new ConfigError(
        'unreadable-file',
        `cannot read suites folder ${folder}: ${(error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'not a folder' : (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (error as Error).message}`,
      );
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry.name)) files.push(path);
    }
  };
  walk(dir);
  if (userFolder && files.length === 0)
    throw new ConfigError('bad-suite', `suites folder ${dir} holds no .yaml or .yml file`);
  return files.sort().map((file) => ({
    file,
    name: relative(dir, file)
      .split(sep)
      .join('/')
      .replace(/\.ya?ml$/, ''),
    text: readFileSync(file, 'utf8'),
  }));
}

function parseSuiteFiles(dir: string, files: readonly SuiteFile[], userFolder: boolean): Suite[] {
  return files.map(({ file, name, text }) => {
    try {
      // A user's file is named by its path, which they can open; a built-in one by its path in the package.
      return parseSuite(text, name, dir === SUITES_DIR ? relative(PACKAGE_ROOT, file).split(sep).join('/') : file);
    } catch (error) {
      if (userFolder && error instanceof ConfigError)
        throw new ConfigError('bad-suite', error.message.replace(`suite ${name}:`, `suite ${file}:`));
      throw error;
    }
  });
}

function suitesIn(dir: string, userFolder = false): Suite[] {
  const files = readSuiteFiles(dir, userFolder);
  // The built-in suites as `npm run generate` parsed and checked them, while the files are unchanged.
  return (dir === SUITES_DIR ? cachedSuites(files) : undefined) ?? parseSuiteFiles(dir, files, userFolder);
}

/**
 * The built-in suites parsed from their YAML, never from the generated copy, with the files they
 * came from: what `npm run generate` keeps in src/generated/suites.ts.
 */
export function parseBuiltinSuites(): { suites: Suite[]; files: SuiteText[] } {
  const files = readSuiteFiles(SUITES_DIR, false);
  return { suites: parseSuiteFiles(SUITES_DIR, files, false), files: files.map(({ name, text }) => ({ name, text })) };
}

/** Glob over suite names: `*` within a segment, `**` across; `service/*`, `*energy*`. */
export function matchesGlob(name: string, glob: string): boolean {
  const pattern = glob
    .split('**')
    .map((part) =>
      part
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '.'),
    )
    .join('.*');
  const regex = new RegExp(`^${pattern}$`);
  return regex.test(name) || regex.test(name.split('/').pop() ?? name);
}

/** Parses `i/n` (1-based) and keeps the cases of shard i: a stable split by case position. */
export function parseShard(text: string): { index: number; total: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  const index = Number(match?.[1]);
  const total = Number(match?.[2]);
  if (!match || total < 1 || index < 1 || index > total)
    throw new ConfigError('bad-shard', `--shard must be i/n with 1 <= i <= n, not ${JSON.stringify(text)}`);
  return { index, total };
}

/** Selects suites by glob and cases by shard. */
export function selectSuites(
  suites: Suite[],
  options: { glob?: string; shard?: { index: number; total: number } },
): Suite[] {
  let position = 0;
  return suites
    .filter((suite) => !options.glob || matchesGlob(suite.name, options.glob))
    .map((suite) => ({
      ...suite,
      cases: suite.cases.filter(() => {
        const mine = !options.shard || position % options.shard.total === options.shard.index - 1;
        position++;
        return mine;
      }),
    }))
    .filter((suite) => suite.cases.length > 0);
}
