#!/usr/bin/env node
// `npm run lint` (last step): no import cycle anywhere in src/, type imports included (a cycle of
// types still ties the modules' meaning together: ARCHITECTURE.md). Every relative import, export
// ... from, dynamic import() and import('...') type of every .ts file under the folder given (default
// src/) is an edge; each strongly connected group of more than one file (or a file importing itself)
// is printed as one line, and the exit status is 1. TypeScript's own scanner reads the imports, so
// comments and strings are never mistaken for them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? 'src');
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(m|c)?tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
  }
};
walk(root);
const known = new Set(files);

/** The file a relative specifier names: './x.js' is './x.ts' in the sources. */
function target(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  return [base, base.replace(/\.(m|c)?js$/, '.$1ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) =>
    known.has(candidate),
  );
}

const edges = new Map();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
  // import('./x.js').Type in a type position: the scanner above reads only import() calls.
  for (const match of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) specifiers.push(match[1]);
  edges.set(file, [
    ...new Set(specifiers.map((specifier) => target(file, specifier)).filter((to) => to !== undefined)),
  ]);
}

// Tarjan's strongly connected components, iteratively (no recursion limit on a deep graph).
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
for (const start of files) {
  if (index.has(start)) continue;
  const work = [[start, 0]];
  index.set(start, counter);
  low.set(start, counter++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const frame = work[work.length - 1];
    const [node, next] = frame;
    const out = edges.get(node);
    if (next < out.length) {
      frame[1]++;
      const to = out[next];
      if (!index.has(to)) {
        index.set(to, counter);
        low.set(to, counter++);
        stack.push(to);
        onStack.add(to);
        work.push([to, 0]);
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
      continue;
    }
    work.pop();
    if (work.length > 0) {
      const parent = work[work.length - 1][0];
      low.set(parent, Math.min(low.get(parent), low.get(node)));
    }
    if (low.get(node) === index.get(node)) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || edges.get(node).includes(node))
        cycles.push(group.map((file) => relative(process.cwd(), file)).sort());
    }
  }
}

if (cycles.length > 0) {
  for (const group of cycles) console.error(`import cycle (${group.length} files): ${group.join(' ')}`);
  console.error(
    `${cycles.length} import cycle${cycles.length === 1 ? '' : 's'} in ${relative(process.cwd(), root) || '.'}: the modules of each must not import each other round (ARCHITECTURE.md)`,
  );
  process.exit(1);
}
console.log(`no import cycle among ${files.length} files in ${relative(process.cwd(), root) || '.'}`);
