import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { decimalToBigInt, integerDigits, isPositive, isWholeDecimal, parseDecimal } from '../emulator/decimal.js';
import { cardFailure, envelopeFailure, type Answer } from './answers.js';
import type { ResolvedMerchant } from './merchants.js';
import { businessFailure, type WalletScenario } from './scenarios.js';

/** A plain request that passed its schema. */
export type Plain = Record<string, ExactJson>;

/** In-memory state of one set of handlers: what the service remembers between requests. */
export interface MockState {
  /** callBackIds used per merchant (ORDER-CALLBACK-ID: a repeat is refused, as the emulator does). */
  readonly callBackIds: Map<bigint, Set<string>>;
  /** Surrogate integer ids of non-numeric tenantUserIds (ORDER-RES). */
  readonly tenantIds: Map<string, bigint>;
  /** Closed cards and used closeSerialNos, per merchant. */
  readonly closedCards: Set<string>;
  readonly closeSerials: Set<string>;
  /** Numbers requestId and bizId, so answers are deterministic. */
  sequence: number;
}

/** A fresh, empty state. */
export function createMockState(): MockState {
  return { callBackIds: new Map(), tenantIds: new Map(), closedCards: new Set(), closeSerials: new Set(), sequence: 0 };
}

/** What an operation needs: the merchant the key named (card close finds its own), the plain request. */
export interface OperationContext {
  readonly merchant: ResolvedMerchant | undefined;
  readonly merchants: readonly ResolvedMerchant[];
  readonly plain: Plain;
  readonly scenario: WalletScenario;
  readonly state: MockState;
}

/** A result to answer (sealed when the response is encrypted), or a finished failure answer. */
export type OperationOutcome = { ok: true; result: unknown; merchant?: ResolvedMerchant } | { ok: false; answer: Answer; merchant?: ResolvedMerchant };

/** Business logic of one operation, after the request passed its schema. */
export type Operation = (ctx: OperationContext) => OperationOutcome;

const CURRENCY_SYMBOL = /^[A-Z0-9]{1,20}$/;
const MAX_EXPIRY_HOURS = 8760n;
const MAX_LEASE_TRANSACTIONS = 1_000_000_000_000n;
const JAVA_LONG_MAX = 9_223_372_036_854_775_807n;
/** Non-numeric tenantUserIds get 9e15 + n, as in the emulator (below 2^53, ORDER-RES). */
const SURROGATE_TENANT_BASE = 9_000_000_000_000_000n;

/** The literal text of a JSON number or string (integers and amounts kept exact). */
function literal(value: ExactJson | undefined): string {
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : '';
}

function forced(ctx: OperationContext, operationId: string): OperationOutcome | undefined {
  const failure = businessFailure(ctx.scenario, operationId);
  if (!failure) return undefined;
  if (failure.kind === 'envelope') return { ok: false, answer: envelopeFailure(failure.failure, failure.message) };
  return { ok: false, answer: cardFailure(failure.failure, failure.message, nextId(ctx.state, 'req')) };
}

function nextId(state: MockState, prefix: string): string {
  state.sequence += 1;
  return `${prefix}-msw-${String(state.sequence).padStart(6, '0')}`;
}

/** ENERGY-REQ, ENERGY-RES, ENERGY-FLOOR: floor(balance / costPerTx) from the live balance, in BigInt. */
const getEnergyMaxCount: Operation = (ctx) => {
  const { plain, merchant } = ctx;
  if (plain.symbol !== 'ENERGY' || plain.chainName !== 'TRON') {
    return { ok: false, answer: envelopeFailure('unsupportedResource', `only symbol ENERGY on chainName TRON is supported, not ${String(plain.symbol)} on ${String(plain.chainName)}`) };
  }
  const failed = forced(ctx, 'getEnergyMaxCount');
  if (failed) return failed;
  const energy = merchant!.energy;
  return { ok: true, result: { chainName: 'TRON', symbol: 'ENERGY', energyMaxCount: new LosslessNumber((energy.balance / energy.costPerTx).toString()) } };
};

/** ORDER-*: the emulator's checks beyond the schema, forced failures, duplicates, the lease's energy. */
const withdrawWithoutVerify: Operation = (ctx) => {
  const { plain, state } = ctx;
  const merchant = ctx.merchant!;
  const userId = parseDecimal(literal(plain.userId));
  if (!userId || !isWholeDecimal(userId) || decimalToBigInt(userId) !== merchant.userId) {
    return { ok: false, answer: envelopeFailure('userIdMismatch', `userId ${literal(plain.userId) || '?'} is not the userId of the merchant that owns this X-API-KEY`) };
  }
  const symbol = plain.symbol as string;
  const callBackId = plain.callBackId as string;
  const lease = symbol === 'ENERGY';
  if (!lease && !CURRENCY_SYMBOL.test(symbol)) {
    return { ok: false, answer: envelopeFailure('unsupportedSymbol', `symbol ${JSON.stringify(symbol)} is neither ENERGY nor a digital-currency symbol (1-20 upper-case letters or digits) [ORDER-KIND]`) };
  }
  const amount = parseDecimal(literal(plain.amount));
  let leaseCost: bigint | undefined;
  if (lease) {
    if (!amount || !isWholeDecimal(amount) || !isPositive(amount) || decimalToBigInt(amount) > MAX_LEASE_TRANSACTIONS) {
      return { ok: false, answer: envelopeFailure('energyAmount', `an ENERGY order's amount is the number of transactions: a whole number from 1 to ${MAX_LEASE_TRANSACTIONS}, not ${literal(plain.amount)} [ORDER-ENERGY-AMOUNT]`) };
    }
    const hours = parseDecimal(literal(plain.expiryHours));
    if (!hours || !isWholeDecimal(hours) || !isPositive(hours) || decimalToBigInt(hours) > MAX_EXPIRY_HOURS) {
      return { ok: false, answer: envelopeFailure('expiryHours', `expiryHours must be a whole number from 1 to ${MAX_EXPIRY_HOURS}, not ${literal(plain.expiryHours)} [ORDER-EXPIRY]`) };
    }
    leaseCost = decimalToBigInt(amount) * merchant.energy.costPerTx;
  } else if (!amount || !isPositive(amount) || integerDigits(amount) > 38 || amount.scale > 18) {
    return { ok: false, answer: envelopeFailure('amount', `amount must be a decimal above 0 with at most 38 integer and 18 fraction digits, not ${literal(plain.amount)}`) };
  }
  const failed = forced(ctx, 'withdrawWithoutVerify');
  if (failed) return failed;
  const used = state.callBackIds.get(merchant.userId) ?? new Set<string>();
  if (used.has(callBackId)) {
    return { ok: false, answer: envelopeFailure('duplicateCallBackId', `duplicate callBackId ${JSON.stringify(callBackId)}: the merchant used it for an earlier order [ORDER-CALLBACK-ID]`) };
  }
  if (leaseCost !== undefined) {
    if (leaseCost > merchant.energy.balance) {
      return { ok: false, answer: envelopeFailure('insufficientEnergy', `insufficient energy: the lease needs ${leaseCost} and the merchant has ${merchant.energy.balance}`) };
    }
    merchant.energy.balance -= leaseCost;
  }
  used.add(callBackId);
  state.callBackIds.set(merchant.userId, used);
  return { ok: true, result: { tenantUserId: tenantIdOf(state, merchant, plain.tenantUserId as string), id: callBackId } };
};

/**
 * ORDER-RES types tenantUserId as an integer while the request types it as a string: digits that
 * fit a Java long are echoed digit for digit; any other string gets a stable surrogate.
 */
function tenantIdOf(state: MockState, merchant: ResolvedMerchant, tenantUserId: string): LosslessNumber {
  if (/^(0|[1-9]\d{0,18})$/.test(tenantUserId) && BigInt(tenantUserId) <= JAVA_LONG_MAX) return new LosslessNumber(tenantUserId);
  const key = `${merchant.userId}\u0000${tenantUserId}`;
  let id = state.tenantIds.get(key);
  if (id === undefined) {
    id = SURROGATE_TENANT_BASE + BigInt(state.tenantIds.size + 1);
    state.tenantIds.set(key, id);
  }
  return new LosslessNumber(id.toString());
}

const CARD_FIELDS = ['merchantId', 'merchantUserId', 'powerCardId', 'channel', 'closeSerialNo'] as const;

/**
 * Card close (CARD-*): HTTP 200 with the response shape on success and on failure (U-CARD-VALUES).
 * Every card of a known merchant counts as open until closed here; merchantId is a merchant's userId.
 */
const closeCard: Operation = (ctx) => {
  const { plain, state } = ctx;
  const requestId = nextId(state, 'req');
  const request = plain as Record<(typeof CARD_FIELDS)[number], string>;
  const empty = CARD_FIELDS.filter((field) => request[field].trim() === '');
  if (empty.length > 0) return { ok: false, answer: cardFailure('badRequest', `${empty.join(', ')} must not be empty [CARD-REQ]`, requestId) };
  const merchant = ctx.merchants.find((m) => m.userId.toString() === request.merchantId);
  if (!merchant) return { ok: false, answer: cardFailure('merchantNotFound', `no merchant ${request.merchantId}`, requestId) };
  const failed = forced(ctx, 'closeCard');
  if (failed) return { ...failed, merchant };
  const card = `${merchant.userId}\u0000${request.merchantUserId}\u0000${request.powerCardId}`;
  const serial = `${merchant.userId}\u0000${request.closeSerialNo}`;
  if (state.closeSerials.has(serial)) {
    return { ok: false, merchant, answer: cardFailure('duplicateSerialNo', `closeSerialNo ${request.closeSerialNo} was used for an earlier close of merchant ${merchant.userId}`, requestId) };
  }
  if (state.closedCards.has(card)) {
    return { ok: false, merchant, answer: cardFailure('alreadyClosed', `card ${request.powerCardId} is closed already`, requestId) };
  }
  state.closeSerials.add(serial);
  state.closedCards.add(card);
  return {
    ok: true,
    merchant,
    result: { success: true, errorCode: '', errorMessage: '', errorMessageEn: '', detailMessage: '', requestId, data: { bizId: nextId(state, 'biz'), status: 'CLOSED' } },
  };
};

/** Business logic by operationId; an operation of the spec missing here answers its spec example. */
export const OPERATIONS: Readonly<Record<string, Operation>> = Object.freeze({ getEnergyMaxCount, withdrawWithoutVerify, closeCard });
