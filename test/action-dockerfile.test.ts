// The Dockerfile without Docker (not on the test machines): its instructions are checked against
// the repository, and its build stage is replayed in a folder holding only what it COPYs (through
// .dockerignore), with the dependencies `npm ci` would install: the TypeScript build and `npm pack`
// must succeed there and the tarball must hold the CLI, the built code, the spec and the suites.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, line continuations joined, comments dropped. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [op = '', ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

const dockerfile = instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
/** Sources of the COPY instructions that read the build context (not another stage). */
const copied = dockerfile
  .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
  .flatMap((i) => i.args.split(/\s+/).slice(0, -1));

/** Whether .dockerignore keeps `source` out of the context: the last pattern that matches decides, `!` lets it back in. */
function isIgnored(source: string): boolean {
  let out = false;
  for (const pattern of ignored) {
    const path = pattern.replace(/^!/, '');
    if (source === path || source.startsWith(`${path}/`)) out = !pattern.startsWith('!');
  }
  return out;
}

const context = mkdtempSync(join(tmpdir(), 'wc-docker-context-'));
afterAll(() => rmSync(context, { recursive: true, force: true }));

describe('Dockerfile', () => {
  it('builds on node:20-slim and runs wallet-conformance as its entry point, as an unprivileged user', () => {
    expect(dockerfile.filter((i) => i.op === 'FROM').map((i) => i.args.split(' ')[0])).toEqual([
      'node:20-slim',
      'node:20-slim',
    ]);
    expect(dockerfile.find((i) => i.op === 'ENTRYPOINT')?.args).toBe('["wallet-conformance"]');
    expect(dockerfile.find((i) => i.op === 'USER')?.args).toBe('node');
    expect(
      dockerfile.some((i) => i.op === 'RUN' && /npm install --global .*\/tmp\/wallet-conformance\.tgz/.test(i.args)),
    ).toBe(true);
  });

  it('copies only files that exist and that .dockerignore lets through, and every folder the package ships', () => {
    for (const source of copied) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(isIgnored(source), source).toBe(false);
    }
    const files = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    // dist is built in the image; everything else the package ships must be copied in.
    expect(files.filter((entry) => entry !== 'dist' && !copied.includes(entry))).toEqual([]);
    for (const heavy of ['node_modules', 'dist', 'reports', 'keys', '.git']) expect(ignored, heavy).toContain(heavy);
    // The tests and the merchant-client example stay out; the examples the manual links are let back in.
    expect([isIgnored('test'), isIgnored('examples/merchant-client'), isIgnored('examples/decrypt')]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('builds and packs the package from the copied files alone', () => {
    for (const source of copied) cpSync(join(ROOT, source), join(context, source), { recursive: true });
    // What `npm ci` puts there.
    symlinkSync(join(ROOT, 'node_modules'), join(context, 'node_modules'));
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
        cwd: context,
        stdio: 'pipe',
      });
    } catch (error) {
      throw new Error(
        `the build stage's tsc failed in the copied context:\n${String((error as { stdout?: Buffer }).stdout ?? '')}`,
        { cause: error },
      );
    }
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: context,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).toString(),
    ) as Array<{ files: Array<{ path: string }> }>;
    const paths = packed[0]!.files.map((file) => file.path);
    for (const path of [
      'bin/wallet-conformance.js',
      'dist/cli/main.js',
      'dist/index.js',
      'dist/msw/browser.js',
      'spec/wallet-api.yaml',
      'spec/rules.yaml',
      'suites/suite.schema.json',
      'package.json',
      'README.md',
      'LICENSE',
      'docs/merchant-guide.md',
      'examples/decrypt/CallbackDecrypt.java',
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(paths.filter((path) => path.startsWith('test/') || path.startsWith('src/'))).toEqual([]);
  }, 180_000);
});
