/**
 * One run of suites against a target, as named steps: set up (probe the control API, start the
 * callback receiver), judge a target that stopped answering during that set-up, run each case (or
 * skip it with the reason), judge a target that stopped answering during a case, clean up (stop the
 * receiver, restore the control state), and write the report.
 */
import type { Rule } from '../core/rules.js';
import type { RunCutError } from '../net/run-session.js';
import { probeCapabilities, type Capabilities, type ControlRoute } from './capabilities.js';
import { missingNeed } from './case-needs.js';
import { findCheck } from './checks/index.js';
import type { Case, Suite } from './model.js';
import type { Exchange } from './observation.js';
import { startReceiver, type Receiver } from './receiver.js';
import { restoreControlState, snapshotControlState } from './restore.js';
import type { RunContext } from './run-context.js';
import { runCaseInForms, type CaseRun } from './run-case.js';
import type { RunEvent, RunOptions } from './run-options.js';
import { stepNeedsReceiver } from './step-kinds.js';
import { makeStrangerKeys } from './stranger-keys.js';
import { stoppedAnswering, type Sent } from './target-stopped.js';
import { describeTarget, type CheckResult, type Report, type Status, type Target } from './types.js';
import { assumptionsOf, skipNotes } from './verdict.js';

/** How many of the run's last exchanges the trail keeps: a stopped target is judged by its last inputs. */
const TRAIL_LENGTH = 200;

/** The run session: one run's state, from its set-up to its report. */
export class SuiteRun {
  private readonly started = performance.now();
  private readonly target: Target;
  private readonly rules: Map<string, Rule>;
  private readonly strict: boolean;
  private readonly emit: (event: RunEvent) => void;
  private readonly results: CheckResult[] = [];
  private readonly notes: string[] = [];
  /** The run's last exchanges, each with its case. */
  private readonly trail: Sent[] = [];
  /** Every case of the run in order, to find a case's rules and the next case's. */
  private readonly order: Array<{ suite: string; testCase: Case }>;
  private readonly touched = new Set<ControlRoute>();
  private readonly stranger: CaseRun['stranger'];
  private capabilities: Capabilities = { routes: {} };
  private snapshot: ReturnType<typeof snapshotControlState> | undefined;
  private receiver: Receiver | undefined;
  /** Where the target stopped answering, as the cases left say it ("after case …"). */
  private stoppedWhere: string | undefined;

  constructor(
    private readonly options: RunOptions,
    private readonly context: RunContext,
  ) {
    this.target = { ...options.target, transport: context.transport };
    this.rules = new Map(options.rules.map((rule) => [rule.id, rule]));
    this.strict = options.strict ?? false;
    this.emit = options.onEvent ?? (() => undefined);
    this.stranger = makeStrangerKeys(
      this.target.side === 'service' ? this.target.publicKey.bits : this.target.privateKey.bits,
    );
    this.order = options.suites.flatMap((suite) => suite.cases.map((testCase) => ({ suite: suite.name, testCase })));
  }

  /** Runs every case and returns report.json's content. */
  async run(): Promise<Report> {
    this.emit({ kind: 'start', total: this.expectationCount(), side: this.target.side });
    await this.setUp();
    this.judgeSetUpStop();
    try {
      for (const suite of this.options.suites) for (const testCase of suite.cases) await this.runCase(suite, testCase);
    } finally {
      await this.cleanUp();
    }
    return this.report();
  }

  private expectationCount(): number {
    return this.order.reduce(
      (sum, { testCase }) => sum + testCase.steps.reduce((inCase, step) => inCase + (step.expect?.length ?? 0), 0),
      0,
    );
  }

  /** Probes the control API (a service's, when not given) and starts the callback receiver when a case needs it. */
  private async setUp(): Promise<void> {
    const { target, options } = this;
    this.capabilities =
      options.capabilities ?? (target.side === 'service' ? await probeCapabilities(target) : { routes: {} });
    if (target.side !== 'service') return;
    this.snapshot = snapshotControlState(this.capabilities);
    const needsReceiver =
      (target.controlToken || target.listenPort !== undefined) &&
      this.order.some(({ testCase }) => testCase.steps.some(stepNeedsReceiver));
    // --listen opens the receiver to the network: a real service must reach it.
    if (needsReceiver)
      this.receiver = await startReceiver(
        target.listenPort ?? 0,
        target.listenHost ?? (target.listenPort === undefined && !target.publicUrl ? '127.0.0.1' : '0.0.0.0'),
        target.publicUrl,
      );
  }

  /**
   * A target that stopped answering before the first case, on the run's own set-up (the control API
   * probe, pre-flight): that input is what it stopped after; one failed result, and no case runs.
   */
  private judgeSetUpStop(): void {
    const { session } = this.context.network;
    const stop = session.stopped;
    const firstCase = this.order[0];
    if (stop?.reason !== 'target-gone' || !firstCase) return;
    const running = { suite: firstCase.suite, case: firstCase.testCase.id };
    const gone = stoppedAnswering(
      [],
      this.target.side,
      stop.message,
      running,
      this.caseRules,
      this.rules,
      session.lastSent,
    );
    this.record({ ...gone.result, id: `${gone.result.suite}/${gone.result.case}/target-stopped` });
    this.stoppedWhere = 'during the set-up, before the first case';
  }

  /** The rules a case's checks are judged under (with `next`, the following case's). */
  private readonly caseRules = (suiteName: string, id: string, next = false): string[] => {
    const at = this.order.findIndex((entry) => entry.suite === suiteName && entry.testCase.id === id);
    const found = this.order[next ? at + 1 : at]?.testCase;
    if (!found || at < 0) return [];
    return [
      ...new Set(
        found.steps.flatMap((step) => (step.expect ?? []).flatMap((expectation) => expectation.rules ?? found.rules)),
      ),
    ];
  };

  private record(result: CheckResult): void {
    const assumptions = assumptionsOf(result.rules, this.rules);
    const full = assumptions.length ? { ...result, assumptions } : result;
    this.results.push(full);
    this.emit({ kind: 'result', result: full });
  }

  /** Runs one case, or skips it with the reason; then judges a stop that happened during it. */
  private async runCase(suite: Suite, testCase: Case): Promise<void> {
    this.emit({ kind: 'case', suite: suite.name, testCase: testCase.id, title: testCase.title });
    const resultId = numberRepeats(`${suite.name}/${testCase.id}`);
    // The target stopped answering or --timeout ran out: what is left is not run (skipped with the reason), not failed.
    const stopBefore = this.context.network.session.stopped;
    const skip = stopBefore
      ? `not run: ${this.stoppedWhere ? `the target stopped answering ${this.stoppedWhere}` : stopBefore.message}`
      : missingNeed(testCase, this.target, this.capabilities);
    if (skip) return this.skipCase(suite, testCase, skip, resultId);
    const verdicts = await runCaseInForms(suite, testCase, this.caseRun(suite, testCase));
    for (const result of verdicts) this.record({ ...result, id: resultId(result.id) });
    const stopNow = this.context.network.session.stopped;
    if (stopNow) this.judgeCaseStop(suite, testCase, stopNow);
  }

  private skipCase(suite: Suite, testCase: Case, reason: string, resultId: (check: string) => string): void {
    for (const step of testCase.steps) {
      for (const expectation of step.expect ?? []) {
        this.record({
          id: resultId(expectation.check),
          suite: suite.name,
          case: testCase.id,
          title: expectation.title ?? `${testCase.title}: ${findCheck(expectation.check)?.title ?? expectation.check}`,
          rules: expectation.rules ?? testCase.rules,
          status: 'skipped',
          message: reason,
        });
      }
    }
  }

  private caseRun(suite: Suite, testCase: Case): CaseRun {
    const { target, context, rules, strict, stranger, receiver, emit, touched, trail } = this;
    const sent = (exchanges: Exchange[]) => {
      trail.push(...exchanges.map((exchange) => ({ suite: suite.name, case: testCase.id, exchange })));
      if (trail.length > TRAIL_LENGTH) trail.splice(0, trail.length - TRAIL_LENGTH);
    };
    return { target, context, rules, strict, stranger, receiver, emit, touched, sent };
  }

  /**
   * The case during which the run stopped: its failures are the stop's, not verdicts of their own.
   * A target that stopped answering (it answered earlier, then refused) stopped after what the run
   * sent: one failed result says so, with the last input it received. --timeout is the tool's stop.
   */
  private judgeCaseStop(suite: Suite, testCase: Case, stop: RunCutError): void {
    const running = { suite: suite.name, case: testCase.id };
    const gone =
      stop.reason === 'target-gone'
        ? stoppedAnswering(this.trail, this.target.side, stop.message, running, this.caseRules, this.rules)
        : undefined;
    const why = gone
      ? `not judged: the target stopped answering (see ${gone.result.suite}/${gone.result.case}/target-stopped)`
      : `not judged: ${stop.message}`;
    for (const result of this.results)
      if (
        result.case === testCase.id &&
        result.suite === suite.name &&
        !result.fault &&
        (result.status === 'failed' || result.status === 'warning')
      )
        Object.assign(result, { status: 'skipped', message: why });
    if (gone) {
      this.stoppedWhere = `after case ${gone.after}`;
      this.record({ ...gone.result, id: `${gone.result.suite}/${gone.result.case}/target-stopped` });
    }
  }

  /** Stops the receiver and puts back the control state the run changed. */
  private async cleanUp(): Promise<void> {
    await this.receiver?.close();
    if (this.snapshot && this.target.side === 'service')
      this.notes.push(...(await restoreControlState(this.snapshot, this.touched, this.target)));
  }

  private report(): Report {
    const { results, rules, options } = this;
    const stop = this.context.network.session.stopped;
    const count = (status: Status) => results.filter((result) => result.status === status).length;
    const skipped = skipNotes(results, rules);
    const stopNote = stop
      ? [
          this.stoppedWhere
            ? `the target stopped answering ${this.stoppedWhere} (${stop.message}): a failure, and the cases left were not run`
            : stop.message,
        ]
      : [];
    const report: Report = {
      target: describeTarget(this.target),
      summary: {
        passed: count('passed'),
        failed: count('failed'),
        warnings: count('warning'),
        skipped: count('skipped'),
        durationMs: Math.round(performance.now() - this.started),
        skippedMust: skipped.skippedMust,
      },
      results,
      notes: [...stopNote, ...skipped.notes, ...this.notes],
      ...(options.preflight ? { preflight: options.preflight } : {}),
    };
    this.emit({ kind: 'done', report });
    return report;
  }
}

/** Result ids of one case: `suite/case/check`, a repeated check numbered `#2`, `#3`… */
function numberRepeats(prefix: string): (check: string) => string {
  const seen = new Map<string, number>();
  return (check) => {
    const n = (seen.get(check) ?? 0) + 1;
    seen.set(check, n);
    return `${prefix}/${check}${n > 1 ? `#${n}` : ''}`;
  };
}
