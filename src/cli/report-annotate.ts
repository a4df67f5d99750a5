import type { Command } from 'commander';
import type { CheckResult, Report } from '../runner/types.js';

/**
 * GitHub Actions workflow commands for a report: one `::error` per failed check and one `::warning`
 * per warning (a failed open point U-* or SHOULD rule, or a MUST binding only the other party), so
 * each shows on the run's summary page under its case and rules. The action (action.yml) runs
 * `wallet-conformance report annotate DIR` after verify; any CI that reads workflow commands can.
 *
 * Escaping follows the workflow-command format: in the message `%`, CR and LF are percent-encoded;
 * in a property (`title=`) `:` and `,` are too, so a message cannot end the command or start another.
 */
export function annotations(report: Pick<Report, 'results'>, options: { warnings?: boolean } = {}): string[] {
  const lines: string[] = [];
  for (const result of report.results) {
    if (result.status === 'failed') lines.push(annotation('error', result));
    else if (result.status === 'warning' && options.warnings !== false) lines.push(annotation('warning', result));
  }
  return lines;
}

function annotation(level: 'error' | 'warning', result: CheckResult): string {
  const rules = result.rules.length > 0 ? ` [${result.rules.join(', ')}]` : '';
  const title = `wallet-conformance ${result.id}${rules}`;
  const message = `${result.message}\n(case ${result.suite}/${result.case}: ${result.title})`;
  return `::${level} title=${escapeProperty(title)}::${escapeData(message)}`;
}

/** The message part of a workflow command. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property value (title=…) of a workflow command. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `report annotate DIR`: the workflow commands of DIR/report.json on stdout; exit 0 (verify's exit code is the verdict). */
export function registerAnnotateCommand(
  report: Command,
  readReport: (dir: string) => Promise<{ report: Report }>,
): void {
  report
    .command('annotate')
    .description('print a GitHub Actions ::error line per failed check (and ::warning per warning) of DIR/report.json')
    .argument('<dir>', 'a report directory holding report.json')
    .option('--no-warnings', 'errors only')
    .action(async (dir: string, flags: { warnings: boolean }) => {
      const lines = annotations((await readReport(dir)).report, { warnings: flags.warnings });
      if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    });
}
