/**
 * No function in src/ is longer than 80 lines (generated code and tests aside): a long function that
 * holds mutable state is what makes the code hard to read and change. Functions still over the limit
 * are listed below by file and name; the list only shrinks: a listed function that is now short
 * enough fails the test until its entry is removed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const MAX_LINES = 80;

/** Functions allowed over the limit, as `file: qualified name`: none. A new entry needs a reason beside it. */
const ALLOWED_LONG: readonly string[] = [];

/** The .ts files of `dir`, tests and src/generated left out. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** A node's own name: a function's, a method's, a class's, or the variable or property it is assigned to. */
function ownName(node: ts.Node): string | undefined {
  if ((ts.isFunctionLike(node) || ts.isClassLike(node)) && node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.initializer === node
  )
    return parent.name.getText();
  return undefined;
}

/** `outer.inner`: the names of the enclosing functions and classes and the node's own, `<anonymous>` for an unnamed function. */
function qualifiedName(node: ts.Node): string {
  const names: string[] = [];
  for (let at: ts.Node | undefined = node; at && !ts.isSourceFile(at); at = at.parent) {
    if (at === node || ts.isFunctionLike(at) || ts.isClassLike(at)) names.unshift(ownName(at) ?? '<anonymous>');
  }
  return names.join('.');
}

/** Every function of `file` longer than MAX_LINES, as `file: name` with its length. */
function longFunctions(file: string): Array<{ key: string; lines: number }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ key: string; lines: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_LINES) found.push({ key: `${relative(ROOT, file)}: ${qualifiedName(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe(`functions in src/ are at most ${MAX_LINES} lines`, () => {
  const long = sourceFiles(join(ROOT, 'src')).flatMap(longFunctions);
  const longKeys = new Set(long.map((entry) => entry.key));

  it('has no long function outside the list', () => {
    const unlisted = long
      .filter((entry) => !ALLOWED_LONG.includes(entry.key))
      .map((entry) => `${entry.key} (${entry.lines} lines)`);
    expect(unlisted).toEqual([]);
  });

  it('lists only functions that are still long', () => {
    expect(ALLOWED_LONG.filter((key) => !longKeys.has(key))).toEqual([]);
  });
});
