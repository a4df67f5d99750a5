import { refuse, type CardOutcome, type EnvelopeOutcome, type ServiceContext } from '../service/service-context.js';
import type { CardFailure, EnvelopeFailure } from '../service/codes.js';
import type { ServiceOperations } from '../service/operations.js';
import type { PipelineKeys } from '../service/pipeline.js';
import type { MerchantId, ServiceState } from '../service/state.js';

/**
 * What the mocked service does. `success` answers by the rules (invalid requests still fail);
 * `unauthorized`, `forbidden` and `not-found` answer the spec's HTTP error on every endpoint whose
 * spec lists that status; each business failure answers its envelope (or card close failure) on
 * the operations it belongs to, after the request passed validation.
 */
export const WALLET_SCENARIOS = [
  'success',
  'unauthorized',
  'forbidden',
  'not-found',
  'unsupported-resource',
  'user-id-mismatch',
  'duplicate-callback-id',
  'insufficient-energy',
  'unsupported-symbol',
  'merchant-not-found',
  'card-not-found',
  'card-already-closed',
  'duplicate-serial-no',
  'internal-error',
] as const;

/** One scenario of {@link WALLET_SCENARIOS}. */
export type WalletScenario = (typeof WALLET_SCENARIOS)[number];

/** The scenarios that answer an HTTP error status from the spec, and that status. */
export const HTTP_SCENARIOS: Readonly<Partial<Record<WalletScenario, string>>> = Object.freeze({
  unauthorized: '401',
  forbidden: '403',
  'not-found': '404',
});

/** A forced business failure: the service's code (U-CODES) and its text. */
type BusinessFailure =
  | { kind: 'envelope'; failure: EnvelopeFailure; message: string }
  | { kind: 'card'; failure: CardFailure; message: string };

type BusinessTable = Partial<Record<WalletScenario, Readonly<Record<string, BusinessFailure>>>>;

const internalEnvelope: BusinessFailure = { kind: 'envelope', failure: 'internal', message: 'internal error' };

/** Business scenarios by operationId; the codes and texts are the service's (src/service/codes.ts). */
const BUSINESS: BusinessTable = {
  'unsupported-resource': {
    getEnergyMaxCount: {
      kind: 'envelope',
      failure: 'unsupportedResource',
      message: 'only symbol ENERGY on chainName TRON is supported',
    },
  },
  'user-id-mismatch': {
    withdrawWithoutVerify: {
      kind: 'envelope',
      failure: 'userIdMismatch',
      message: 'userId is not the userId of the merchant that owns this X-API-KEY',
    },
  },
  'duplicate-callback-id': {
    withdrawWithoutVerify: {
      kind: 'envelope',
      failure: 'duplicateCallBackId',
      message: 'duplicate callBackId: the merchant used it for an earlier order [ORDER-CALLBACK-ID]',
    },
  },
  'insufficient-energy': {
    withdrawWithoutVerify: {
      kind: 'envelope',
      failure: 'insufficientEnergy',
      message: 'insufficient energy: the lease needs more than the merchant has',
    },
  },
  'unsupported-symbol': {
    withdrawWithoutVerify: {
      kind: 'envelope',
      failure: 'unsupportedSymbol',
      message: 'symbol is neither ENERGY nor a digital-currency symbol',
    },
  },
  'merchant-not-found': { closeCard: { kind: 'card', failure: 'merchantNotFound', message: 'no such merchant' } },
  'card-not-found': { closeCard: { kind: 'card', failure: 'cardNotFound', message: 'no such card of this merchant' } },
  'card-already-closed': {
    closeCard: { kind: 'card', failure: 'alreadyClosed', message: 'the card is closed already' },
  },
  'duplicate-serial-no': {
    closeCard: { kind: 'card', failure: 'duplicateSerialNo', message: 'closeSerialNo was used for an earlier close' },
  },
  'internal-error': {
    getEnergyMaxCount: internalEnvelope,
    withdrawWithoutVerify: internalEnvelope,
    closeCard: { kind: 'card', failure: 'internal', message: 'internal error' },
  },
};

/** Is `value` a scenario name? */
export function isWalletScenario(value: unknown): value is WalletScenario {
  return (WALLET_SCENARIOS as readonly unknown[]).includes(value);
}

/**
 * The failure a business scenario forces on an operation; undefined when the scenario does not
 * concern it (the operation then answers as in `success`).
 *
 * @example businessFailure('duplicate-callback-id', 'withdrawWithoutVerify')?.failure // 'duplicateCallBackId'
 */
export function businessFailure(scenario: WalletScenario, operationId: string): BusinessFailure | undefined {
  return BUSINESS[scenario]?.[operationId];
}

/** Thrown by the guarded context at an operation's first effect. */
class FirstEffect extends Error {}

const stop = (): never => {
  throw new FirstEffect('the operation reached its first effect');
};

/**
 * The context an operation runs under when a scenario forces its failure: the same policies and
 * merchants, but the first effect (the clock, randomness, a bizId, any state read or change other
 * than "is this a merchant") stops it. The operation's own validation runs in full first, so an
 * invalid request fails as in `success`; a valid one gets the scenario's failure, the state untouched.
 */
function guarded(ctx: ServiceContext, seen: { merchant?: MerchantId }): ServiceContext {
  const state = new Proxy(ctx.state, {
    get(target, property) {
      if (property !== 'hasMerchant') return stop();
      return (merchant: MerchantId) => {
        const known = target.hasMerchant(merchant);
        if (known) seen.merchant = merchant;
        return known;
      };
    },
  }) as ServiceState;
  return {
    state,
    callbacks: { queued: stop },
    policies: ctx.policies,
    now: stop,
    random: { uuid: stop, hex: stop },
    withdrawalDelayMs: ctx.withdrawalDelayMs,
    bizId: stop,
  };
}

/** Runs `run` under the guarded context; at its first effect answers `forced` instead. */
function forcing<O extends EnvelopeOutcome | CardOutcome>(
  forced: BusinessFailure,
  ctx: ServiceContext,
  run: (ctx: ServiceContext) => O,
): O {
  const seen: { merchant?: MerchantId } = {};
  try {
    return run(guarded(ctx, seen));
  } catch (error) {
    if (!(error instanceof FirstEffect)) throw error;
    const refusal = refuse<string>(forced.failure, forced.message);
    return (
      forced.kind === 'card' && seen.merchant !== undefined ? { ...refusal, merchant: seen.merchant } : refusal
    ) as O;
  }
}

/**
 * The service's operations under a scenario, decorated from outside: a business scenario answers its
 * failure where the operation would start its work (after validation); other scenarios leave them as they are.
 *
 * @example scenarioOperations(SERVICE_OPERATIONS, 'duplicate-callback-id').withdrawWithoutVerify(ctx, 10086n, plain) // duplicateCallBackId
 */
export function scenarioOperations(operations: ServiceOperations, scenario: WalletScenario): ServiceOperations {
  const energy = businessFailure(scenario, 'getEnergyMaxCount');
  const order = businessFailure(scenario, 'withdrawWithoutVerify');
  const card = businessFailure(scenario, 'closeCard');
  return {
    getEnergyMaxCount: energy
      ? (ctx, merchant, plain) => forcing(energy, ctx, (inner) => operations.getEnergyMaxCount(inner, merchant, plain))
      : operations.getEnergyMaxCount,
    withdrawWithoutVerify: order
      ? (ctx, merchant, plain) =>
          forcing(order, ctx, (inner) => operations.withdrawWithoutVerify(inner, merchant, plain))
      : operations.withdrawWithoutVerify,
    closeCard: card
      ? (ctx, plain, keyMerchant) => forcing(card, ctx, (inner) => operations.closeCard(inner, plain, keyMerchant))
      : operations.closeCard,
  };
}

/**
 * The key check under a scenario, decorated from outside: `unauthorized` refuses every key (401),
 * `forbidden` every known one (403); other scenarios leave it as it is.
 */
export function scenarioKeys<M>(keys: PipelineKeys<M>, scenario: WalletScenario): PipelineKeys<M> {
  if (scenario === 'unauthorized') return { check: () => ({ ok: false, status: 401, why: 'scenario unauthorized' }) };
  if (scenario === 'forbidden') {
    return {
      check(header, operation, now) {
        const verdict = keys.check(header, operation, now);
        return verdict.ok ? { ok: false, status: 403, why: 'scenario forbidden' } : verdict;
      },
    };
  }
  return keys;
}
