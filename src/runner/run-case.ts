/**
 * One case of a run: its steps in order, each step's checks judged into results, and, for a
 * merchant case that leaves a payload form open, one run per form merged into one verdict per check.
 */
import { randomUUID } from 'node:crypto';
import type { Rule } from '../core/rules.js';
import type { ControlRoute } from './capabilities.js';
import { findCheck } from './checks/index.js';
import { evidenceOf } from './evidence.js';
import { mergeAmountForms, mergeSpellings } from './form-merge.js';
import type { AmountForm, Spelling } from './merchant-steps.js';
import type { Case, Step, Suite } from './model.js';
import type { CheckContext, Exchange, StepOutcome } from './observation.js';
import { expectationProblem } from './params.js';
import type { Receiver } from './receiver.js';
import type { RunContext } from './run-context.js';
import type { RunEvent } from './run-options.js';
import { FAULT_WORDS, faultOf, type RunFault, type StepFault } from './step-fault.js';
import { routesOfStep, runStep, type CaseState } from './step-kinds.js';
import type { makeStrangerKeys } from './stranger-keys.js';
import { fill, type TemplateScope } from './template.js';
import type { CheckResult, Finding, Target } from './types.js';
import { judgedRules, judgeFinding } from './verdict.js';

/** How one run of a case writes its callback payloads (U-CB-FIELDS). */
interface PayloadForm {
  spelling: Spelling;
  amounts?: AmountForm;
}

/** What every case of a run shares. */
export interface CaseRun {
  target: Target;
  context: RunContext;
  rules: Map<string, Rule>;
  strict: boolean;
  stranger: ReturnType<typeof makeStrangerKeys>;
  receiver: Receiver | undefined;
  emit(event: RunEvent): void;
  /** Control routes that changed the target's state during the run (restored at the end). */
  touched: Set<ControlRoute>;
  /** Records what a step sent (the run's trail). */
  sent(exchanges: Exchange[]): void;
}

/**
 * Runs a case once per payload form it leaves open and returns one verdict per check. U-CB-FIELDS
 * leaves field spellings and the amount's form open: a merchant case may run once per form
 * (`spellings: both`, `amounts: both`), each extra run merged into the base run's verdicts.
 * Result ids are the bare check ids (the caller numbers repeats).
 */
export async function runCaseInForms(suite: Suite, testCase: Case, run: CaseRun): Promise<CheckResult[]> {
  const forms: Pick<Case, 'spellings' | 'amounts'> = run.target.side === 'merchant' ? testCase : {};
  const base: PayloadForm = {
    spelling: 'interface',
    ...(forms.amounts === 'both' ? { amounts: 'number' as const } : {}),
  };
  let verdicts = await runCase(suite, testCase, run, base);
  if (forms.spellings === 'both') {
    const asProvider = await runCase(suite, testCase, run, { ...base, spelling: 'provider' });
    verdicts = verdicts.map((result, i) => mergeSpellings(result, asProvider[i], run.rules, run.strict));
  }
  if (forms.amounts === 'both') {
    const asString = await runCase(suite, testCase, run, { ...base, amounts: 'string' });
    verdicts = verdicts.map((result, i) => mergeAmountForms(result, asString[i], run.rules, run.strict));
  }
  return verdicts;
}

/** The state one run of a case starts from: a fresh case id and template scope. */
function caseState(run: CaseRun, form: PayloadForm): CaseState {
  const { target } = run;
  const scope: TemplateScope = {
    caseId: `wc-${randomUUID().slice(0, 13)}`,
    saved: {},
    ...(target.side === 'service' && target.userId !== undefined ? { userId: target.userId } : {}),
  };
  return {
    scope,
    stranger: run.stranger,
    receiver: run.receiver,
    spelling: form.spelling,
    ...(form.amounts ? { amounts: form.amounts } : {}),
    events: new Map(),
    caseEvents: new Set(),
    lastProbe: undefined,
    prompt: (text) => run.emit({ kind: 'prompt', text }),
    run: run.context,
  };
}

/** Runs one case with one payload form; result ids are the bare check ids. */
async function runCase(suite: Suite, testCase: Case, run: CaseRun, form: PayloadForm): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const state = caseState(run, form);
  const { scope } = state;
  // A failed setup step (no expectations of its own) stops the case: every later check carries its
  // fault (the target's: failed under the check's rules; the setup's or the suite's: exit 2), with
  // the setup step's exchanges as evidence. Nothing is `skipped` for it (docs/decisions/0107-step-faults.md).
  let setup: { fault: StepFault; exchanges: Exchange[] } | undefined;
  for (const step of testCase.steps) {
    const outcome: StepOutcome = { exchanges: [], saved: scope.saved };
    const stepStarted = performance.now();
    const fault = setup ? { ...setup.fault, lost: undefined } : await runOneStep(step, state, outcome, run);
    const durationMs = Math.round(performance.now() - stepStarted);
    // A lost probe read takes only the probe's evidence: the later steps still run (and read it anew).
    if (fault && !fault.lost && !setup && !step.expect?.length) setup = { fault, exchanges: outcome.exchanges };
    const evidence = evidenceOf(outcome.exchanges.length || !setup ? outcome.exchanges : setup.exchanges);
    results.push(...judgeStep({ suite, testCase, step, outcome, fault, durationMs, evidence, scope }, run));
  }
  return results;
}

/** Runs a step into `outcome`; its fault, when it could not give its checks what they judge (a throw included). */
async function runOneStep(
  step: Step,
  state: CaseState,
  outcome: StepOutcome,
  run: CaseRun,
): Promise<StepFault | undefined> {
  let fault: StepFault | undefined;
  try {
    const ran = await runStep(step, run.target, state);
    outcome.exchanges.push(...ran.exchanges);
    if (ran.callbacks) outcome.callbacks = ran.callbacks;
    if (ran.processed) outcome.processed = ran.processed;
    if (ran.delivered) outcome.delivered = ran.delivered;
    fault = ran.fault;
    run.sent(ran.exchanges);
  } catch (error) {
    fault = faultOf(error);
  }
  for (const route of routesOfStep(step)) run.touched.add(route);
  return fault;
}

/** One step as its checks judge it. */
interface JudgedStep {
  suite: Suite;
  testCase: Case;
  step: Step;
  outcome: StepOutcome;
  fault: StepFault | undefined;
  durationMs: number;
  evidence: Record<string, unknown>;
  scope: TemplateScope;
}

type Expectation = NonNullable<Step['expect']>[number];

/** The check of a step's cause that reported it, with its finding and result. */
interface ReportedCause {
  check: string;
  finding: Finding;
  result: CheckResult;
}

/**
 * The results of a step's checks. Within a step, a cause (an undecryptable answer, no answer, no
 * callback) is reported once, by the first check that fails of it, and judged under every rule it
 * keeps the step's checks from judging: a later check of the same cause cannot judge its rule
 * without the data, so it is skipped, and its rules join the first result's (a target that does not
 * answer fails each MUST the answer was to show).
 */
function judgeStep(judged: JudgedStep, run: CaseRun): CheckResult[] {
  const causes = new Map<string, ReportedCause>();
  return (judged.step.expect ?? []).map((expectation) => judgeExpectation(expectation, judged, run, causes));
}

/** One check's result within its step; `causes` holds the causes the step's earlier checks reported. */
function judgeExpectation(
  expectation: Expectation,
  judged: JudgedStep,
  run: CaseRun,
  causes: Map<string, ReportedCause>,
): CheckResult {
  const { suite, testCase } = judged;
  const check = findCheck(expectation.check);
  const ruleIds = expectation.rules ?? testCase.rules;
  const found = findingsOf(expectation, check, judged, run);
  let worst = found.fault
    ? found.findings[0]!
    : (found.findings.find((finding) => finding.status === 'failed') ??
      found.findings.find((finding) => finding.status === 'skipped') ??
      found.findings[0]!);
  const named = judgedRules(worst, ruleIds);
  // A rule the catalogue lacks cannot be weighed (nor shown to bind anyone): the suite's error, not a warning.
  const unknown = found.fault ? [] : named.filter((id) => !run.rules.has(id));
  const fault: RunFault | undefined = unknown.length ? 'suite' : found.fault;
  if (unknown.length)
    worst = {
      status: 'failed',
      message: `${FAULT_WORDS.suite}: ${expectation.check} names ${unknown.join(', ')}, which the rule catalogue (spec/rules.yaml) lacks`,
    };
  const reported = !fault && worst.status === 'failed' && worst.cause ? causes.get(worst.cause) : undefined;
  if (reported) worst = joinCause(reported, worst, named, run);
  // A fault that is not the target's fails whatever the rules' weight: the run could not judge (exit 2).
  const { status, message } = fault
    ? { status: 'failed' as const, message: worst.message }
    : judgeFinding(worst, ruleIds, run.rules, run.strict, run.target.side);
  const newCause = !fault && worst.status === 'failed' ? worst.cause : undefined;
  const result: CheckResult = {
    id: expectation.check,
    suite: suite.name,
    case: testCase.id,
    title: expectation.title ?? `${testCase.title}: ${check?.title ?? expectation.check}`,
    rules: named,
    status,
    message,
    durationMs: judged.durationMs,
    evidence: judged.evidence,
    ...(fault ? { fault } : {}),
    ...(newCause ? { cause: newCause } : {}),
  };
  if (newCause) causes.set(newCause, { check: expectation.check, finding: worst, result });
  return result;
}

/** Adds a later check's rules to the result that reported their shared cause; the later check is skipped. */
function joinCause(reported: ReportedCause, finding: Finding, named: string[], run: CaseRun): Finding {
  const joined = [...new Set([...reported.result.rules, ...named])];
  if (joined.length > reported.result.rules.length)
    Object.assign(
      reported.result,
      { rules: joined },
      judgeFinding({ ...reported.finding, rules: joined }, joined, run.rules, run.strict, run.target.side),
    );
  return {
    status: 'skipped',
    message: `not judged: ${finding.message} (the cause is reported once, by ${reported.check}, under ${joined.join(', ')})`,
  };
}

/**
 * What a check found, or the fault that kept it from judging: a suite error (no such check, bad
 * parameters, no finding at all), or the step's fault when it took what the check judges. A
 * target's fault is a failed finding judged under the check's rules; any other is the run's (exit 2).
 */
function findingsOf(
  expectation: Expectation,
  check: ReturnType<typeof findCheck>,
  judged: JudgedStep,
  run: CaseRun,
): { findings: Finding[]; fault?: RunFault } {
  const suiteError = (message: string) => ({
    findings: [{ status: 'failed' as const, message: `${FAULT_WORDS.suite}: ${message}` }],
    fault: 'suite' as const,
  });
  if (!check) return suiteError(`no check named ${expectation.check}`);
  // A suite the loader did not see (built in code): its checks read typed parameters only.
  const problem = expectationProblem(expectation, judged.step);
  if (problem) return suiteError(`${check.id}: ${problem.message}`);
  const { fault } = judged;
  if (fault && (!fault.lost || fault.lost === check.needs)) {
    if (fault.blame === 'target') return { findings: [{ status: 'failed', message: fault.message }] };
    if (fault.blame === 'unsupported') return { findings: [{ status: 'skipped', message: fault.message }] };
    return {
      findings: [{ status: 'failed', message: `${FAULT_WORDS[fault.blame]}: ${fault.message}` }],
      fault: fault.blame,
    };
  }
  const { check: _id, rules: _rules, title: _title, ...params } = expectation;
  const ctx: CheckContext = {
    target: run.target,
    suite: judged.suite,
    testCase: judged.testCase,
    step: judged.step,
    outcome: judged.outcome,
    params: fill(params, judged.scope) as Record<string, unknown>,
    rules: run.rules,
    strangerKeys: run.stranger,
  };
  let findings: Finding[];
  try {
    findings = check.run(ctx);
  } catch (error) {
    return {
      findings: [{ status: 'failed', message: `check ${check.id} could not judge: ${(error as Error).message}` }],
    };
  }
  // A check that says nothing has not judged: passing it would be green for nothing looked at.
  return findings.length > 0 ? { findings } : suiteError(`check ${check.id} returned no finding`);
}
