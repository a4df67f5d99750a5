import { join, relative } from 'node:path';
import { readFileSync } from 'node:fs';
import { RULES_PATH } from '../core/package-paths.js';
import { parseRuleCatalog, type Rule } from '../core/rules.js';
import { consoleReporter } from '../reporters/console.js';
import { renderReports } from '../reporters/write-reports.js';
import { parseShard, selectSuites, type Suite } from '../runner/suite.js';
import type { Report } from '../runner/types.js';
import { EXIT } from './exit.js';
import { loadAllSuites } from './user-suites.js';
import { writeUserFile } from './io.js';

/** Flags every suite-running command shares (design.md). */
export interface CommonRunOptions {
  reports: string;
  strict?: boolean;
  suite?: string;
  shard?: string;
  verbose?: boolean;
  /** `--suites DIR` (repeatable): the user's own suite folders, added to the built-in suites. */
  suites?: string[];
}

/** The rule catalog of the package. */
export function loadRules(): Rule[] {
  return parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
}

/** The built-in suites (and the user's, --suites) of one side (or both), narrowed by --suite and --shard. */
export function chooseSuites(side: 'service' | 'merchant' | 'both', options: CommonRunOptions): Suite[] {
  const all = loadAllSuites(options.suites ?? [], loadRules()).filter((suite) => side === 'both' || suite.side === side);
  return selectSuites(all, { ...(options.suite ? { glob: options.suite } : {}), ...(options.shard ? { shard: parseShard(options.shard) } : {}) });
}

/** A console reporter on stderr-free stdout. */
export function progress(options: CommonRunOptions) {
  return consoleReporter((text) => process.stdout.write(text), { verbose: options.verbose ?? false });
}

/** Writes the four report files and returns the exit status: 1 when a MUST check (or, strict, any check) failed. */
export function finish(report: Report, options: CommonRunOptions): number {
  for (const file of renderReports(report)) writeUserFile(join(options.reports, file.path), file.contents, { overwrite: true });
  const html = join(options.reports, 'report.html');
  process.stdout.write(`reports: ${relative(process.cwd(), html) || html} (also report.json, junit.xml, summary.md)\n`);
  return report.summary.failed > 0 ? EXIT.failed : EXIT.ok;
}
