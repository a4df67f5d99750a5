import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Command } from 'commander';
import { isSafeNumber, LosslessNumber, parse } from 'lossless-json';
import { toValidationView } from '../core/exact-json.js';
import { ConfigError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';
import { mergeShards, type ShardReport } from '../reporters/merge.js';
import { summaryLine } from '../reporters/console.js';
import { loadSuites } from '../runner/suite.js';
import type { Report } from '../runner/types.js';
import { readUserFile } from './io.js';
import { finish } from './report-output.js';
import { registerAnnotateCommand } from './report-annotate.js';

/** The package's own report schema (schemas/report.schema.json). */
export const REPORT_SCHEMA_PATH = join(PACKAGE_ROOT, 'schemas', 'report.schema.json');

let validator: ValidateFunction | undefined;

/** Reads DIR/report.json with exact numbers; a missing or invalid report is a ConfigError naming it. */
export function readReportDir(dir: string): ShardReport {
  const path = join(dir, 'report.json');
  const text = readUserFile(path, 'report').toString('utf8');
  let parsed: unknown;
  try {
    // Counts and times become numbers; only a number a float would change stays its literal digits.
    parsed = parse(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : new LosslessNumber(digits)));
  } catch (error) {
    throw new ConfigError('bad-report', `${path} is not JSON: ${(error as Error).message}`);
  }
  validator ??= new Ajv2020({ strict: false, allErrors: false }).compile(JSON.parse(readUserFile(REPORT_SCHEMA_PATH, 'report schema').toString('utf8')) as object);
  if (!validator(toValidationView(parsed))) {
    const first = validator.errors?.[0];
    throw new ConfigError('bad-report', `${path} is not a wallet-conformance report.json: ${first?.instancePath || '(root)'} ${first?.message ?? 'is invalid'}`);
  }
  const report = parsed as Report & { baseline?: unknown };
  // A shard's own baseline verdict does not carry over: `report merge --baseline` judges the whole.
  delete report.baseline;
  return { source: path, report };
}

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
    .action((dirs: string[], flags: MergeFlags) => {
      const order = new Map(loadSuites().map((suite) => [suite.name, suite.cases.map((c) => c.id)]));
      const merged = mergeShards(dirs.map(readReportDir), order);
      process.stdout.write(`merged ${dirs.length} report(s): ${summaryLine(merged.summary)}\n`);
      process.exitCode = finish(merged, { reports: flags.reports, ...(flags.baseline === undefined ? {} : { baseline: flags.baseline }) });
    });
  registerAnnotateCommand(report, readReportDir);
}
