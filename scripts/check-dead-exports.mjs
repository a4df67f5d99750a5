#!/usr/bin/env node
// `npm run lint` (after the import-cycle check): no dead export in src/ (docs/decisions/0089-dead-exports.md).
// An export of a module under src/ must be used by another file: another module, a test (test/, a
// unit test beside the code), a bench, an example. The roots are the public API and the entry points,
// whose exports are used by definition: src/index.ts, the modules behind package.json `exports`,
// `browser` and `bin`, the .ts files the package.json scripts run (src/cli/dev.ts), and src/generated/ (the output
// of `npm run generate`). TypeScript's checker resolves every identifier of every file in the project
// (imports, re-exports, `import()` destructured or read as an object, `import('./x.js').T` types), so
// a name in a comment or a string never counts as a use, and an alias is followed to what it names.
// A type used by an exported signature need not be exported; it is dead as an export when no other
// file names it. Each dead export is printed as one line with what to do; the exit status is then 1.
//
// Usage: node scripts/check-dead-exports.mjs [--fix] [project-dir]   (default: the current directory)
// --fix drops `export` where only the file uses a name and deletes dead re-exports; the rest is yours.
// --type-check also reports the program's type errors as `tsc -p tsconfig.json --noEmit` does, from the
// same program (lint runs it so: one TypeScript program instead of two, about 20 s of CPU less).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const project = resolve(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? '.');
const src = join(project, 'src');
const show = (file) => relative(process.cwd(), file) || '.';

const walk = (dir, out = []) => {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.(m|c)?tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
};

// The files of the project: tsconfig.json's when there is one, else every .ts file under the usual folders.
let options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  types: [],
};
let fileNames = ['src', 'test', 'bench', 'examples'].flatMap((dir) => walk(join(project, dir)));
const tsconfig = join(project, 'tsconfig.json');
if (existsSync(tsconfig)) {
  const read = ts.readConfigFile(tsconfig, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, project);
  options = { ...parsed.options, noEmit: true };
  fileNames = parsed.fileNames;
}
const program = ts.createProgram({ rootNames: fileNames, options });
const checker = program.getTypeChecker();

let typeErrors = 0;
if (process.argv.includes('--type-check')) {
  const diagnostics = ts.getPreEmitDiagnostics(program);
  typeErrors = diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error).length;
  if (diagnostics.length > 0) {
    const host = {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => process.cwd(),
      getNewLine: () => '\n',
    };
    process.stderr.write(ts.formatDiagnostics(diagnostics, host));
  }
}

// The roots: whatever package.json publishes or runs, mapped from dist/ back to src/.
const roots = new Set([join(src, 'index.ts'), ...walk(join(src, 'generated'))]);
const manifestPath = join(project, 'package.json');
const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : {};
const fromDist = (path) => resolve(project, path.replace(/^\.?\/?dist\//, 'src/').replace(/\.js$/, '.ts'));
const strings = (value) =>
  typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(strings) : [];
// `browser` maps a module to its stand-in in a browser bundle: the stand-in's exports are its twin's.
for (const path of [...strings(manifest.exports), ...strings(manifest.browser)])
  if (/^\.?\/?dist\/.*\.js$/.test(path)) roots.add(fromDist(path));
for (const bin of strings(manifest.bin)) {
  const file = resolve(project, bin);
  if (!existsSync(file)) continue;
  for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
    const target = resolve(dirname(file), ref.fileName);
    if (target.startsWith(join(project, 'dist') + '/')) roots.add(fromDist(relative(project, target)));
  }
}
for (const command of strings(manifest.scripts))
  for (const [path] of command.matchAll(/\bsrc\/[\w./-]+\.ts\b/g)) roots.add(resolve(project, path));

const isTest = (file) => /\.test\.(m|c)?tsx?$/.test(file);
const checked = program
  .getSourceFiles()
  .filter(
    (sf) =>
      sf.fileName.startsWith(src + '/') &&
      !sf.isDeclarationFile &&
      !isTest(sf.fileName) &&
      !roots.has(resolve(sf.fileName)),
  );

// Every symbol an identifier names, with the aliases on the way (an import names the export it imports).
const chain = (symbol) => {
  const seen = [];
  while (symbol && !seen.includes(symbol)) {
    seen.push(symbol);
    if (!(symbol.flags & ts.SymbolFlags.Alias)) break;
    symbol = checker.getImmediateAliasedSymbol(symbol) ?? checker.getAliasedSymbol(symbol);
  }
  return seen;
};
/** symbol → the files that use it (a declaration's own name is not a use; a local `export { x }` neither). */
const uses = new Map();
const use = (symbol, file) => {
  for (const named of chain(symbol)) {
    if (!uses.has(named)) uses.set(named, new Set());
    uses.get(named).add(file);
  }
};
/** symbol → the re-exports of it (`export { x } from './m.js'`): a use of x only while the re-export is used. */
const via = new Map();
const isOwnName = (node, symbol) => symbol?.declarations?.some((declaration) => declaration.name === node) ?? false;
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
  const file = resolve(sf.fileName);
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const parent = node.parent;
      if (ts.isExportSpecifier(parent)) {
        // export { x } names the local x: it exports it, it does not use it. export { x } from
        // './m.js' declares an alias of m's x, used when the alias is (a root's re-export always is).
        const from = parent.parent.parent.moduleSpecifier;
        const alias = checker.getSymbolAtLocation(parent.name);
        if (from && node === parent.name && alias) {
          if (roots.has(file)) use(alias, file);
          for (const target of chain(alias).slice(1)) {
            if (!via.has(target)) via.set(target, []);
            via.get(target).push({ alias, file });
          }
        }
      } else {
        const symbol = checker.getSymbolAtLocation(node);
        if (symbol && !isOwnName(node, symbol)) use(symbol, file);
        // { x } in an object literal: the property is named after the value x it holds.
        if (ts.isShorthandPropertyAssignment(parent) && parent.name === node) {
          const value = checker.getShorthandAssignmentValueSymbol(parent);
          if (value) use(value, file);
        }
        // const { x } = await import('./m.js'): x is the module's export x.
        if (
          ts.isBindingElement(parent) &&
          ts.isObjectBindingPattern(parent.parent) &&
          (parent.propertyName ?? parent.name) === node
        ) {
          const property = checker.getTypeAtLocation(parent.parent).getProperty(node.text);
          if (property) use(property, file);
        }
      }
    }
    // export * from './m.js' in a root publishes every export of m.
    if (ts.isExportDeclaration(node) && !node.exportClause && node.moduleSpecifier && roots.has(file)) {
      const target = checker.getSymbolAtLocation(node.moduleSpecifier);
      if (target) for (const symbol of checker.getExportsOfModule(target)) use(symbol, file);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

/** The files that use any of these symbols, counting a re-export's file while the re-export is used elsewhere. */
const usersOf = (symbols, seen = new Set()) => {
  const files = new Set();
  for (const symbol of symbols) {
    for (const file of uses.get(symbol) ?? []) files.add(file);
    for (const { alias, file } of via.get(symbol) ?? []) {
      if (seen.has(alias)) continue;
      seen.add(alias);
      if ([...usersOf([alias], seen)].some((user) => user !== file)) files.add(file);
    }
  }
  return files;
};

const dead = [];
const fixes = [];
for (const sf of checked) {
  const file = resolve(sf.fileName);
  const module = checker.getSymbolAtLocation(sf);
  if (!module) continue;
  for (const exported of checker.getExportsOfModule(module)) {
    // Only what this file declares or re-exports itself; `export *` passes on another file's exports.
    const declaration = exported.declarations?.[0];
    if (!declaration || resolve(declaration.getSourceFile().fileName) !== file) continue;
    // What this file declares under the name: a re-export is used only through itself, not by the
    // users of the module it passes on.
    const targets = chain(exported).filter((symbol) =>
      symbol.declarations?.some((d) => resolve(d.getSourceFile().fileName) === file),
    );
    const users = usersOf(targets);
    const elsewhere = [...users].filter((user) => user !== file);
    // Any other file counts, its own unit test included: tests are consumers (ARCHITECTURE.md).
    if (elsewhere.length > 0) continue;
    const line = sf.getLineAndCharacterOfPosition(declaration.getStart()).line + 1;
    const reExport = ts.isExportSpecifier(declaration) && declaration.parent.parent.moduleSpecifier;
    const verdict = reExport
      ? 'a re-export no file imports from here: delete it'
      : users.has(file)
        ? 'used only in its own file: drop `export`'
        : 'used nowhere: delete it';
    dead.push(`dead export: ${show(file)}:${line} ${exported.name} (${verdict})`);
    if (reExport) fixes.push({ sf, kind: 'specifier', nodes: [declaration] });
    else if (users.has(file)) fixes.push({ sf, kind: 'unexport', nodes: exported.declarations });
  }
}

// --fix: drop `export` where only the file uses the name, and delete dead re-exports. What nothing
// uses at all is left for a person to delete (with its tests, if it has some).
if (process.argv.includes('--fix')) {
  const edits = new Map();
  const edit = (sf, from, to) => {
    if (!edits.has(sf)) edits.set(sf, []);
    edits.get(sf).push([from, to]);
  };
  const text = (sf) => sf.getFullText();
  // A whole statement goes with the comment right above it, and leaves no second blank line.
  const removeStatement = (sf, statement) => {
    const all = text(sf);
    let from = statement.getStart();
    for (const comment of (ts.getLeadingCommentRanges(all, statement.getFullStart()) ?? []).reverse()) {
      if (/\n\s*\n/.test(all.slice(comment.end, from))) break;
      from = comment.pos;
    }
    from = all.lastIndexOf('\n', from - 1) + 1;
    let to = statement.end + (all[statement.end] === '\n' ? 1 : 0);
    if (all.slice(from - 2, from) === '\n\n' && all[to] === '\n') to += 1;
    edit(sf, from, to);
  };
  const removeSpecifier = (sf, specifier) => {
    const list = specifier.parent;
    if (
      list.elements.length === 1 ||
      list.elements.every((element) => fixes.some((fix) => fix.nodes.includes(element)))
    ) {
      if (list.elements[0] === specifier) removeStatement(sf, list.parent);
      return;
    }
    const index = list.elements.indexOf(specifier);
    if (index < list.elements.length - 1) edit(sf, specifier.getStart(), list.elements[index + 1].getStart());
    else edit(sf, list.elements[index - 1].end, specifier.end);
  };
  for (const { sf, kind, nodes } of fixes) {
    for (const node of nodes) {
      if (kind === 'specifier' || ts.isExportSpecifier(node)) {
        removeSpecifier(sf, node);
        continue;
      }
      const carrier = ts.isVariableDeclaration(node) ? node.parent.parent : node;
      if (ts.isVariableDeclaration(node) && node.parent.declarations.length > 1) continue;
      const modifiers = ts.canHaveModifiers(carrier) ? (ts.getModifiers(carrier) ?? []) : [];
      if (modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword)) continue;
      const keyword = modifiers.find((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
      if (keyword) edit(sf, keyword.getStart(), keyword.end + 1);
    }
  }
  for (const [sf, list] of edits) {
    let out = text(sf);
    const unique = [...new Map(list.map((range) => [range.join(':'), range])).values()].sort((a, b) => b[0] - a[0]);
    for (const [from, to] of unique) out = out.slice(0, from) + out.slice(to);
    writeFileSync(sf.fileName, out);
  }
  console.error(`--fix: edited ${edits.size} files; run the check again`);
}

if (typeErrors > 0) console.error(`${typeErrors} type error${typeErrors === 1 ? '' : 's'} (above)`);
if (dead.length > 0) {
  for (const line of dead) console.error(line);
  console.error(
    `${dead.length} dead export${dead.length === 1 ? '' : 's'} in ${show(src)}: remove each, or drop its \`export\` (docs/decisions/0089-dead-exports.md)`,
  );
  process.exit(typeErrors > 0 ? 2 : 1);
}
if (typeErrors > 0) process.exit(2);
console.log(`no dead export among ${checked.length} modules in ${show(src)}`);
