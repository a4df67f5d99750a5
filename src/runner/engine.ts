/**
 * The engine's entry point: opens a run's network, runs the suites in a run session
 * (`suite-run.ts`), and closes what the run opened.
 */
import { currentNetwork } from './http-client.js';
import { openRun } from './run-context.js';
import type { RunOptions } from './run-options.js';
import { SuiteRun } from './suite-run.js';
import type { Report } from './types.js';

export type { RunEvent, RunOptions } from './run-options.js';

/**
 * Runs suites against a target and returns report.json's content. Checks never throw for a bad
 * target. The run's network is opened once and closed when the run ends, however it ends.
 */
export async function runSuites(options: RunOptions): Promise<Report> {
  // A transport given in the options wins over the target's own; without either, requests go over the network.
  const run = openRun(options.network ?? currentNetwork(), options.transport ?? options.target.transport);
  try {
    return await new SuiteRun(options, run).run();
  } finally {
    run.close();
  }
}
