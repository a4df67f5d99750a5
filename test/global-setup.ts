import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * End-to-end tests run the real CLI (`bin/wallet-conformance.js` → `dist/`), so build once
 * before any test: a stale dist would test yesterday's code. `.ci/run` sets
 * WALLET_CONFORMANCE_DIST_BUILT=1 for its full suite, whose dist/ npm ci's prepare script built from
 * the same tree a minute earlier, and for its runtime passes on Node 22 and 24 (the build is the
 * same on every Node).
 */
export default function setup(): void {
  const root = resolve(import.meta.dirname, '..');
  if (process.env.WALLET_CONFORMANCE_DIST_BUILT === '1' && existsSync(resolve(root, 'dist/cli/main.js'))) return;
  execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
