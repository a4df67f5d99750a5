import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * End-to-end tests run the real CLI (`bin/wallet-conformance.js` → `dist/`), so build once
 * before any test: a stale dist would test yesterday's code.
 */
export default function setup(): void {
  const root = resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
