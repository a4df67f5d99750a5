import { parseExactJson } from '../core/exact-json.js';
import type { ControlRoute } from './capabilities.js';
import { pointCallbacks, runAwait, runEmit } from './callback-steps.js';
import type { Observation } from './checks/check.js';
import type { Exchange, ReceivedCallback } from './observation.js';
import type { StrangerKeys } from './stranger-keys.js';
import { runDelivery, runRestart, type AmountForm, type EventBook, type Spelling } from './merchant-steps.js';
import { probeAnswered, probeBaseline, readProbeAfter, rememberProbeMark, type ProbeMark } from './probe-reader.js';
import type { Receiver } from './receiver.js';
import type { RunContext } from './run-context.js';
import { runControl, runRequests } from './service-steps.js';
import type { Step } from './model.js';
import type { StepFault } from './step-fault.js';
import { fill, type TemplateScope } from './template.js';
import type { MerchantTarget, ServiceTarget, Target } from './types.js';

/** A failure of the target itself (its control API, its probe): judged under the rules of the checks it kept from judging. */
const targetFault = (message: string): StepFault => ({ blame: 'target', message });

/**
 * The fault of a control API exchange that failed. A 4xx other than 401 refuses a request the
 * documented control API takes (a balance beyond 2^53, scripted retry delays): this target's
 * control API does not offer it, which proves nothing about the interface, so the case is not
 * judged (skipped, with the reason). No answer, a 5xx or a 401 after the capability probe
 * passed is the service failing mid-run: the target's fault.
 */
function controlFault(exchange: Exchange, what: string): StepFault {
  const status = exchange.response?.status ?? 0;
  if (status >= 400 && status < 500 && status !== 401)
    return {
      blame: 'unsupported',
      message: `not judged: the service's control API refused a documented request (${exchange.error}); the case needs one that accepts it`,
    };
  return targetFault(`${what} failed: ${exchange.error}`);
}

/** The kinds of step a case is made of; a step is exactly one of them (suite.schema.json: `oneOf`). */
export type StepKindName = 'request' | 'control' | 'emit' | 'await' | 'deliver' | 'restart';

/** What the steps of one case share: the templates' scope, named events, the probe's last read. */
export interface CaseState {
  scope: TemplateScope;
  stranger: StrangerKeys;
  /** The runner's callback receiver (service side, with a control token or `--listen`). */
  receiver: Receiver | undefined;
  spelling: Spelling;
  /** How amounts are written in this run (`amounts: both`); undefined: as the case wrote them. */
  amounts?: AmountForm;
  /** Named events of the case (`deliver.event`), for `same` and `twin`. */
  events: EventBook;
  /** The trackingIds the case delivered: only their probe entries are the case's. */
  caseEvents: Set<string>;
  /** Where the probe's last read stopped: the next deliver step's baseline (undefined: read it first). */
  lastProbe: ProbeMark | undefined;
  /** How long after its answers the last deliver step that expected processing saw it (ms); undefined: at once. */
  lateMs?: number;
  /** Tells the person running verify what to do now (an await step's prompt). */
  prompt(text: string): void;
  /** The run's network and transport (run-context.ts): probe reads and restarts use its session. */
  run: RunContext;
}

/** What a step produced for its checks, and why it could not give them what they judge (whose fault: step-fault.ts). */
interface StepRun {
  exchanges: Exchange[];
  callbacks?: ReceivedCallback[];
  processed?: string[];
  delivered?: string[];
  fault?: StepFault;
}

type Side = Target['side'];
type TargetOf<S extends Side> = S extends 'service' ? ServiceTarget : MerchantTarget;

/** One kind of step: the side it runs on, what it produces, what it needs, and its executor. */
interface StepKind<K extends StepKindName, S extends Side = Side> {
  side: S;
  /** What its checks can judge: a check whose `needs` is not here is refused on this kind by the loader. */
  produces: readonly Observation[];
  /** The control API routes it calls (probed first: a case using a missing one is skipped). */
  routes(body: NonNullable<Step[K]>): ControlRoute[];
  /** Does it need the runner's callback receiver? */
  receiver(body: NonNullable<Step[K]>): boolean;
  /** Runs the step; `step` is the whole step, for an executor that reads its expectations. */
  run(body: NonNullable<Step[K]>, target: TargetOf<S>, state: CaseState, step: Step): Promise<StepRun>;
}

/** How long a deliver step waits, by default, for processing that finishes after the answer (`--settle-ms`). */
const DEFAULT_SETTLE_MS = 2000;
/** How often the probe is read again while waiting. */
const SETTLE_POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the run has learnt of the receiver's timing (per target, so per run): whether it was ever
 * seen processing after its answer, and how many settle waits ran out with processing still missing.
 */
interface SettleHistory {
  late: boolean;
  missed: number;
}
const SETTLE_HISTORY = new WeakMap<object, SettleHistory>();
/** The settle limit once the receiver lost events twice without ever processing late. */
const SHORT_SETTLE_MS = 200;

/**
 * The settle limit for the next wait: the configured one, until two waits ran out while nothing was
 * ever seen late; then a short one. A receiver that loses events (a form-field reader loses them all)
 * would otherwise cost the limit on every case, while one that books late keeps the whole limit.
 */
export function settleLimit(history: SettleHistory | undefined, settleMs: number): number {
  return history && !history.late && history.missed >= 2 ? Math.min(settleMs, SHORT_SETTLE_MS) : settleMs;
}

/**
 * The fewest processings of its own events a deliver step's checks expect: the largest `processed`
 * count, and one for `processed-exact` (it fails when nothing was processed); undefined when no check
 * reads the probe.
 */
export function expectedProcessings(step: Step): number | undefined {
  let expected: number | undefined;
  for (const expectation of step.expect ?? []) {
    if (expectation.check === 'processed' && typeof expectation.count === 'number')
      expected = Math.max(expected ?? 0, expectation.count);
    else if (expectation.check === 'processed-exact') expected = Math.max(expected ?? 0, 1);
  }
  return expected;
}

/**
 * The grace a step expecting no new processing waits before its last read: none when the case's
 * previous events were seen at once, else twice as long as they took (at least 200 ms), at most the
 * settle limit, so a duplicate booked as late as its original is still seen (CB-ONCE).
 */
export function graceMs(lateMs: number | undefined, settleMs: number): number {
  return lateMs === undefined ? 0 : Math.min(settleMs, Math.max(200, 2 * lateMs));
}

/** The trackingId of a payload's JSON text, when it has a string one. */
function trackingIdOf(text: string): string | undefined {
  try {
    const value = parseExactJson(text) as Record<string, unknown> | null;
    return typeof value?.trackingId === 'string' ? value.trackingId : undefined;
  } catch {
    return undefined;
  }
}

const request: StepKind<'request', 'service'> = {
  side: 'service',
  produces: ['exchange'],
  routes: () => [],
  receiver: () => false,
  run: async (body, target, state) => ({ exchanges: await runRequests(body, target, state.scope, state.stranger) }),
};

const control: StepKind<'control', 'service'> = {
  side: 'service',
  produces: ['exchange'],
  routes: (body) =>
    body.energy ? ['PUT energy'] : body.card ? ['POST cards'] : body.pointCallbacks ? ['PUT callback-url'] : [],
  receiver: (body) => body.pointCallbacks === true,
  async run(body, target, state) {
    if (body.pointCallbacks && state.receiver) {
      // The control API is the service's (the capability probe found the route): an error now is its failure.
      const exchange = await pointCallbacks(target, state.receiver);
      return {
        exchanges: [exchange],
        ...(exchange.error ? { fault: controlFault(exchange, 'pointing callbacks at the runner') } : {}),
      };
    }
    const exchange = await runControl(fill(body, state.scope) as typeof body, target);
    return { exchanges: [exchange], ...(exchange.error ? { fault: controlFault(exchange, 'the control API') } : {}) };
  },
};

const emit: StepKind<'emit', 'service'> = {
  side: 'service',
  produces: ['exchange', 'callbacks'],
  routes: () => ['PUT callback-url', 'POST callbacks', 'GET deliveries'],
  receiver: () => true,
  async run(body, target, state) {
    const emitted = await runEmit(body, target, state.receiver!, state.scope);
    const failed = emitted.exchanges.find((exchange) => exchange.error);
    return { ...emitted, ...(failed ? { fault: controlFault(failed, 'asking the service to emit a callback') } : {}) };
  },
};

const awaitKind: StepKind<'await', 'service'> = {
  side: 'service',
  produces: ['exchange', 'callbacks'],
  routes: () => [],
  receiver: () => true,
  async run(body, target, state) {
    const receiver = state.receiver!;
    if (body.prompt)
      state.prompt(
        String(fill(body.prompt, { ...state.scope, saved: { ...state.scope.saved, receiverUrl: receiver.url } })),
      );
    return runAwait(body, target, receiver, state.scope);
  },
};

/**
 * One read of the probe after `before`, kept to the case's processings. Only this case's events
 * count: a merchant may process other traffic meanwhile (other tests, the service's own callbacks);
 * an entry without a trackingId cannot be told apart. Each read starts at the baseline's mark: the
 * history before it is never read again.
 */
async function readOwnProcessings(target: MerchantTarget, before: ProbeMark | undefined, state: CaseState) {
  const read = before ? await readProbeAfter(target, before, { network: state.run.network }) : undefined;
  if (read) rememberProbeMark(target, read.mark);
  return {
    mark: read?.mark,
    processed: read?.entries.filter((entry) => {
      const id = trackingIdOf(entry);
      return id === undefined || state.caseEvents.has(id);
    }),
  };
}

const deliver: StepKind<'deliver', 'merchant'> = {
  side: 'merchant',
  produces: ['exchange', 'probe'],
  routes: () => [],
  receiver: () => false,
  async run(body, target, state, step) {
    // The previous step's last read is this step's baseline: a late processing between steps is
    // seen by the next step rather than lost.
    let fault: StepFault | undefined;
    const before =
      state.lastProbe ??
      (await probeBaseline(target, state.run.network).catch(
        (error: unknown) => void (fault = probeFault(target, state, error)),
      ));
    const delivered = await runDelivery(
      body,
      target,
      state.scope,
      state.events,
      state.stranger,
      state.spelling,
      state.amounts,
    );
    if (body.restartAfter) {
      // Restarted before the probe is read: what was acknowledged must still be processed (CB-ONCE).
      // The baseline stays: a durable history keeps its positions across the restart.
      const restarted = await runRestart(target, state.run.network.session);
      if (restarted)
        return { exchanges: delivered.exchanges, delivered: delivered.delivered, fault: restartFault(restarted) };
    }
    const answered = performance.now();
    for (const text of delivered.delivered) {
      const id = trackingIdOf(text);
      if (id !== undefined) state.caseEvents.add(id);
    }
    const readOwn = () => readOwnProcessings(target, before, state);
    // Processing may finish after the answer (nothing in the interface says it ends first): while the
    // probe shows fewer of the case's processings than the checks expect, it is read again, up to the
    // settle limit. A step expecting none waits a grace only when the case's events were seen late.
    const lostProbe = (error: unknown) => {
      fault = probeFault(target, state, error);
      return { mark: undefined, processed: undefined };
    };
    const expected = expectedProcessings(step);
    const history = SETTLE_HISTORY.get(target) ?? { late: false, missed: 0 };
    SETTLE_HISTORY.set(target, history);
    const settleMs = settleLimit(history, target.settleMs ?? DEFAULT_SETTLE_MS);
    const grace = expected === 0 ? graceMs(state.lateMs, settleMs) : 0;
    if (grace > 0) await sleep(grace);
    let { mark, processed } = fault
      ? { mark: undefined, processed: undefined }
      : await readOwn().catch((error: unknown) => lostProbe(error));
    if (processed && expected !== undefined && expected > 0) {
      let reads = 0;
      while (processed.length < expected && performance.now() - answered < settleMs) {
        await sleep(SETTLE_POLL_MS);
        ({ mark, processed } = await readOwn().catch((error: unknown) => lostProbe(error)));
        if (!processed) break;
        reads++;
      }
      state.lateMs =
        reads > 0 && processed !== undefined && processed.length >= expected ? performance.now() - answered : undefined;
      if (state.lateMs !== undefined) history.late = true;
      if (processed && processed.length < expected) history.missed++;
    }
    state.lastProbe = mark;
    return {
      exchanges: delivered.exchanges,
      delivered: delivered.delivered,
      ...(processed ? { processed } : {}),
      ...(fault ? { fault } : {}),
    };
  },
};

/**
 * A probe read that failed: the merchant's failure once its probe answered in this run (pre-flight
 * or an earlier baseline read it), since an error or an unreadable answer now is what the merchant
 * gives; before that, nothing shows the probe was ever right: the setup's (exit 2, check the flag).
 * Only the probe's checks lose their data; the delivery's answers are still judged.
 */
function probeFault(target: MerchantTarget, state: CaseState, error: unknown): StepFault {
  const message = error instanceof Error ? error.message : String(error);
  return probeAnswered(target, state.run.network)
    ? {
        blame: 'target',
        message: `the merchant's probe failed after answering earlier in the run: ${message}`,
        lost: 'probe',
      }
    : {
        blame: 'setup',
        message: `the merchant's probe never answered in this run (check --probe-url or --probe-cmd): ${message}`,
        lost: 'probe',
      };
}

const restart: StepKind<'restart', 'merchant'> = {
  side: 'merchant',
  produces: [],
  routes: () => [],
  receiver: () => false,
  async run(_body, target, state) {
    const restarted = await runRestart(target, state.run.network.session);
    // A restarted merchant may have lost or renumbered its history: the next baseline reads it anew.
    state.lastProbe = undefined;
    rememberProbeMark(target, undefined);
    return restarted ? { exchanges: [], fault: restartFault(restarted) } : { exchanges: [] };
  },
};

/** Whose fault a failed `--restart` is: the user's command failing is the setup's (exit 2); a merchant that does not come back after it is the target's. */
function restartFault(problem: string): StepFault {
  const blame = problem.startsWith('the callback URL did not answer') ? 'target' : 'setup';
  return { blame, message: `--restart: ${problem}` };
}

/**
 * Every step kind, in the order a step's keys are tried: the one table the loader (what a kind
 * produces), capabilities.ts (its routes) and the engine (its executor, its side) read.
 */
export const STEP_KINDS: { readonly [K in StepKindName]: StepKind<K> } = {
  request,
  control,
  emit,
  await: awaitKind,
  deliver,
  restart,
} as {
  readonly [K in StepKindName]: StepKind<K>;
};

/** The kind of a step, or undefined for a step of none (only a hand-built suite can hold one). */
export function stepKindOf(step: Step): StepKindName | undefined {
  return (Object.keys(STEP_KINDS) as StepKindName[]).find((kind) => step[kind] !== undefined);
}

/** The kind's entry for a step, with the step's body for it. */
function entryOf(step: Step): { kind: StepKindName; entry: StepKind<StepKindName>; body: never } | undefined {
  const kind = stepKindOf(step);
  return kind ? { kind, entry: STEP_KINDS[kind] as StepKind<StepKindName>, body: step[kind] as never } : undefined;
}

/** The control routes a step calls. */
export function routesOfStep(step: Step): ControlRoute[] {
  const found = entryOf(step);
  return found ? found.entry.routes(found.body) : [];
}

/** Does the step need the runner's callback receiver? */
export function stepNeedsReceiver(step: Step): boolean {
  const found = entryOf(step);
  return found ? found.entry.receiver(found.body) : false;
}

/** What a step produces for its checks (nothing for a step of no kind). */
export function producedBy(step: Step): readonly Observation[] {
  const kind = stepKindOf(step);
  return kind ? STEP_KINDS[kind].produces : [];
}

/**
 * Runs one step on its kind's executor; a step for the other side, or one needing the receiver the
 * run does not have, is a suite error (its checks fail with it).
 */
export async function runStep(step: Step, target: Target, state: CaseState): Promise<StepRun> {
  const found = entryOf(step);
  if (!found || found.entry.side !== target.side || (found.entry.receiver(found.body) && !state.receiver)) {
    return { exchanges: [], fault: { blame: 'suite', message: `this step does not apply to a ${target.side}` } };
  }
  return found.entry.run(found.body, target as never, state, step);
}
