// msw, @pact-foundation/pact and @redocly/openapi-core are optional peer dependencies: the CLI and
// the library start without them, and a command that needs one says which in one line (exit 2).
// The packages are hidden from the real CLI by a module resolve hook that answers as Node does
// for a package that is not installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isMissingPackage, withOptionalPackage } from '../src/cli/optional-package.js';
import { ROOT } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'wc-optional-peers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hooks = join(dir, 'hide-peers.mjs');
writeFileSync(
  hooks,
  `const HIDDEN = ['msw', '@pact-foundation/pact', '@redocly/openapi-core'];
export async function resolve(specifier, context, next) {
  if (HIDDEN.some((name) => specifier === name || specifier.startsWith(name + '/'))) {
    const error = new Error(\`Cannot find package '\${specifier}' imported from \${context.parentURL}\`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
`,
);
const register = join(dir, 'register.mjs');
writeFileSync(
  register,
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
);

/** The real CLI with the optional peers hidden. */
function withoutPeers(args: string[], input?: string) {
  const run = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(register).href, resolve(ROOT, 'bin/wallet-conformance.js'), ...args],
    {
      input,
      cwd: dir,
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe('the optional peer dependencies', () => {
  it('are not needed to start the CLI or to encrypt', () => {
    expect(withoutPeers(['--help']).status).toBe(0);
    const sealed = withoutPeers(
      [
        'crypto',
        'encrypt',
        '--direction',
        'request',
        '--public-key',
        resolve(ROOT, 'test/vectors/keys/rsa1024-public.pem'),
      ],
      '{}',
    );
    expect(sealed.stderr).toBe('');
    expect(sealed.stdout).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  it('are not needed to load the library', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        pathToFileURL(register).href,
        '--input-type=module',
        '-e',
        `const lib = await import(${JSON.stringify(pathToFileURL(resolve(ROOT, 'dist/index.js')).href)}); console.log(typeof lib.createCallbackHandler);`,
      ],
      { timeout: 60_000 },
    );
    expect(run.stderr.toString()).toBe('');
    expect(run.stdout.toString()).toBe('function\n');
  });

  it.each([
    [['spec', 'lint'], '@redocly/openapi-core', 'spec lint'],
    [['pact', 'generate', '--out', 'pacts'], '@pact-foundation/pact', 'pact generate'],
  ])('%j without %s is one line naming the package and exit 2', (args, name, command) => {
    const run = withoutPeers(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `wallet-conformance: ${command} needs the optional package ${name}, which is not installed: npm install --save-dev '${name}@${name === 'msw' ? '^2.15.0' : name === '@redocly/openapi-core' ? '^2.64.0' : '^16.5.0'}'\n`,
    );
  });
});

describe('withOptionalPackage', () => {
  it('passes on an error from inside the package, which is not a missing package', async () => {
    const inside = Object.assign(
      new Error("Cannot find package 'left-pad' imported from /x/node_modules/msw/lib/core.mjs"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    expect(isMissingPackage(inside, 'msw')).toBe(false);
    await expect(withOptionalPackage('msw', 'x', () => Promise.reject(inside))).rejects.toBe(inside);
  });

  it('names a package missing for CommonJS require as well', () => {
    expect(
      isMissingPackage(
        Object.assign(new Error("Cannot find module '@redocly/openapi-core/lib/config'"), { code: 'MODULE_NOT_FOUND' }),
        '@redocly/openapi-core',
      ),
    ).toBe(true);
  });
});
