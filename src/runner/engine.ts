import { randomUUID } from 'node:crypto';
import type { Rule } from '../core/rules.js';
import type { NetworkConfig } from '../net/network-config.js';
import { bodyExcerpt } from '../net/run-session.js';
import { probeCapabilities, routePath, type Capabilities, type ControlRoute } from './capabilities.js';
import { findCheck } from './checks/index.js';
import { currentNetwork } from './http-client.js';
import { makeStrangerKeys } from './stranger-keys.js';
import { type CheckContext, type Exchange, type StepOutcome } from './observation.js';
import { hasCasedLetter, type AmountForm, type Spelling } from './merchant-steps.js';
import { expectationProblem } from './params.js';
import { mergeAmountForms, mergeSpellings } from './form-merge.js';
import { restoreControlState, snapshotControlState } from './restore.js';
import { openRun, type RunContext } from './run-context.js';
import { startReceiver, type Receiver } from './receiver.js';
import { routesOfStep, runStep, stepNeedsReceiver, type CaseState } from './step-kinds.js';
import { FAULT_WORDS, faultOf, type RunFault, type StepFault } from './step-fault.js';
import type { Case, Need, Step, Suite } from './model.js';
import { fill, type TemplateScope } from './template.js';
import type { Transport } from './transport.js';
import { describeTarget, type CheckResult, type Finding, type Preflight, type Report, type Status, type Target } from './types.js';
import { assumptionsOf, judgedRules, judgeFinding, skipNotes } from './verdict.js';

/** What the engine tells reporters while it runs. */
export type RunEvent =
  | { kind: 'start'; total: number; side: Target['side'] }
  | { kind: 'case'; suite: string; testCase: string; title: string }
  | { kind: 'result'; result: CheckResult }
  | { kind: 'prompt'; text: string }
  | { kind: 'done'; report: Report };

/** Everything a run needs. */
export interface RunOptions {
  target: Target;
  suites: Suite[];
  rules: Rule[];
  /** SHOULD rules fail too. */
  strict?: boolean;
  onEvent?: (event: RunEvent) => void;
  /** What the target offers beyond the interface; probed before the run when not given. */
  capabilities?: Capabilities;
  /**
   * How the runner reaches the target (default: HTTP(S) through src/net): a test injects one that
   * answers in-process. The receiver of service callbacks stays a loopback server.
   */
  transport?: Transport;
  /** Pre-flight's reasoning (written into the report as `preflight`). */
  preflight?: Preflight;
  /**
   * TLS, proxies, limits and the session of the run (default: the process's, which the CLI sets
   * with `useNetwork`). Read once: the run's steps, probe reads and requests use it, and what they
   * opened is closed when the run ends.
   */
  network?: NetworkConfig;
}

/** An exchange of the run with the case that sent it: the trail a target's fall is read from. */
export interface Sent {
  suite: string;
  case: string;
  exchange: Exchange;
}

/**
 * The result of a target that stopped answering because of what the run sent: failed, under
 * CB-AVAILABLE for a merchant and the MUST rules of the case whose input it fell over on (when that
 * case names none, those of the next case, which a target that answers nothing cannot pass); the
 * last input it received before the first refused request is the evidence. Returns the result and
 * the case to blame.
 */
export function stoppedAnswering(
  trail: readonly Sent[],
  side: Target['side'],
  cut: string,
  running: { suite: string; case: string },
  caseRules: (suite: string, id: string, next?: boolean) => string[],
  rules: Map<string, Rule>,
  setUp?: readonly string[],
): { result: CheckResult; after: string } {
  const at = trail.findIndex((sent) => sent.exchange.error === cut);
  const refused = at < 0 ? trail.length : at;
  const last = trail.slice(0, refused).at(-1);
  const culprit = last ? { suite: last.suite, case: last.case } : running;
  const must = (ids: string[]) => ids.filter((id) => rules.get(id)?.severity === 'MUST');
  const own = must(caseRules(culprit.suite, culprit.case));
  const musts = own.length > 0 ? own : must(caseRules(culprit.suite, culprit.case, true));
  const ruleIds = [...new Set([...(side === 'merchant' ? ['CB-AVAILABLE'] : []), ...musts])];
  const request = last?.exchange.request;
  const input =
    request && last
      ? `${request.method} ${request.url}${request.plain === undefined ? ` with body ${bodyExcerpt(request.body)}` : ''} (${last.exchange.response ? `answered HTTP ${last.exchange.response.status}` : `no answer: ${last.exchange.error ?? 'none'}`})`
      : 'none recorded';
  const after = `${culprit.suite}/${culprit.case}`;
  const who = side === 'merchant' ? 'The merchant' : 'The service';
  // Failed even when only a SHOULD is named: a target that no longer answers fails every MUST that follows.
  const failed = { id: 'target-stopped', suite: culprit.suite, case: culprit.case, rules: ruleIds, status: 'failed' as const };
  if (setUp)
    return {
      after,
      result: {
        ...failed,
        title: `${who} keeps answering after the run's set-up (the control API probe and pre-flight)`,
        message:
          `the ${side} stopped answering before the first case, during the run's set-up (the control API probe and pre-flight) (${cut}); ` +
          `the last requests the run sent it: ${setUp.length > 0 ? setUp.join('; ') : 'none recorded'}; no case was run`,
      },
    };
  return {
    after,
    result: {
      ...failed,
      title: `${who} keeps answering after this case's input`,
      message: `the ${side} stopped answering after case ${after} (${cut}); the last input it received: ${input}; the cases left were not run`,
      evidence: evidenceOf(trail.slice(Math.max(0, refused - 3), refused + 1).map((sent) => sent.exchange)),
    },
  };
}

/** Why a case cannot run against this target, or undefined when it can. */
function missingNeed(testCase: Case, target: Target, capabilities: Capabilities = { routes: {} }): string | undefined {
  const has: Record<Need, boolean> =
    target.side === 'service'
      ? {
          userId: target.userId !== undefined,
          orders: target.allowOrders,
          control: Boolean(target.controlToken),
          forbiddenKey: Boolean(target.forbiddenKey),
          expiredKey: Boolean(target.expiredKey),
          futureKey: Boolean(target.futureKey),
          probe: false,
          receiver: Boolean(target.controlToken),
          listen: target.listenPort !== undefined,
          cards: Boolean(capabilities.routes['POST cards']?.present),
          restart: false,
          casedKey: hasCasedLetter(target.apiKey),
        }
      : {
          userId: true,
          orders: true,
          control: false,
          forbiddenKey: false,
          expiredKey: Boolean(target.expiredKey),
          futureKey: Boolean(target.futureKey),
          probe: Boolean(target.probeUrl ?? target.probeCmd),
          receiver: false,
          listen: false,
          cards: false,
          restart: Boolean(target.restartCmd ?? target.restartHook),
          casedKey: hasCasedLetter(target.apiKey),
        };
  const flag: Record<Need, string> = {
    userId: '--user-id',
    orders: '--allow-orders (order cases move money on a real service)',
    control: '--control-token',
    forbiddenKey: '--forbidden-key',
    expiredKey: '--expired-key',
    futureKey: '--future-key',
    probe: '--probe-url or --probe-cmd',
    receiver: '--control-token (to point callbacks at the runner)',
    listen: '--listen PORT (callbacks triggered by hand)',
    cards: `${routePath('POST cards', target.side === 'service' ? target : {})} (a control API extension that creates a card)`,
    restart: '--restart CMD (a command that takes the receiver down and lets it come back)',
    casedKey: 'an API key with letters (the one given has none, so no other letter case of it exists)',
  };
  const missing = (testCase.needs ?? []).filter((need) => !has[need]);
  if (missing.length) {
    const cards = missing.includes('cards') && target.side === 'service' && target.controlToken ? capabilities.routes['POST cards'] : undefined;
    return `needs ${missing.map((need) => flag[need]).join(', ')}${cards ? `: answered ${cards.detail.replace(/^answered /, '')}` : ''}`;
  }
  // Only the documented control API (docs/service-guide.md) is assumed of a target: a route it lacks skips the cases using it.
  if (target.side === 'service' && target.controlToken) {
    for (const step of testCase.steps) {
      for (const route of routesOfStep(step)) {
        const probe = capabilities.routes[route];
        if (probe && !probe.present) return `needs ${routePath(route, target)}: ${probe.detail}`;
      }
    }
  }
  return undefined;
}

/** Evidence for a report: request and answer, plain beside wire (keys already redacted). */
function evidenceOf(exchanges: Exchange[]): Record<string, unknown> {
  return {
    exchanges: exchanges
      .slice(0, 6)
      .map((exchange) => ({ request: exchange.request, response: exchange.response ?? null, ...(exchange.error ? { error: exchange.error } : {}) })),
    ...(exchanges.length > 6 ? { more: exchanges.length - 6 } : {}),
  };
}

/**
 * Runs suites against a target and returns report.json's content. Checks never throw for a bad
 * target. The run's network is opened once and closed when the run ends, however it ends.
 */
export async function runSuites(options: RunOptions): Promise<Report> {
  // A transport given in the options wins; else the target's own (as before the run had a context); else the network's.
  const run = openRun(options.network ?? currentNetwork(), options.transport ?? options.target.transport);
  try {
    return await runOpen(options, run);
  } finally {
    run.close();
  }
}

async function runOpen(options: RunOptions, context: RunContext): Promise<Report> {
  const started = performance.now();
  const { strict = false } = options;
  const { session } = context.network;
  const target: Target = { ...options.target, transport: context.transport };
  const rules = new Map(options.rules.map((rule) => [rule.id, rule]));
  const emit = options.onEvent ?? (() => undefined);
  const results: CheckResult[] = [];
  const stranger = makeStrangerKeys(target.side === 'service' ? target.publicKey.bits : target.privateKey.bits);
  const total = options.suites.reduce((n, suite) => n + suite.cases.reduce((m, c) => m + c.steps.reduce((k, s) => k + (s.expect?.length ?? 0), 0), 0), 0);
  emit({ kind: 'start', total, side: target.side });
  const capabilities = options.capabilities ?? (target.side === 'service' ? await probeCapabilities(target) : { routes: {} });
  const snapshot = target.side === 'service' ? snapshotControlState(capabilities) : undefined;
  const touched = new Set<ControlRoute>();
  let receiver: Receiver | undefined;
  const needsReceiver =
    target.side === 'service' &&
    (target.controlToken || target.listenPort !== undefined) &&
    options.suites.some((suite) => suite.cases.some((c) => c.steps.some(stepNeedsReceiver)));
  // --listen opens the receiver to the network: a real service must reach it.
  if (needsReceiver && target.side === 'service')
    receiver = await startReceiver(
      target.listenPort ?? 0,
      target.listenHost ?? (target.listenPort === undefined && !target.publicUrl ? '127.0.0.1' : '0.0.0.0'),
      target.publicUrl,
    );
  const notes: string[] = [];
  // Every exchange of the run with its case, and where the target fell over (a refused connection
  // after it answered: its fault, judged below) when it did.
  const trail: Sent[] = [];
  const order = options.suites.flatMap((s) => s.cases.map((c) => ({ suite: s.name, testCase: c })));
  const caseRules = (suiteName: string, id: string, next = false) => {
    const at = order.findIndex((entry) => entry.suite === suiteName && entry.testCase.id === id);
    const found = order[next ? at + 1 : at]?.testCase;
    return found && at >= 0 ? [...new Set(found.steps.flatMap((step) => (step.expect ?? []).flatMap((expectation) => expectation.rules ?? found.rules)))] : [];
  };
  const record = (result: CheckResult) => {
    const assumptions = assumptionsOf(result.rules, rules);
    const full = assumptions.length ? { ...result, assumptions } : result;
    results.push(full);
    emit({ kind: 'result', result: full });
  };
  // Where the target fell over, as the cases left say it ("after case …").
  let fell: string | undefined;
  // It stopped answering before the first case, on the run's own set-up (the control API probe,
  // pre-flight): that input is what it fell over on; one failed result, and no case runs.
  const before = session.stopped;
  const first = order[0];
  if (before?.reason === 'target-gone' && first) {
    const gone = stoppedAnswering([], target.side, before.message, { suite: first.suite, case: first.testCase.id }, caseRules, rules, session.lastSent);
    record({ ...gone.result, id: `${gone.result.suite}/${gone.result.case}/target-stopped` });
    fell = 'during the set-up, before the first case';
  }
  try {
    for (const suite of options.suites) {
      for (const testCase of suite.cases) {
        emit({ kind: 'case', suite: suite.name, testCase: testCase.id, title: testCase.title });
        const ids = new Map<string, number>();
        const resultId = (check: string) => {
          const n = (ids.get(check) ?? 0) + 1;
          ids.set(check, n);
          return `${suite.name}/${testCase.id}/${check}${n > 1 ? `#${n}` : ''}`;
        };
        // The target fell over or --timeout ran out: what is left is not run (skipped with the reason), not failed.
        const cut = session.stopped;
        const skip = cut ? `not run: ${fell ? `the target stopped answering ${fell}` : cut.message}` : missingNeed(testCase, target, capabilities);
        if (skip) {
          for (const step of testCase.steps) {
            for (const expectation of step.expect ?? []) {
              record({
                id: resultId(expectation.check),
                suite: suite.name,
                case: testCase.id,
                title: expectation.title ?? `${testCase.title}: ${findCheck(expectation.check)?.title ?? expectation.check}`,
                rules: expectation.rules ?? testCase.rules,
                status: 'skipped',
                message: skip,
              });
            }
          }
          continue;
        }
        const run = {
          target,
          context,
          rules,
          strict,
          stranger,
          receiver,
          emit,
          touched,
          sent: (exchanges: Exchange[]) => {
            trail.push(...exchanges.map((exchange) => ({ suite: suite.name, case: testCase.id, exchange })));
            // Only the last inputs matter (the fall is judged at the end of the case it happened in).
            if (trail.length > 200) trail.splice(0, trail.length - 200);
          },
        };
        // U-CB-FIELDS leaves field spellings and the amount's form open: a merchant case may run once per
        // form (`spellings: both`, `amounts: both`), each extra run merged into the first run's verdicts.
        const forms: Pick<Case, 'spellings' | 'amounts'> = target.side === 'merchant' ? testCase : {};
        const first: PayloadForm = { spelling: 'interface', ...(forms.amounts === 'both' ? { amounts: 'number' as const } : {}) };
        let verdicts = await runCase(suite, testCase, run, first);
        if (forms.spellings === 'both') {
          const asProvider = await runCase(suite, testCase, run, { ...first, spelling: 'provider' });
          verdicts = verdicts.map((result, i) => mergeSpellings(result, asProvider[i], rules, strict));
        }
        if (forms.amounts === 'both') {
          const asString = await runCase(suite, testCase, run, { ...first, amounts: 'string' });
          verdicts = verdicts.map((result, i) => mergeAmountForms(result, asString[i], rules, strict));
        }
        for (const result of verdicts) record({ ...result, id: resultId(result.id) });
        // The case that met the cut: its failures are the cut's, not verdicts of their own. A target
        // that stopped answering (it answered earlier; now it refuses) fell over on what the run sent:
        // one failed result says so, with the last input it received. --timeout is the tool's stop.
        const during = session.stopped;
        if (during && !cut) {
          const gone =
            during.reason === 'target-gone'
              ? stoppedAnswering(trail, target.side, during.message, { suite: suite.name, case: testCase.id }, caseRules, rules)
              : undefined;
          const why = gone
            ? `not judged: the target stopped answering (see ${gone.result.suite}/${gone.result.case}/target-stopped)`
            : `not judged: ${during.message}`;
          for (const result of results)
            if (result.case === testCase.id && result.suite === suite.name && !result.fault && (result.status === 'failed' || result.status === 'warning'))
              Object.assign(result, { status: 'skipped', message: why });
          if (gone) {
            fell = `after case ${gone.after}`;
            record({ ...gone.result, id: `${gone.result.suite}/${gone.result.case}/target-stopped` });
          }
        }
      }
    }
  } finally {
    await receiver?.close();
    if (snapshot && target.side === 'service') notes.push(...(await restoreControlState(snapshot, touched, target)));
  }
  const count = (status: Status) => results.filter((result) => result.status === status).length;
  const skipped = skipNotes(results, rules);
  const report: Report = {
    target: describeTarget(target),
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: count('warning'),
      skipped: count('skipped'),
      durationMs: Math.round(performance.now() - started),
      skippedMust: skipped.skippedMust,
    },
    results,
    notes: [
      ...(session.stopped
        ? [fell ? `the target stopped answering ${fell} (${session.stopped.message}): a failure, and the cases left were not run` : session.stopped.message]
        : []),
      ...skipped.notes,
      ...notes,
    ],
    ...(options.preflight ? { preflight: options.preflight } : {}),
  };
  emit({ kind: 'done', report });
  return report;
}

/** How one run of a case writes its callback payloads (U-CB-FIELDS). */
interface PayloadForm {
  spelling: Spelling;
  amounts?: AmountForm;
}

interface CaseRun {
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

/** Runs one case; result ids are the bare check ids (the caller numbers repeats). */
async function runCase(suite: Suite, testCase: Case, run: CaseRun, form: PayloadForm): Promise<CheckResult[]> {
  const { target } = run;
  const results: CheckResult[] = [];
  const scope: TemplateScope = {
    caseId: `wc-${randomUUID().slice(0, 13)}`,
    saved: {},
    ...(target.side === 'service' && target.userId !== undefined ? { userId: target.userId } : {}),
  };
  const state: CaseState = {
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
async function runOneStep(step: Step, state: CaseState, outcome: StepOutcome, run: CaseRun): Promise<StepFault | undefined> {
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

/**
 * The results of a step's checks. Within a step, a cause (an undecryptable answer, no answer, no
 * callback) is reported once, by the first check that fails of it, and judged under every rule it
 * keeps the step's checks from judging: a later check of the same cause cannot judge its rule
 * without the data, so it is skipped, and its rules join the first result's (a target that does not
 * answer fails each MUST the answer was to show).
 */
function judgeStep(judged: JudgedStep, run: CaseRun): CheckResult[] {
  const { suite, testCase, step } = judged;
  const results: CheckResult[] = [];
  const causes = new Map<string, { check: string; finding: Finding; result: CheckResult }>();
  for (const expectation of step.expect ?? []) {
    const check = findCheck(expectation.check);
    const ruleIds = expectation.rules ?? testCase.rules;
    const found = findingsOf(expectation, check, judged, run);
    let worst = found.fault
      ? found.findings[0]!
      : (found.findings.find((f) => f.status === 'failed') ?? found.findings.find((f) => f.status === 'skipped') ?? found.findings[0]!);
    const named = judgedRules(worst, ruleIds);
    // A rule the catalogue lacks cannot be weighed (nor shown to bind anyone): the suite's error, not a warning.
    const unknown = found.fault ? [] : named.filter((id) => !run.rules.has(id));
    const fault: RunFault | undefined = unknown.length ? 'suite' : found.fault;
    if (unknown.length)
      worst = {
        status: 'failed',
        message: `${FAULT_WORDS.suite}: ${expectation.check} names ${unknown.join(', ')}, which the rule catalogue (spec/rules.yaml) lacks`,
      };
    const first = !fault && worst.status === 'failed' && worst.cause ? causes.get(worst.cause) : undefined;
    if (first) {
      const joined = [...new Set([...first.result.rules, ...named])];
      if (joined.length > first.result.rules.length)
        Object.assign(first.result, { rules: joined }, judgeFinding({ ...first.finding, rules: joined }, joined, run.rules, run.strict, run.target.side));
      worst = { status: 'skipped', message: `not judged: ${worst.message} (the cause is reported once, by ${first.check}, under ${joined.join(', ')})` };
    }
    // A fault that is not the target's fails whatever the rules' weight: the run could not judge (exit 2).
    const { status, message } = fault
      ? { status: 'failed' as const, message: worst.message }
      : judgeFinding(worst, ruleIds, run.rules, run.strict, run.target.side);
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
      ...(!fault && worst.status === 'failed' && worst.cause ? { cause: worst.cause } : {}),
    };
    if (!fault && worst.status === 'failed' && worst.cause) causes.set(worst.cause, { check: expectation.check, finding: worst, result });
    results.push(result);
  }
  return results;
}

/**
 * What a check found, or the fault that kept it from judging: a suite error (no such check, bad
 * parameters, no finding at all), or the step's fault when it took what the check judges. A
 * target's fault is a failed finding judged under the check's rules; any other is the run's (exit 2).
 */
function findingsOf(
  expectation: NonNullable<Step['expect']>[number],
  check: ReturnType<typeof findCheck>,
  judged: JudgedStep,
  run: CaseRun,
): { findings: Finding[]; fault?: RunFault } {
  const suiteError = (message: string) => ({ findings: [{ status: 'failed' as const, message: `${FAULT_WORDS.suite}: ${message}` }], fault: 'suite' as const });
  if (!check) return suiteError(`no check named ${expectation.check}`);
  // A suite the loader did not see (built in code): its checks read typed parameters only.
  const problem = expectationProblem(expectation, judged.step);
  if (problem) return suiteError(`${check.id}: ${problem.message}`);
  const { fault } = judged;
  if (fault && (!fault.lost || fault.lost === check.needs)) {
    if (fault.blame === 'target') return { findings: [{ status: 'failed', message: fault.message }] };
    if (fault.blame === 'unsupported') return { findings: [{ status: 'skipped', message: fault.message }] };
    return { findings: [{ status: 'failed', message: `${FAULT_WORDS[fault.blame]}: ${fault.message}` }], fault: fault.blame };
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
    return { findings: [{ status: 'failed', message: `check ${check.id} could not judge: ${(error as Error).message}` }] };
  }
  // A check that says nothing has not judged: passing it would be green for nothing looked at.
  return findings.length > 0 ? { findings } : suiteError(`check ${check.id} returned no finding`);
}
