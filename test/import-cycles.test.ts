// `npm run lint` ends with scripts/check-import-cycles.mjs: no import cycle anywhere in src/, type
// imports included. Here it must pass the real tree and name each kind of cycle in a planted one.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const script = join(ROOT, 'scripts', 'check-import-cycles.mjs');
const check = (dir: string) => {
  const run = spawnSync(process.execPath, [script, dir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, out: run.stdout + run.stderr };
};

describe('the import-cycle check', () => {
  it('passes src/ and is part of npm run lint', () => {
    const run = check(join(ROOT, 'src'));
    expect(run.out).toMatch(/^no import cycle among \d+ files in src\n$/);
    expect(run.status).toBe(0);
    const manifest = JSON.parse(
      spawnSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json").scripts)'], {
        cwd: ROOT,
        encoding: 'utf8',
      }).stdout,
    ) as Record<string, string>;
    expect(manifest.lint).toMatch(/node scripts\/check-import-cycles\.mjs/);
  });

  it('names a value cycle, a type-only cycle, an import() type cycle and a re-export cycle; ignores comments, strings and packages', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-cycles-'));
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    const file = (path: string, text: string) => writeFileSync(join(dir, path), text);
    file('a/one.ts', "import { two } from './two.js';\nexport const one = () => two;\n");
    file('a/two.ts', "import { one } from './one.js';\nexport const two = () => one;\n");
    file('b/model.ts', "import type { Loader } from './loader.js';\nexport interface Model { loader: Loader }\n");
    file('b/loader.ts', "import type { Model } from './model.js';\nexport interface Loader { model: Model }\n");
    file('b/x.ts', "export type X = import('./y.js').Y;\n");
    file('b/y.ts', "export type Y = import('./x.js').X | number;\n");
    file('b/index.ts', "export * from './reexported.js';\n");
    file('b/reexported.ts', "export { default as n } from './index.js';\n");
    file(
      'clean.ts',
      "// import { one } from './a/one.js';\nconst text = \"import './clean.js'\";\nimport { readFileSync } from 'node:fs';\nimport { one } from './a/one.js';\nexport { text, readFileSync, one };\n",
    );
    const run = check(dir);
    expect(run.status).toBe(1);
    const lines = run.out.trim().split('\n');
    expect(
      lines
        .filter((line) => line.startsWith('import cycle'))
        .map((line) =>
          line
            .replace(/^import cycle \(\d files\): /, '')
            .split(' ')
            .map((path) => path.split('/').slice(-2).join('/'))
            .join(' '),
        )
        .sort(),
    ).toEqual(['a/one.ts a/two.ts', 'b/index.ts b/reexported.ts', 'b/loader.ts b/model.ts', 'b/x.ts b/y.ts']);
    expect(lines.at(-1)).toMatch(
      /^4 import cycles in .*: the modules of each must not import each other round \(ARCHITECTURE\.md\)$/,
    );
  });
});
