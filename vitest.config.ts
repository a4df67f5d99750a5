import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The end-to-end files that take longest (measured in CI; the slowest first). They start first:
 * a clean clone has no timing cache, so vitest would order them by size and one could start last
 * and hold the run open alone on one worker.
 */
const LONGEST_FIRST = [
  'test/java-doubles.test.ts',
  'test/property-service.test.ts',
  'test/derived-merchant-doubles.test.ts',
  'test/property-doubles.test.ts',
  'test/go-receiver.test.ts',
  'test/merchant-faults.test.ts',
  'test/observe-cli.test.ts',
  'test/service-faults.test.ts',
  'test/service-policies.test.ts',
  'test/postgres-multi-instance.test.ts',
];

/** vitest's order (projects one after another), with the longest files of LONGEST_FIRST moved to the front of theirs. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const projects = [...new Set(ordered.map((file) => file.project.name))];
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(name));
      return [projects.indexOf(file.project.name), at < 0 ? LONGEST_FIRST.length : at];
    };
    return ordered.sort((a, b) => {
      const [projectA, placeA] = rank(a);
      const [projectB, placeB] = rank(b);
      return projectA! - projectB! || placeA! - placeB!;
    });
  }
}

/**
 * Two projects: `unit` (tests beside the code in src/, no build, seconds) and `e2e` (test/ and
 * examples/: real servers on loopback and the real CLI, which runs dist/, so the global setup builds
 * it once first). `npm test` runs both; `npm run test:unit` only the first.
 *
 * More test files run at once than there are cores (vitest's default is one fewer): most end-to-end
 * time is spent waiting on child processes and servers, so on a 2-core machine three workers keep
 * both cores busy where two leave them idle while a double starts or a run settles. Every test
 * writes only into its own temporary folders.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
    maxWorkers: Math.max(3, availableParallelism()),
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
