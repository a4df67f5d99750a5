import type { CheckResult, Report, Target } from '../runner/types.js';
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
export { replayBase } from './replay-line.js';
export { waitForMs } from './wait-for.js';
export { endRun, networkFromFlags } from './network-options.js';
export { protectTarget, scrubOutput, secretSource, settleFlags } from './secrets.js';
export { replayMerchant } from './replay-merchant.js';

/**
 * The generated cases after the suites (`--generate N`); with N = 0 (the default) the report stays
 * as it is and fast-check and the properties, which derive arbitraries from the spec, are never loaded.
 * Each property's verdict and the seed that replays it are printed: they are part of the run.
 */
export async function addGenerated(report: Report, target: Target, run: GeneratedRun): Promise<Report> {
  if (run.numRuns <= 0) return report;
  const before = report.results.length;
  const merged = await (await import('../property/generated-run.js')).addGenerated(report, target, run);
  const { scrubOutput } = await import('./secrets.js');
  process.stdout.write(scrubOutput(generatedLines(target.side, merged.results.slice(before), run)));
  return merged;
}

/** The console lines of a side's generated properties: how many, the seed, each property's verdict. */
function generatedLines(
  side: Target['side'],
  results: readonly CheckResult[],
  run: Pick<GeneratedRun, 'numRuns' | 'only'>,
): string {
  if (results.length === 0)
    return run.only
      ? `${side} side: generated: --case names no generated ${side} property, so none ran (name one: --case generated/${side}/<property>)\n`
      : `${side} side: generated: no property of this side ran\n`;
  const seeds = new Set(
    results
      .map((result) => (result.evidence as { generated?: { seed?: number } } | undefined)?.generated?.seed)
      .filter((seed) => seed !== undefined),
  );
  const seed =
    seeds.size === 1 ? ` seed ${[...seeds][0]} (replay: --generate ${run.numRuns} --seed ${[...seeds][0]})` : '';
  const lines = [
    `${side} side: generated: ${results.length} propert${results.length === 1 ? 'y' : 'ies'}, ${run.numRuns} cases each,${seed}`,
  ];
  for (const result of results)
    lines.push(`  ${result.status.toUpperCase()} ${result.id} [${result.rules.join(', ')}]: ${result.message}`);
  return `${lines.join('\n')}\n`;
}
