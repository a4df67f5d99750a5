// `npm run lint` ends with scripts/check-dead-exports.mjs: every export of a module in src/ is used
// by another file, or the module is a root (docs/decisions/0089-dead-exports.md). Here it must pass the
// real tree and name each dead export planted in a small project, and leave alone every kind of use.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const script = join(ROOT, 'scripts', 'check-dead-exports.mjs');
const check = (dir: string, ...flags: string[]) => {
  const run = spawnSync(process.execPath, [script, ...flags, dir], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, out: run.stdout + run.stderr };
};
const deadLines = (out: string) =>
  out
    .split('\n')
    .filter((line) => line.startsWith('dead export: '))
    .sort();

/** A project with one of each kind of use, and five dead exports. */
function planted(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wc-dead-exports-'));
  const file = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  file(
    'package.json',
    JSON.stringify({
      type: 'module',
      exports: { '.': './dist/index.js', './extra': { default: './dist/extra.js' } },
      bin: { tool: 'bin/tool.js' },
      browser: { './dist/codec.js': './dist/browser-codec.js' },
      scripts: { gen: 'tsx src/dev.ts gen' },
    }),
  );
  file('bin/tool.js', "import { main } from '../dist/cli.js';\nawait main();\n");
  // Roots: their exports are used by definition.
  file('src/index.ts', "export { used, type Shape } from './lib.js';\nexport * from './star.js';\n");
  file('src/cli.ts', 'export async function main(): Promise<void> {}\n');
  file('src/extra.ts', 'export const extra = 1;\n');
  file('src/browser-codec.ts', 'export const codec = 2;\n');
  file('src/dev.ts', 'export const dev = 3;\n');
  file('src/generated/table.ts', 'export const generated = 4;\n');
  file('src/star.ts', 'export const starred = 5;\n');
  // The planted dead exports, with names that also appear in comments and strings elsewhere.
  file(
    'src/lib.ts',
    [
      'export interface Shape { size: number }',
      '/** Only this file names it. */',
      'export type Local = { n: number };',
      'export const onlyHere = 6;',
      'export function used(local: Local): number { return local.n + onlyHere; }',
      'export function unused(): void {}',
      'export function testedHere(): number { return 7; }',
      '',
    ].join('\n'),
  );
  file('src/lib2.ts', 'export const passedOn = 8;\n');
  file('src/barrel.ts', "export { passedOn } from './lib2.js';\n");
  // Every other kind of use.
  file('src/dynamic.ts', 'export const destructured = 9;\nexport const asObject = 10;\n');
  file('src/types.ts', 'export interface ImportType { a: string }\n');
  file('src/short.ts', 'export function short(): number { return 11; }\n');
  file('src/relay.ts', "export { relayed } from './origin.js';\n");
  file('src/origin.ts', 'export const relayed = 12;\n');
  file(
    'src/user.ts',
    [
      "// unused, onlyHere and passedOn are named in this comment; 'unused' in a string is no use either.",
      "import { short } from './short.js';",
      "import { relayed } from './relay.js';",
      "const text = 'unused onlyHere passedOn';",
      'const table = { short, text, relayed };',
      "type Viewed = import('./types.js').ImportType;",
      'async function load(view: Viewed): Promise<number> {',
      "  const { destructured } = await import('./dynamic.js');",
      "  const module = await import('./dynamic.js');",
      '  return destructured + module.asObject + table.short() + view.a.length;',
      '}',
      'void load;',
      '',
    ].join('\n'),
  );
  file('src/lib.test.ts', "import { testedHere } from './lib.js';\nvoid testedHere;\n");
  return dir;
}

describe('the dead-export check', () => {
  // Lint runs the check over src/ (in CI too); a second run here would cost ~17 s of CPU and prove nothing more.
  it('is part of npm run lint, after the import-cycle check', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.lint).toMatch(
      /node scripts\/check-import-cycles\.mjs && node scripts\/check-dead-exports\.mjs --type-check/,
    );
  });

  it('--type-check reports type errors as tsc does, from the same program, and fails with exit 2', () => {
    const dir = planted();
    writeFileSync(
      join(dir, 'src/index.ts'),
      `${readFileSync(join(dir, 'src/index.ts'), 'utf8')}\nexport const wrong: number = 'text';\n`,
    );
    const typed = check(dir, '--type-check');
    expect(typed.status).toBe(2);
    expect(typed.out).toMatch(
      /^src\/index\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\.$/m,
    );
    expect(typed.out).toContain('1 type error (above)');
    // The dead exports are still named beside the type error.
    expect(deadLines(typed.out)).toHaveLength(5);
    expect(check(dir).out).not.toContain('TS2322');
  }, 120_000);

  it('names an unused export, one only its file uses, a type only its file uses, a re-export no one imports and what only that re-export used', () => {
    const dir = planted();
    const run = check(dir);
    expect(run.status).toBe(1);
    expect(deadLines(run.out)).toEqual([
      'dead export: src/barrel.ts:1 passedOn (a re-export no file imports from here: delete it)',
      'dead export: src/lib.ts:3 Local (used only in its own file: drop `export`)',
      'dead export: src/lib.ts:4 onlyHere (used only in its own file: drop `export`)',
      'dead export: src/lib.ts:6 unused (used nowhere: delete it)',
      'dead export: src/lib2.ts:1 passedOn (used nowhere: delete it)',
    ]);
    expect(run.out.trim().split('\n').at(-1)).toBe(
      '5 dead exports in src: remove each, or drop its `export` (docs/decisions/0089-dead-exports.md)',
    );
  }, 120_000);

  it('--fix drops `export` where only the file uses a name and deletes the dead re-export; what nothing uses stays for a person', () => {
    const dir = planted();
    expect(check(dir, '--fix').status).toBe(1);
    const lib = readFileSync(join(dir, 'src/lib.ts'), 'utf8');
    expect(lib).toContain('\ntype Local = { n: number };\nconst onlyHere = 6;\n');
    expect(lib).toContain('export interface Shape');
    expect(readFileSync(join(dir, 'src/barrel.ts'), 'utf8')).toBe('');
    const again = check(dir);
    expect(deadLines(again.out)).toEqual([
      'dead export: src/lib.ts:6 unused (used nowhere: delete it)',
      'dead export: src/lib2.ts:1 passedOn (used nowhere: delete it)',
    ]);
  }, 120_000);
});
