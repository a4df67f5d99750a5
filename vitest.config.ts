import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (tests beside the code in src/, no build, seconds) and `e2e` (test/ and
 * examples/: real servers on loopback and the real CLI, which runs dist/, so the global setup builds
 * it once first). `npm test` runs both; `npm run test:unit` only the first.
 *
 * One more test file runs at once than there are cores (vitest's default is one fewer): much
 * end-to-end time is spent waiting on child processes and servers. On the 2-core CI machine the suite
 * took 507 s on three workers and 535 s on four (the cores were then the limit). Every test writes
 * only into its own temporary folders.
 *
 * The unit files a worker runs share one module graph (`isolate: false`): importing src/ again for
 * each file cost more than the unit tests themselves. A unit test puts back any process-wide state it
 * changes (docs/decisions/0118-unit-tests-share-their-worker.md).
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: Math.max(3, availableParallelism() + 1),
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], isolate: false } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
