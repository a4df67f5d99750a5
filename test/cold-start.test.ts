// The CLI's start: every test and every user pays it on each run. main.ts imports only the command
// it runs, and a command file's registration imports only what --help shows; the work (runner,
// crypto, stores, suites, YAML, Ajv, fast-check, Pact, MSW) is imported by the action. These tests
// read the built dist/ (the code `bin/` runs) and its static imports, so a new static import of the
// runner in a command file fails here, whatever it costs on this machine.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from './support/cli.js';

const DIST = join(ROOT, 'dist');

/** Packages a start must not load for --help, --version or a flag error. */
const HEAVY_PACKAGES = [
  'yaml',
  'ajv',
  'ajv-formats',
  'fast-check',
  'better-sqlite3',
  'msw',
  '@pact-foundation/pact',
  'pg',
  'node-forge',
  '@redocly/openapi-core',
];

/** Modules of dist/ that are work, not registration: the layers that run, and crypto beyond its error class. */
function heavyModule(path: string): boolean {
  return (
    /^(runner|emulator|property|generate|msw|service|reporters|generated|observe\/(?!defaults\.js))\//.test(path) ||
    /store/.test(path) ||
    (path.startsWith('crypto/') && path !== 'crypto/errors.js') ||
    /^merchant\/(?!idempotency\.js)/.test(path)
  );
}

/** Every module of dist/ a file loads through static imports (an `import type` is not in the JS), and the packages. */
function staticClosure(file: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string) => {
    const name = relative(DIST, path).split('\\').join('/');
    if (modules.has(name)) return;
    modules.add(name);
    const text = readFileSync(path, 'utf8');
    for (const [, spec] of text.matchAll(/^(?:import|export)\s(?:[^;]*?\sfrom\s)?'([^']+)'/gm)) {
      if (spec!.startsWith('.')) visit(resolve(dirname(path), spec!));
      else if (!spec!.startsWith('node:'))
        packages.add(spec!.startsWith('@') ? spec!.split('/').slice(0, 2).join('/') : spec!.split('/')[0]!);
    }
  };
  visit(file);
  return { modules, packages };
}

/** The command modules main.js imports on demand. */
function commandModules(): string[] {
  const main = readFileSync(join(DIST, 'cli/main.js'), 'utf8');
  return [...main.matchAll(/import\('\.\/([a-z-]+-command\.js)'\)/g)].map(([, file]) => join(DIST, 'cli', file!));
}

describe('the CLI start', () => {
  it('main.js and every command registration import no runner, crypto, store, suite, YAML, Ajv, fast-check, Pact or MSW', () => {
    const files = [join(DIST, 'cli/main.js'), ...commandModules()];
    expect(files.length).toBeGreaterThanOrEqual(14);
    const found: string[] = [];
    for (const file of files) {
      const { modules, packages } = staticClosure(file);
      const where = relative(DIST, file);
      for (const name of modules) if (heavyModule(name)) found.push(`${where} → ${name}`);
      for (const name of packages) if (HEAVY_PACKAGES.includes(name)) found.push(`${where} → ${name}`);
    }
    expect(found).toEqual([]);
  });

  it('the static closure this test reads sees a heavy import (it would catch one)', () => {
    // verify's work module loads the runner and the suites: the same reading finds them there.
    const { modules, packages } = staticClosure(join(DIST, 'cli/run-parts.js'));
    expect([...modules].some(heavyModule)).toBe(true);
    expect([...packages].filter((name) => HEAVY_PACKAGES.includes(name))).toEqual(
      expect.arrayContaining(['yaml', 'ajv']),
    );
  });

  it('the top-level help from the command table is the help of the whole program, and each line of the table is its command', async () => {
    const { buildProgram, programFor, COMMANDS } = (await import(pathToFileURL(join(DIST, 'cli/main.js')).href)) as {
      buildProgram(): Promise<Command>;
      programFor(argv: readonly string[]): Promise<Command>;
      COMMANDS: ReadonlyArray<{ name: string; description: string; options: boolean }>;
    };
    const whole = await buildProgram();
    expect((await programFor(['--help'])).helpInformation()).toBe(whole.helpInformation());
    expect(COMMANDS.map((entry) => [entry.name, entry.description, entry.options])).toEqual(
      whole.commands.map((command) => [command.name(), command.description(), command.options.length > 0]),
    );
    // A start that names a command registers that one only, for real.
    expect((await programFor(['-h', 'verify'])).helpInformation()).toBe(whole.helpInformation());
    const verify = await programFor(['verify', 'merchant', '--help']);
    expect(verify.commands.map((command) => command.name())).toEqual(['verify']);
    expect(verify.commands[0]!.helpInformation()).toBe(
      whole.commands.find((command) => command.name() === 'verify')!.helpInformation(),
    );
  });

  it('help, an unknown command and a flag error answer with help text, one line and exit 2', () => {
    const help = runCli(['help', 'verify']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('verify a wallet service');
    const unknown = runCli(['verfy']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("wallet-conformance: unknown command 'verfy'\n(Did you mean verify?) (see --help)\n");
    const missing = runCli(['verify', 'merchant']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      'wallet-conformance: --callback-url is required (or merchant.callbackUrl in wallet-conformance.yaml)\n',
    );
  });
});
