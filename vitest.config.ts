import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (tests beside the code in src/, no build, seconds) and `e2e` (test/ and
 * examples/: real servers on loopback and the real CLI, which runs dist/, so the global setup builds
 * it once first). `npm test` runs both; `npm run test:unit` only the first.
 *
 * Twice as many test files run at once as there are cores (vitest's default is one fewer): most
 * end-to-end time is spent waiting on child processes and servers, so on a 2-core machine four
 * workers keep both cores busy where two leave them idle while a double starts or a run settles
 * (CI: 1,363 s of tests took 507 s on three workers). Every test writes only into its own
 * temporary folders.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: Math.max(4, 2 * availableParallelism()),
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
