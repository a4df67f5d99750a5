// @ts-check
/**
 * `npm run mutate`: mutation testing of what the verdicts rest on: the checks, the crypto, the wire
 * definitions (acknowledgement, callback delivery, crypto failures), leniency and the verdict model
 * (issue 11: score >= 90%).
 * Only the unit tests beside the code run (vitest.stryker.config.ts: no tsc build, no servers),
 * one mutant at a time (the machine's 2 cores are shared), incremental between runs.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  // throwaway-certificates.ts makes TLS certificates for loopback runs (not the interface's RSA);
  // test/https*.test.ts cover it end to end, and each of its calls generates 2048-bit keys.
  mutate: [
    'src/runner/checks/**/*.ts',
    'src/crypto/**/*.ts',
    'src/wire/**/*.ts',
    'src/runner/leniency.ts',
    'src/runner/verdict.ts',
    'src/runner/target-stopped.ts',
    '!**/*.test.ts',
    '!src/crypto/throwaway-certificates.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 1,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // The sandbox needs src/, test/support and the committed key vectors; not the end-to-end tests or builds.
  ignorePatterns: [
    'dist',
    'bench',
    'examples',
    'reports',
    'spec/pacts',
    'test/*.ts',
    'test/fixtures',
    'test/doubles',
    '.ci',
  ],
  tempDirName: 'reports/.stryker-tmp',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 10000,
};
