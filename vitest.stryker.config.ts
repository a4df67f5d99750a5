import { defineConfig } from 'vitest/config';

/**
 * The unit tests beside the code `npm run mutate` mutates, for StrykerJS: no global setup (no tsc
 * build), no end-to-end tests (they spawn servers), so a mutant runs in well under a second.
 * codec.test.ts stays in `npm test` only: its property-based round trips over fresh 4096-bit keys
 * take ~9 s per run; codec-reasons.test.ts covers the codec for Stryker.
 */
export default defineConfig({
  test: {
    include: [
      'src/crypto/**/*.test.ts',
      'src/runner/checks/**/*.test.ts',
      'src/wire/**/*.test.ts',
      'src/runner/leniency.test.ts',
      'src/runner/verdict.test.ts',
      'src/runner/verdict-table.test.ts',
      'src/runner/stopped-answering.test.ts',
    ],
    exclude: ['src/crypto/codec.test.ts'],
    testTimeout: 30_000,
  },
});
