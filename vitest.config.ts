import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
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
