import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The guard of "src/spec is the only reader of the spec document" (docs/decisions/0088-spec-model.md):
 * outside src/spec, no source file walks the raw tree. It reads the model's views instead
 * (SpecModel.flatten, endpoints, callbacks, controlOperations, annotations, info, servers).
 */

const SRC = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** What reading the raw tree looks like in source text (comments stripped). */
const RAW_READS: Array<[string, RegExp]> = [
  ['.document (the raw tree)', /(?<=[\w)\]])\.document\b/],
  ['.exact (the raw tree, exact numbers)', /(?<=[\w)\]])\.exact\b/],
  ['.node (a raw operation or resolved node)', /(?<=[\w)\]])\.node\b/],
  ['.item (a raw path item)', /(?<=[\w)\]])\.item\b/],
  ["a '$ref' key", /\.\$ref\b|\[\s*['"`]\$ref['"`]\s*\]|['"`]\$ref['"`]\s*in\b/],
  ['an allOf key', /\.allOf\b|\[\s*['"`]allOf['"`]\s*\]|['"`]allOf['"`]\s*in\b/],
  ["an 'x-encrypted' key", /['"`]x-encrypted['"`]/],
  ['followLocalRef', /\bfollowLocalRef\b/],
  ['walkJson', /\bwalkJson\b/],
  ['the raw accessors refName/requestSchema', /\.(refName|requestSchema)\(/],
];

/**
 * Converted by wt-docs (branch wt-docs converts src/generate/docs to the model's views at the same
 * time); the lead empties this list when merging it. Every entry must still offend (see below).
 */
const CONVERTED_BY_WT_DOCS = new Set<string>([
  // wt-docs converted every file of src/generate/docs: none is left.
]);

/** Block comments and `//` comments (a `//` right after a letter or colon, as in a URL, is kept). */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\w])\/\/.*$/gm, '$1');
}

/** The raw reads in a source text, named. */
export function rawReads(text: string): string[] {
  const code = withoutComments(text);
  return RAW_READS.filter(([, pattern]) => pattern.test(code)).map(([name]) => name);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every source file outside src/spec and src/generated (tests are consumers and may look). */
const files = sourceFiles(SRC)
  .map((path) => relative(SRC, path).replaceAll('\\', '/'))
  .filter((path) => !path.startsWith('spec/') && !path.startsWith('generated/'));

describe('src/spec is the only reader of the spec document', () => {
  it('finds each kind of raw read, and not a spread, a comment or a URL', () => {
    expect(rawReads('const x = model.document.components;')).toEqual(['.document (the raw tree)']);
    expect(rawReads('const t = source.exact;')).toEqual(['.exact (the raw tree, exact numbers)']);
    expect(rawReads('op.node.summary; ops[0].item;')).toEqual([
      '.node (a raw operation or resolved node)',
      '.item (a raw path item)',
    ]);
    expect(rawReads("if (typeof node.$ref === 'string') x = node['$ref'];")).toEqual(["a '$ref' key"]);
    expect(rawReads('for (const part of schema.allOf ?? []) {}')).toEqual(['an allOf key']);
    expect(rawReads("const marker = property['x-encrypted'];")).toEqual(["an 'x-encrypted' key"]);
    expect(rawReads('followLocalRef(doc, ref); walkJson(doc, visit);')).toEqual(['followLocalRef', 'walkJson']);
    expect(rawReads('view.refName(x); ctx.spec.requestSchema(op)')).toEqual([
      'the raw accessors refName/requestSchema',
    ]);
    expect(rawReads('const a = { ...node, ...item.settlement };')).toEqual([]);
    expect(
      rawReads('// walks allOf and $ref like model.document\n/* node.$ref */ const url = "http://example.test/a";'),
    ).toEqual([]);
    expect(rawReads("const schema = { allOf: [], then: { $ref: '#/$defs/x' } };")).toEqual([]);
  });

  it('no source file outside src/spec reads the raw tree (src/generated exempt)', () => {
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((path) => !CONVERTED_BY_WT_DOCS.has(path))
      .map((path) => ({ path, reads: rawReads(readFileSync(join(SRC, path), 'utf8')) }))
      .filter(({ reads }) => reads.length > 0);
    expect(offenders).toEqual([]);
  });

  it('every file still allowed to read it does (an entry that no longer offends comes off the list)', () => {
    for (const path of CONVERTED_BY_WT_DOCS) {
      expect(files, path).toContain(path);
      expect(rawReads(readFileSync(join(SRC, path), 'utf8')), path).not.toEqual([]);
    }
  });

  it("SpecModel's public members are its views: no raw accessor (document, resolve, a raw node) is handed out", () => {
    const text = readFileSync(join(SRC, 'spec/model.ts'), 'utf8');
    const body = /^export class SpecModel \{\n([\s\S]*?)^\}$/m.exec(text)?.[1] ?? '';
    const members = [
      ...body.matchAll(/^ {2}((?:(?:private|protected|public|readonly|static|get|set|async)\s+)*)(\w+)\s*[(<:=?]/gm),
    ]
      .filter(([, modifiers]) => !/\b(private|protected)\b/.test(modifiers!))
      .map(([, modifiers, name]) => `${/\bget\b/.test(modifiers!) ? 'get ' : ''}${name}`)
      .filter((name) => name !== 'constructor');
    // A new member here is a new view: it hands out typed data (FlatSchema, the endpoint views, exact
    // examples), never the tree. The constructor's SpecSource stays private.
    expect(members).toEqual([
      'flatten',
      'schemaNames',
      'endpoints',
      'endpoint',
      'serviceEndpoints',
      'controlOperations',
      'callbacks',
      'servers',
      'info',
      'annotations',
      'get name',
      'callbackTypes',
      'example',
    ]);
    expect(body).toMatch(/constructor\(private readonly source: SpecSource\)/);
  });
});
