/**
 * The lint's layer table (`LAYERS` in eslint.config.js) says what the code does: every edge it
 * allows is used by at least one import of src/, so neither the table nor the diagram generated
 * from it (ARCHITECTURE.md) draws a direction the code does not take. The lint refuses the edges
 * it does not allow (test/import-directions.test.ts); this test refuses the ones it allows in vain.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const SRC = join(ROOT, 'src');

interface LayerConfig {
  LAYERS: Record<string, string[]>;
  GENERATED_FILE: Record<string, string[]>;
  TYPES_FROM: Record<string, string>;
}

/** Every relative import of the non-test .ts files under src/, as `from` file and the file or folder it names. */
function imports(): Array<{ from: string; to: string }> {
  const out: Array<{ from: string; to: string }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8');
        const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
        for (const match of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) specifiers.push(match[1]!);
        for (const specifier of specifiers.filter((one) => one.startsWith('.')))
          out.push({ from: relative(SRC, path), to: relative(SRC, resolve(dirname(path), specifier)) });
      }
    }
  };
  walk(SRC);
  return out;
}

const layerOf = (path: string) => (path.includes(sep) ? path.split(sep)[0]! : undefined);

/** The edges a table allows that no import uses. */
function unusedEdges(layers: Record<string, string[]>, used: ReadonlySet<string>): string[] {
  return Object.entries(layers)
    .flatMap(([layer, deps]) => deps.map((dep) => `${layer} → ${dep}`))
    .filter((edge) => !used.has(edge));
}

describe('the layer table (eslint.config.js)', async () => {
  const config = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as LayerConfig;
  const all = imports();
  const crossing = all.filter(
    ({ from, to }) => layerOf(from) !== undefined && layerOf(to) !== layerOf(from) && !to.startsWith('..'),
  );
  const used = new Set(crossing.map(({ from, to }) => `${layerOf(from)} → ${layerOf(to)}`));

  it('allows no edge that no import of src/ uses', () => {
    expect(unusedEdges(config.LAYERS, used)).toEqual([]);
  });

  it('names an edge allowed in vain: src/core reads no other layer, src/secrets no src/core', () => {
    expect(unusedEdges({ ...config.LAYERS, core: ['crypto'], secrets: ['core'] }, used)).toEqual([
      'core → crypto',
      'secrets → core',
    ]);
  });

  it('names only a generated file that its layer reads, and a types-only edge that is used', () => {
    for (const [layer, files] of Object.entries(config.GENERATED_FILE))
      for (const file of files)
        expect(crossing.some(({ from, to }) => layerOf(from) === layer && to === join('generated', file))).toBe(true);
    for (const [layer, other] of Object.entries(config.TYPES_FROM)) expect(used.has(`${layer} → ${other}`)).toBe(true);
  });

  it('keeps ARCHITECTURE.md to 150 lines of structure and invariants', () => {
    expect(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });
});
