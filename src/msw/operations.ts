import type { ExactJson } from '../core/exact-json.js';
import type { CardOutcome, EnvelopeOutcome, ServiceContext, ServiceRandom } from '../service/context.js';
import { MemoryServiceState } from '../service/memory-state.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { DEFAULT_POLICIES } from '../service/policies.js';
import { ruleSuffix } from '../core/issue-wording.js';
import { cardFailure, envelopeFailure, type Answer } from './answers.js';
import type { ResolvedMerchant } from './merchants.js';
import { businessFailure, type WalletScenario } from './scenarios.js';

/** A plain request that passed its schema. */
export type Plain = Record<string, ExactJson>;

/**
 * What one set of handlers remembers between requests: the service's state in memory
 * (src/service/memory-state.ts) and the numbering of requestIds and bizIds. Every card of a known
 * merchant counts as open until it is closed here (`unknownCards: 'open'`): a merchant's unit test
 * closes cards it never registered.
 */
interface MockState {
  readonly service: MemoryServiceState;
  /** Numbers requestId, bizId and the service's ids, so answers are deterministic. */
  sequence: number;
}

/** A fresh state for the merchants of one set of handlers (their energy objects are the live balances). */
export function createMockState(merchants: readonly ResolvedMerchant[]): MockState {
  return { service: new MemoryServiceState({ merchants, unknownCards: 'open' }), sequence: 0 };
}

/** What an operation needs: the merchant the key named (card close finds its own), the plain request. */
interface OperationContext {
  readonly merchant: ResolvedMerchant | undefined;
  readonly merchants: readonly ResolvedMerchant[];
  readonly plain: Plain;
  readonly scenario: WalletScenario;
  readonly state: MockState;
}

/** A result to answer (sealed when the response is encrypted), or a finished failure answer. */
export type OperationOutcome = { ok: true; result: unknown; merchant?: ResolvedMerchant } | { ok: false; answer: Answer; merchant?: ResolvedMerchant };

/** Business logic of one operation, after the request passed its schema. */
type Operation = (ctx: OperationContext) => OperationOutcome;

function nextId(state: MockState, prefix: string): string {
  state.sequence += 1;
  return `${prefix}-msw-${String(state.sequence).padStart(6, '0')}`;
}

/** Deterministic ids for the service (txids, trackingIds of withdrawal callbacks, which MSW never sends). */
function sequenceRandom(state: MockState): ServiceRandom {
  const next = () => (state.sequence += 1);
  return {
    hex: (bytes) => next().toString(16).padStart(bytes * 2, '0'),
    uuid: () => `00000000-0000-4000-8000-${next().toString(16).padStart(12, '0')}`,
  };
}

/** The service (src/service) as one set of handlers runs it: in memory, default policies, the scenario's forced failures. */
function serviceContext(ctx: OperationContext): ServiceContext {
  return {
    state: ctx.state.service,
    callbacks: { queued: () => undefined },
    policies: DEFAULT_POLICIES,
    now: () => Date.now(),
    random: sequenceRandom(ctx.state),
    withdrawalDelayMs: 0,
    bizId: () => nextId(ctx.state, 'biz'),
    forced: (operation) => businessFailure(ctx.scenario, operation),
  };
}

/** A failure message naming its rules, as every message of the handlers does. */
function withRules(message: string, rules: readonly string[]): string {
  const missing = rules.filter((rule) => !message.includes(rule));
  return message + ruleSuffix(missing);
}

function envelope(outcome: EnvelopeOutcome, merchant: ResolvedMerchant | undefined): OperationOutcome {
  if (outcome.ok) return { ok: true, result: outcome.result };
  return { ok: false, answer: envelopeFailure(outcome.failure, withRules(outcome.message, outcome.rules)), ...(merchant ? { merchant } : {}) };
}

/** ENERGY-REQ, ENERGY-RES, ENERGY-FLOOR (src/service/energy.ts). */
const getEnergyMaxCount: Operation = (ctx) => envelope(SERVICE_OPERATIONS.getEnergyMaxCount(serviceContext(ctx), ctx.merchant!.userId, ctx.plain), undefined);

/** ORDER-* (src/service/order.ts). */
const withdrawWithoutVerify: Operation = (ctx) => envelope(SERVICE_OPERATIONS.withdrawWithoutVerify(serviceContext(ctx), ctx.merchant!.userId, ctx.plain), undefined);

/** Card close (CARD-*, src/service/card-close.ts): HTTP 200 with the response shape on success and on failure (U-CARD-VALUES). */
const closeCard: Operation = (ctx) => {
  const requestId = nextId(ctx.state, 'req');
  const outcome: CardOutcome = SERVICE_OPERATIONS.closeCard(serviceContext(ctx), ctx.plain);
  const merchant = outcome.merchant === undefined ? undefined : ctx.merchants.find((m) => m.userId === outcome.merchant);
  const named = merchant ? { merchant } : {};
  if (!outcome.ok) {
    // No X-API-KEY reaches card close here (U-CARD-AUTH: the spec names none), so never `forbidden`.
    const failure = outcome.failure === 'forbidden' ? 'internal' : outcome.failure;
    return { ok: false, ...named, answer: cardFailure(failure, withRules(outcome.message, outcome.rules), requestId) };
  }
  return {
    ok: true,
    ...named,
    result: { success: true, errorCode: '', errorMessage: '', errorMessageEn: '', detailMessage: '', requestId, data: outcome.result },
  };
};

/** Business logic by operationId; an operation of the spec missing here answers its spec example. */
export const OPERATIONS: Readonly<Record<string, Operation>> = Object.freeze({ getEnergyMaxCount, withdrawWithoutVerify, closeCard });
