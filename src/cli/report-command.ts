import type { Command } from 'commander';
import { registerAnnotateCommand } from './report-annotate.js';
// Reading (ajv, the report schema), merging and writing reports are imported by the actions.

interface MergeFlags {
  reports: string;
  baseline?: string;
}

/** `report merge DIR...`: one set of four reports from the reports of `--shard i/n` runs. */
export function registerReportCommand(program: Command): void {
  const report = program.command('report').description('work with written reports');
  report
    .command('merge')
    .description('join the reports of --shard i/n runs (one directory each) into one set of four reports')
    .argument('<dir...>', 'report directories, each holding a report.json')
    .option('--reports <dir>', 'where the merged report.json, junit.xml, report.html and summary.md go', 'reports')
    .option('--baseline <report.json>', 'an earlier report.json: only checks worse than it fail (exit 1)')
    .action(async (dirs: string[], flags: MergeFlags) => {
      const { readReportDir } = await import('./report-read.js');
      const { mergeShards } = await import('../reporters/merge.js');
      const { summaryLine } = await import('../reporters/console.js');
      const { loadSuites } = await import('../runner/suite.js');
      const { finish } = await import('./report-output.js');
      const order = new Map(loadSuites().map((suite) => [suite.name, suite.cases.map((c) => c.id)]));
      const merged = mergeShards(dirs.map(readReportDir), order);
      process.stdout.write(`merged ${dirs.length} report(s): ${summaryLine(merged.summary)}\n`);
      process.exitCode = finish(merged, {
        reports: flags.reports,
        ...(flags.baseline === undefined ? {} : { baseline: flags.baseline }),
      });
    });
  registerAnnotateCommand(report, async (dir) => (await import('./report-read.js')).readReportDir(dir));
}
