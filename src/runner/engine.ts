import { randomUUID } from 'node:crypto';
import type { Rule } from '../core/rules.js';
import { pointCallbacks, runAwait, runEmit } from './callback-steps.js';
import { findCheck } from './checks/index.js';
import { makeStrangerKeys, type CheckContext, type Exchange, type StepOutcome } from './context.js';
import { readProbe, runDelivery, type EventBook } from './merchant-steps.js';
import { startReceiver, type Receiver } from './receiver.js';
import { runControl, runRequest } from './service-steps.js';
import type { Case, Need, Suite } from './suite.js';
import { fill, type TemplateScope } from './template.js';
import { describeTarget, type CheckResult, type Finding, type Report, type Status, type Target } from './types.js';

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
}

/** Why a case cannot run against this target, or undefined when it can. */
export function missingNeed(testCase: Case, target: Target): string | undefined {
  const has: Record<Need, boolean> = target.side === 'service'
    ? { userId: target.userId !== undefined, orders: target.allowOrders, control: Boolean(target.controlToken), forbiddenKey: Boolean(target.forbiddenKey), expiredKey: Boolean(target.expiredKey), probe: false, receiver: Boolean(target.controlToken), listen: target.listenPort !== undefined }
    : { userId: true, orders: true, control: false, forbiddenKey: false, expiredKey: Boolean(target.expiredKey), probe: Boolean(target.probeUrl), receiver: false, listen: false };
  const flag: Record<Need, string> = {
    userId: '--user-id', orders: '--allow-orders (order cases move money on a real service)', control: '--control-token', forbiddenKey: '--forbidden-key',
    expiredKey: '--expired-key', probe: '--probe-url', receiver: '--control-token (to point callbacks at the runner)', listen: '--listen PORT (callbacks triggered by hand)',
  };
  const missing = (testCase.needs ?? []).filter((need) => !has[need]);
  return missing.length ? `needs ${missing.map((need) => flag[need]).join(', ')}` : undefined;
}

/** The severity a failure of these rules has: MUST fails, SHOULD and U-* warn (unless strict). */
export function failureStatus(ruleIds: string[], rules: Map<string, Rule>, strict: boolean): Status {
  if (strict) return 'failed';
  return ruleIds.some((id) => rules.get(id)?.severity === 'MUST') ? 'failed' : 'warning';
}

/** Evidence for a report: request and answer, plain beside wire (keys already redacted). */
function evidenceOf(exchanges: Exchange[]): Record<string, unknown> {
  return { exchanges: exchanges.slice(0, 6).map((exchange) => ({ request: exchange.request, response: exchange.response ?? null, ...(exchange.error ? { error: exchange.error } : {}) })), ...(exchanges.length > 6 ? { more: exchanges.length - 6 } : {}) };
}

/** Runs suites against a target and returns report.json's content. Checks never throw for a bad target. */
export async function runSuites(options: RunOptions): Promise<Report> {
  const started = performance.now();
  const { target, strict = false } = options;
  const rules = new Map(options.rules.map((rule) => [rule.id, rule]));
  const emit = options.onEvent ?? (() => undefined);
  const results: CheckResult[] = [];
  const stranger = makeStrangerKeys(target.side === 'service' ? target.publicKey.bits : target.privateKey.bits);
  const total = options.suites.reduce((n, suite) => n + suite.cases.reduce((m, c) => m + c.steps.reduce((k, s) => k + (s.expect?.length ?? 0), 0), 0), 0);
  emit({ kind: 'start', total, side: target.side });
  let receiver: Receiver | undefined;
  const needsReceiver = target.side === 'service' && (target.controlToken || target.listenPort !== undefined) && options.suites.some((suite) => suite.cases.some((c) => c.steps.some((s) => s.emit || s.await || s.control?.pointCallbacks)));
  // --listen opens the receiver to the network: a real service must reach it.
  if (needsReceiver && target.side === 'service') receiver = await startReceiver(target.listenPort ?? 0, target.listenPort === undefined ? '127.0.0.1' : '0.0.0.0');
  try {
    for (const suite of options.suites) {
      for (const testCase of suite.cases) {
        emit({ kind: 'case', suite: suite.name, testCase: testCase.id, title: testCase.title });
        const push = (result: CheckResult) => {
          results.push(result);
          emit({ kind: 'result', result });
        };
        const ids = new Map<string, number>();
        const resultId = (check: string) => {
          const n = (ids.get(check) ?? 0) + 1;
          ids.set(check, n);
          return `${suite.name}/${testCase.id}/${check}${n > 1 ? `#${n}` : ''}`;
        };
        const skip = missingNeed(testCase, target);
        if (skip) {
          for (const step of testCase.steps) {
            for (const expectation of step.expect ?? []) {
              push({ id: resultId(expectation.check), suite: suite.name, case: testCase.id, title: expectation.title ?? `${testCase.title}: ${findCheck(expectation.check)?.title ?? expectation.check}`, rules: expectation.rules ?? testCase.rules, status: 'skipped', message: skip });
            }
          }
          continue;
        }
        await runCase(suite, testCase, { target, rules, strict, stranger, receiver, push, resultId, emit });
      }
    }
  } finally {
    await receiver?.close();
  }
  const count = (status: Status) => results.filter((result) => result.status === status).length;
  const report: Report = {
    target: describeTarget(target),
    summary: { passed: count('passed'), failed: count('failed'), warnings: count('warning'), skipped: count('skipped'), durationMs: Math.round(performance.now() - started) },
    results,
  };
  emit({ kind: 'done', report });
  return report;
}

interface CaseRun {
  target: Target;
  rules: Map<string, Rule>;
  strict: boolean;
  stranger: ReturnType<typeof makeStrangerKeys>;
  receiver: Receiver | undefined;
  push(result: CheckResult): void;
  resultId(check: string): string;
  emit(event: RunEvent): void;
}

async function runCase(suite: Suite, testCase: Case, run: CaseRun): Promise<void> {
  const { target } = run;
  const scope: TemplateScope = { caseId: `wc-${randomUUID().slice(0, 13)}`, saved: {}, ...(target.side === 'service' && target.userId !== undefined ? { userId: target.userId } : {}) };
  const events: EventBook = new Map();
  // A failed setup step (no expectations of its own) fails every later check of the case.
  let setupError: string | undefined;
  for (const step of testCase.steps) {
    const outcome: StepOutcome = { exchanges: [], saved: scope.saved };
    let stepError: string | undefined = setupError;
    try {
      if (setupError) outcome.exchanges = [];
      else if (step.request && target.side === 'service') outcome.exchanges.push(await runRequest(step.request, target, scope, run.stranger));
      else if (step.control?.pointCallbacks && target.side === 'service' && run.receiver) {
        const exchange = await pointCallbacks(target, run.receiver);
        outcome.exchanges.push(exchange);
        if (exchange.error) stepError = `pointing callbacks at the runner failed: ${exchange.error}`;
      } else if (step.control && target.side === 'service') {
        const exchange = await runControl(fill(step.control, scope) as NonNullable<typeof step.control>, target);
        outcome.exchanges.push(exchange);
        if (exchange.error) stepError = `setup through the control API failed: ${exchange.error}`;
      } else if (step.emit && target.side === 'service' && run.receiver) {
        const emitted = await runEmit(step.emit, target, run.receiver, scope);
        outcome.exchanges.push(...emitted.exchanges);
        outcome.callbacks = emitted.callbacks;
      } else if (step.await && target.side === 'service' && run.receiver) {
        if (step.await.prompt) run.emit({ kind: 'prompt', text: String(fill(step.await.prompt, { ...scope, saved: { ...scope.saved, receiverUrl: run.receiver.url } })) });
        const awaited = await runAwait(step.await, target, run.receiver, scope);
        outcome.exchanges.push(...awaited.exchanges);
        outcome.callbacks = awaited.callbacks;
      } else if (step.deliver && target.side === 'merchant') {
        const before = await readProbe(target);
        const delivered = await runDelivery(step.deliver, target, scope, events, run.stranger);
        outcome.exchanges.push(...delivered.exchanges);
        outcome.delivered = delivered.delivered;
        const after = await readProbe(target);
        if (before && after) outcome.processed = after.slice(before.length);
      } else stepError = `suite error: this step does not apply to a ${target.side}`;
    } catch (error) {
      stepError = (error as Error).message;
    }
    if (stepError && !step.expect?.length) setupError ??= stepError;
    for (const expectation of step.expect ?? []) {
      const check = findCheck(expectation.check);
      const ruleIds = expectation.rules ?? testCase.rules;
      const { check: _id, rules: _rules, title, ...params } = expectation;
      let findings: Finding[];
      if (!check) findings = [{ status: 'failed', message: `suite error: no check named ${expectation.check}` }];
      else if (stepError) findings = [{ status: 'failed', message: stepError }];
      else {
        const ctx: CheckContext = { target, suite, testCase, step, outcome, params: fill(params, scope) as Record<string, unknown>, rules: run.rules, strangerKeys: run.stranger };
        try {
          findings = check.run(ctx);
        } catch (error) {
          findings = [{ status: 'failed', message: `check ${check.id} could not judge: ${(error as Error).message}` }];
        }
      }
      const worst = findings.find((f) => f.status === 'failed') ?? findings.find((f) => f.status === 'skipped') ?? findings[0] ?? { status: 'passed', message: '' };
      const status = worst.status === 'failed' ? failureStatus(ruleIds, run.rules, run.strict) : worst.status;
      run.push({
        id: run.resultId(expectation.check),
        suite: suite.name,
        case: testCase.id,
        title: title ?? `${testCase.title}: ${check?.title ?? expectation.check}`,
        rules: ruleIds,
        status,
        message: worst.message,
        evidence: evidenceOf(outcome.exchanges),
      });
    }
  }
}
