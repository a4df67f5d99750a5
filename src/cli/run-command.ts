import type { Command } from 'commander';
import type { Report } from '../runner/types.js';
import { generateFlags } from './options.js';
import type { CommonRunOptions } from './report-output.js';
// Registration imports only flags.ts; the work (emulator, merchant, runner) is imported by the action.
import { sharedOption } from './flags.js';

/** Merges the service and the merchant reports of `run` into one report.json. */
function mergeReports(service: Report, merchant: Report): Report {
  return {
    target: { embedded: true, service: service.target, merchant: merchant.target },
    summary: {
      passed: service.summary.passed + merchant.summary.passed,
      failed: service.summary.failed + merchant.summary.failed,
      warnings: service.summary.warnings + merchant.summary.warnings,
      skipped: service.summary.skipped + merchant.summary.skipped,
      durationMs: service.summary.durationMs + merchant.summary.durationMs,
      skippedMust: (service.summary.skippedMust ?? 0) + (merchant.summary.skippedMust ?? 0),
    },
    results: [...service.results, ...merchant.results],
    notes: [
      ...(service.notes ?? []).map((note) => `service side: ${note}`),
      ...(merchant.notes ?? []).map((note) => `merchant side: ${note}`),
    ],
  };
}

/** The action of `run`: starts the embedded pair, runs the suites on each side, writes the reports. */
async function runEmbedded(command: Command): Promise<void> {
  const {
    addGenerated,
    chooseSuites,
    finish,
    generatedOnly,
    loadRules,
    progress,
    protectTarget,
    replayBase,
    runSuites,
    settleFlags,
  } = await import('./run-parts.js');
  const { summaryLine } = await import('../reporters/console.js');
  const { defaultNetwork } = await import('../net/network-config.js');
  const { useNetwork } = await import('../runner/http-client.js');
  const { startEmbedded } = await import('./embedded.js');
  const flags = settleFlags<CommonRunOptions & { tls?: boolean }>(command, { sections: [], secrets: {} });
  const rules = loadRules();
  // The hand-triggered callback case is for `verify service --listen` (a person acts on a real
  // service); the embedded run has nobody to act, so it is left out rather than counted as skipped.
  chooseSuites('both', flags);
  const serviceSuites = chooseSuites('service', flags, { allowEmpty: true })
    .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }))
    .filter((suite) => suite.cases.length > 0);
  const merchantSuites = chooseSuites('merchant', flags, { allowEmpty: true });
  const embedded = await startEmbedded(flags.tls ? { tls: true } : {});
  protectTarget(embedded.service);
  protectTarget(embedded.merchant);
  // The embedded servers are the toolkit's own: reached directly (never through a proxy), trusting the run's CA.
  useNetwork(defaultNetwork({ tls: { extraCa: embedded.ca ? [embedded.ca] : [], insecure: false } }));
  try {
    process.stdout.write(`emulator ${embedded.service.baseUrl}, reference merchant ${embedded.merchant.callbackUrl}\n`);
    const onEvent = progress(flags);
    const strict = flags.strict ?? false;
    const generate = {
      ...generateFlags(flags as { generate?: string; seed?: string }),
      reportsDir: flags.reports,
      rules,
      strict,
      onEvent,
      ...generatedOnly(flags),
    };
    const service = await runSuites({ target: embedded.service, suites: serviceSuites, rules, strict, onEvent });
    await addGenerated(service, embedded.service, generate);
    const merchant = await runSuites({ target: embedded.merchant, suites: merchantSuites, rules, strict, onEvent });
    await addGenerated(merchant, embedded.merchant, generate);
    const report = mergeReports(service, merchant);
    process.stdout.write(`both sides: ${summaryLine(report.summary)}\n`);
    process.exitCode = finish(report, { ...flags, replay: replayBase(command) });
  } finally {
    await embedded.close();
  }
}

/** `run`: the embedded default: emulator + reference merchant on free ports, every suite against both. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'start the service emulator and the reference merchant, run every suite against both, write the reports',
    )
    .addOption(sharedOption('reports', 'where the reports go'))
    .addOption(sharedOption('strict'))
    .addOption(sharedOption('suite', 'only suites whose name matches'))
    .addOption(sharedOption('suites'))
    .addOption(sharedOption('shard'))
    .addOption(sharedOption('case', 'only this case: suite/case or a glob (repeatable or a comma list)'))
    .addOption(sharedOption('baseline'))
    .addOption(sharedOption('failOnSkip', 'exit 1 when a check of a MUST rule was skipped'))
    .addOption(sharedOption('verbose'))
    .addOption(
      sharedOption(
        'generate',
        'after the suites, N generated cases per property on each side (property-based; 0: none)',
      ),
    )
    .addOption(sharedOption('seed', 'seed of the generated cases: the same seed replays the same cases'))
    .option(
      '--tls',
      'serve the emulator and the reference merchant over HTTPS (a throwaway CA made for the run) and run everything through it',
    )
    .addOption(sharedOption('config'))
    .action((_given: CommonRunOptions & { tls?: boolean }, command: Command) => runEmbedded(command));
}
