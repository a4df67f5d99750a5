// .ci/runtime-tests.txt is what .ci/run runs again on Node 22 and Node 24: every line must name test
// files that exist (a renamed file would silently drop a runtime path) and say why it is there.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const lines = readFileSync(join(ROOT, '.ci/runtime-tests.txt'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'));

describe('.ci/runtime-tests.txt', () => {
  it('lists test files or folders that exist, each with the runtime path it exercises', () => {
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      const [filter = '', reason = ''] = line.split('#').map((part) => part.trim());
      expect(existsSync(join(ROOT, filter)), filter).toBe(true);
      if (statSync(join(ROOT, filter)).isFile()) expect(filter, filter).toMatch(/\.test\.ts$/);
      expect(reason.length, `${filter} says why it is in the runtime pass`).toBeGreaterThan(10);
    }
  });

  it('is what .ci/run runs on each extra Node, on the dist/ already built, with the SQLite stores on node:sqlite', () => {
    const run = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(run).toContain('.ci/runtime-tests.txt');
    expect(run).toMatch(/RUNTIMES=\(22 24\)/);
    expect(run).toMatch(
      /WALLET_CONFORMANCE_DIST_BUILT=1 WALLET_CONFORMANCE_SQLITE=node:sqlite npx vitest run "\$\{RUNTIME_TESTS\[@\]\}"/,
    );
  });
});
