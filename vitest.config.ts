import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (tests beside the code in src/, no build, seconds) and `e2e` (test/ and
 * examples/: real servers on loopback and the real CLI, which runs dist/, so the global setup builds
 * it once first). `npm test` runs both; `npm run test:unit` only the first.
 *
 * At least two test files run at once, even on a 2-core machine (vitest's default there is one):
 * most end-to-end time is spent waiting on child processes and servers, so two workers halve the
 * run (CI: 454 s → 240 s on 2 cores). Every test writes only into its own temporary folders.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
