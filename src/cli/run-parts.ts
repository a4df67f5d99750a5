import type { Report, Target } from '../runner/types.js';
import type { GeneratedRun } from '../property/generated-run.js';

/**
 * The work of `verify` and `run`, which their actions import once they run (the command files
 * themselves stay light: registering them is all `--help` and a flag error need).
 */
export { EMULATOR_HEADER } from '../emulator/header.js';
export { probeCapabilities } from '../runner/capabilities.js';
export { runSuites } from '../runner/engine.js';
export { preflightMerchant, preflightService, preflightWarnings } from '../runner/preflight.js';
export { loadKeyFile, loadProfile } from './io.js';
export { chooseSuites, finish, generatedOnly, loadRules, progress } from './report-output.js';
export { replayBase } from './replay-command.js';
export { waitForMs } from './wait-for.js';
export { endRun, networkFromFlags } from './network-options.js';
export { protectTarget, scrubOutput, secretSource, settleFlags } from './secrets.js';
export { replayMerchant } from './replay-merchant.js';

/**
 * The generated cases after the suites (`--generate N`); with N = 0 (the default) the report stays
 * as it is and fast-check and the properties, which derive arbitraries from the spec, are never loaded.
 */
export async function addGenerated(report: Report, target: Target, run: GeneratedRun): Promise<Report> {
  if (run.numRuns <= 0) return report;
  return (await import('../property/generated-run.js')).addGenerated(report, target, run);
}
