import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (tests beside the code in src/, no build, seconds) and `e2e` (test/ and
 * examples/: real servers on loopback and the real CLI, which runs dist/, so the global setup builds
 * it once first). `npm test` runs both; `npm run test:unit` only the first.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
