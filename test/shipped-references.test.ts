// What a user of the package sees must stand alone: ../shared/ and design.md exist only in this
// repository's development setup, so nothing shipped (spec/, suites/, README.md, docs/, every --help page
// of the built CLI, every page of the documentation site) may point at them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { RULES_PATH, SPEC_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import { generateDocs } from '../src/generate/docs/site.js';
import { parseSpec } from '../src/spec/document.js';
import { CHECKS } from '../src/runner/checks/index.js';
import { loadSuites } from '../src/runner/suite.js';
import { ROOT } from './support/cli.js';

const FORBIDDEN = /\.\.\/shared|design\.md/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Every line of `text` that points at the development-only files, with its line number. */
function offending(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (FORBIDDEN.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('shipped text', () => {
  it('in spec/, suites/, README.md and docs/ points at no ../shared file and no design.md', () => {
    const files = [
      ...filesUnder(join(ROOT, 'spec')),
      ...filesUnder(join(ROOT, 'suites')),
      join(ROOT, 'README.md'),
      ...filesUnder(join(ROOT, 'docs')),
    ];
    const found = files.flatMap((file) =>
      offending(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`),
    );
    expect(found).toEqual([]);
  });

  it('in every --help page of the built CLI points at no ../shared file and no design.md', async () => {
    const { buildProgram } = (await import(pathToFileURL(join(ROOT, 'dist/cli/main.js')).href)) as {
      buildProgram(): Promise<Command>;
    };
    const pages: Array<[string, string]> = [];
    const visit = (command: Command, path: string) => {
      pages.push([path, command.helpInformation()]);
      for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
    };
    visit(await buildProgram(), 'wallet-conformance');
    expect(pages.length).toBeGreaterThan(15);
    expect(pages.flatMap(([path, help]) => offending(help).map((line) => `${path} --help ${line}`))).toEqual([]);
  });

  it('in every page of the documentation site points at no ../shared file and no design.md', () => {
    const key = parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' }) as RsaPrivateKey;
    const files = generateDocs(
      parseSpec(readFileSync(SPEC_PATH, 'utf8')),
      parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')),
      loadSuites(),
      {
        checks: CHECKS,
        demo: { key },
      },
    );
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((file) => offending(file.contents).map((line) => `${file.path}:${line}`))).toEqual([]);
  });
});
