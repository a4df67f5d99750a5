import type { ForcedFailure } from '../service/context.js';

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
type BusinessFailure = ForcedFailure;

type BusinessTable = Partial<Record<WalletScenario, Readonly<Record<string, BusinessFailure>>>>;

const internalEnvelope: BusinessFailure = { kind: 'envelope', failure: 'internal', message: 'internal error' };

/** Business scenarios by operationId; the codes and texts are the emulator's (src/service/codes.ts). */
const BUSINESS: BusinessTable = {
  'unsupported-resource': {
    getEnergyMaxCount: { kind: 'envelope', failure: 'unsupportedResource', message: 'only symbol ENERGY on chainName TRON is supported' },
  },
  'user-id-mismatch': {
    withdrawWithoutVerify: { kind: 'envelope', failure: 'userIdMismatch', message: 'userId is not the userId of the merchant that owns this X-API-KEY' },
  },
  'duplicate-callback-id': {
    withdrawWithoutVerify: { kind: 'envelope', failure: 'duplicateCallBackId', message: 'duplicate callBackId: the merchant used it for an earlier order [ORDER-CALLBACK-ID]' },
  },
  'insufficient-energy': {
    withdrawWithoutVerify: { kind: 'envelope', failure: 'insufficientEnergy', message: 'insufficient energy: the lease needs more than the merchant has' },
  },
  'unsupported-symbol': {
    withdrawWithoutVerify: { kind: 'envelope', failure: 'unsupportedSymbol', message: 'symbol is neither ENERGY nor a digital-currency symbol' },
  },
  'merchant-not-found': { closeCard: { kind: 'card', failure: 'merchantNotFound', message: 'no such merchant' } },
  'card-not-found': { closeCard: { kind: 'card', failure: 'cardNotFound', message: 'no such card of this merchant' } },
  'card-already-closed': { closeCard: { kind: 'card', failure: 'alreadyClosed', message: 'the card is closed already' } },
  'duplicate-serial-no': { closeCard: { kind: 'card', failure: 'duplicateSerialNo', message: 'closeSerialNo was used for an earlier close' } },
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
