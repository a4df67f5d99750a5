// What `npm pack` ships is what users install: a LICENSE, no source map pointing at src/ (which is
// not shipped), and a CLI without the developer's `generate` (it writes into src/generated; only
// `npm run generate`, through src/cli/dev.ts, has it).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from './support/cli.js';

let shipped: string[] = [];

beforeAll(() => {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (pack.status !== 0) throw new Error(`npm pack --dry-run failed: ${pack.stderr}`);
  shipped = (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
}, 90_000);

describe('the packed package', () => {
  it('holds the MIT LICENSE that package.json names', () => {
    expect(shipped).toContain('LICENSE');
    const license = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string }).license;
    expect(license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('ships the compiled CLI and library, the manual, and no source map or TypeScript source', () => {
    expect(shipped).toEqual(
      expect.arrayContaining([
        'bin/wallet-conformance.js',
        'dist/cli/main.js',
        'dist/index.js',
        'dist/index.d.ts',
        'README.md',
        'docs/README.md',
        'assets/observe-ui/app.js',
      ]),
    );
    expect(shipped.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(
      shipped.filter((path) => path.startsWith('src/') || (path.endsWith('.ts') && !path.endsWith('.d.ts'))),
    ).toEqual([]);
    const mapped = shipped.filter(
      (path) => path.endsWith('.js') && readFileSync(join(ROOT, path), 'utf8').includes('//# sourceMappingURL='),
    );
    expect(mapped).toEqual([]);
  });

  it('ships no developer entry: neither src/cli/dev.ts compiled nor the generate command', () => {
    expect(shipped.filter((path) => /^dist\/cli\/(dev|generate-command|cli-reference)\./.test(path))).toEqual([]);
    const help = runCli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}verify\b/m);
    expect(help.stdout).not.toMatch(/^ {2}generate\b/m);
    const generate = runCli(['generate', '--check']);
    expect(generate.status).toBe(2);
    expect(generate.stderr).toMatch(/unknown command 'generate'/);
  });
});
