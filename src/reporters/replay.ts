import type { CheckResult, Report } from '../runner/types.js';

/** The id `--case` takes for a result's case: `suite/case` (`merchant/idempotency/redelivered-deposit`). */
function caseIdOf(result: Pick<CheckResult, 'suite' | 'case'>): string {
  return `${result.suite}/${result.case}`;
}

/** The `--generate N --seed S` of a generated result, when it is one. */
function generatedReplay(result: CheckResult): string | undefined {
  const generated = result.evidence?.generated as { replay?: unknown } | undefined;
  return typeof generated?.replay === 'string' ? generated.replay : undefined;
}

/** The one command that replays just this result's case: the run's command, `--case ID`, and `--generate N --seed S` for a generated case. */
export function replayCommand(result: CheckResult, command: string): string {
  const generated = result.suite.startsWith('generated/') ? generatedReplay(result) : undefined;
  return `${command} --case ${caseIdOf(result)}${generated ? ` ${generated}` : ''}`;
}

/**
 * The report with its replay command (`replay.command`) and, on every result that did not pass or
 * skip, the command replaying just its case. `command` holds no secret: the CLI builds it from the
 * flags, naming where a secret came from instead of its value.
 */
export function withReplay(report: Report, command: string): Report {
  return {
    ...report,
    replay: { command },
    results: report.results.map((result) =>
      result.status === 'failed' || result.status === 'warning'
        ? { ...result, replay: replayCommand(result, command) }
        : result,
    ),
  };
}
