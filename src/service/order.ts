import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import type { EnvelopeFailure } from './codes.js';
import { notStrings, refuse, type EnvelopeOutcome, type Plain, type ServiceContext } from './service-context.js';
import {
  decimalToBigInt,
  formatDecimal,
  integerDigits,
  isPositive,
  isWholeDecimal,
  parseDecimal,
  type ExactDecimal,
} from './decimal.js';
import { settleLeaseDebits } from './energy.js';
import { describeRequestIssues } from './request-wording.js';
import {
  acceptsWithdrawalSymbol,
  coerceFields,
  describeWithdrawalSymbols,
  shapeCallbackPayload,
  type FieldTypes,
  type ServicePolicies,
} from './policies.js';
import type { CreateOrderOutcome, LeaseDebit, MerchantId, NewOrder, QueuedCallback, ServiceState } from './state.js';

/** Base of surrogate tenant ids: a non-numeric tenantUserId gets 9e15 + n (below 2^53, ORDER-RES). */
const SURROGATE_TENANT_BASE = 9_000_000_000_000_000n;
const JAVA_LONG_MAX = 9_223_372_036_854_775_807n;
/** Longest energy lease, in hours (ORDER-EXPIRY; U-LIMITS). */
const MAX_EXPIRY_HOURS = 8760;
/** Most transactions one energy lease may buy (ORDER-ENERGY-AMOUNT; U-LIMITS). */
const MAX_LEASE_TRANSACTIONS = 1_000_000_000_000n;

/** The literal text of a JSON number or string (amounts, integers kept exact). */
function literal(value: ExactJson | undefined): string | undefined {
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : undefined;
}

/** The order request's fields by their type (ORDER-FIELDS, ORDER-EXPIRY); amount is a decimal either way. */
const ORDER_FIELD_TYPES: FieldTypes = {
  integers: ['userId', 'tenantType', 'expiryHours'],
  strings: ['tenantUserId', 'callBackId', 'symbol', 'chainName', 'toAddr'],
};

/** A refusal of the order request (ORDER-*). */
type OrderRefusal = Extract<EnvelopeOutcome, { ok: false }>;

/** An order request that passed every check of its fields, read for recording. */
interface OrderRequest {
  plain: Plain;
  symbol: string;
  callBackId: string;
  tenantUserId: string;
  lease: boolean;
  amount: ExactDecimal;
  expiryHours: number | undefined;
}

/**
 * withdrawWithoutVerify (ORDER-*): the schema, the userId of the key's merchant, the symbol, the
 * amount's digits (policies), a lease's transactions, expiry and energy (policy leaseDebit), a used
 * callBackId (policy duplicateCallBackId); records the order and, for a withdrawal, queues its
 * callback (type 3). The result echoes tenantUserId as an integer (surrogate ids for other text).
 */
export function withdrawWithoutVerify(ctx: ServiceContext, merchant: MerchantId, request: Plain): EnvelopeOutcome {
  const read = readOrderRequest(ctx, merchant, request);
  if ('failure' in read) return read;
  const { plain, symbol, callBackId, tenantUserId, lease, amount, expiryHours } = read;
  const { policies, state } = ctx;
  let leaseDebit: LeaseDebit | undefined;
  if (lease) {
    settleLeaseDebits(ctx);
    const energy = state.energy(merchant);
    const pending = state.pendingDebits
      .filter((debit) => debit.merchant === merchant)
      .reduce((sum, debit) => sum + debit.cost, 0n);
    // U-STATES (policy leaseDebit): the lease lowers the balance now, later, or never.
    leaseDebit = {
      cost: decimalToBigInt(amount) * (energy?.costPerTx ?? 1n),
      debit: policies.leaseDebit === 'now',
      pending,
    };
  }
  const now = ctx.now();
  const txid = lease ? undefined : ctx.random.hex(32);
  const order: NewOrder = {
    merchant,
    callBackId,
    kind: lease ? 'energy' : 'withdrawal',
    tenantUserId,
    symbol,
    chain: plain.chainName as string,
    toAddr: plain.toAddr as string,
    amount: formatDecimal(amount),
    createdAt: now,
    ...(expiryHours === undefined ? {} : { expiryHours }),
    ...(txid === undefined ? {} : { txid }),
  };
  const callback = txid === undefined ? undefined : withdrawalCallback(ctx, order, txid, now);
  const stored = recordOrder(state, order, leaseDebit, callback);
  if (stored === 'duplicate') {
    const first = state.order(merchant, callBackId);
    // U-STATES (policy duplicateCallBackId): a replaying service answers the first order's result again.
    if (policies.duplicateCallBackId === 'replay' && first)
      return { ok: true, result: { tenantUserId: tenantIdOf(ctx, merchant, first.tenantUserId), id: callBackId } };
    return refuse(
      'duplicateCallBackId',
      `duplicate callBackId ${JSON.stringify(callBackId)}: the merchant used it for an earlier order`,
      ['ORDER-CALLBACK-ID'],
    );
  }
  if (stored === 'insufficient')
    return refuse(
      'insufficientEnergy',
      `insufficient energy: the lease needs ${leaseDebit?.cost} and the merchant has less`,
    );
  if (leaseDebit && policies.leaseDebit === 'later')
    state.pendingDebits.push({ merchant, cost: leaseDebit.cost, dueAt: now + policies.leaseDebitDelayMs });
  if (callback) ctx.callbacks.queued(callback);
  return { ok: true, result: { tenantUserId: tenantIdOf(ctx, merchant, tenantUserId), id: callBackId } };
}

/** The order request's checks: the schema, the fields' types, the key's merchant's userId, the symbol, then the amount. */
function readOrderRequest(ctx: ServiceContext, merchant: MerchantId, request: Plain): OrderRequest | OrderRefusal {
  // U-CODES (policy typeCoercion): "42" for an integer field, 42 for a string field, bound as Jackson binds them.
  const plain = coerceFields(request, ctx.policies, ORDER_FIELD_TYPES);
  const issues = validateSchema('OrderRequest', plain);
  if (issues.length > 0) {
    const has = (rule: string) => issues.some((issue) => issue.rules.includes(rule));
    const failure: EnvelopeFailure = has('ORDER-TENANT-TYPE')
      ? 'tenantType'
      : has('ORDER-EXPIRY')
        ? 'expiryHours'
        : has('ORDER-ENERGY-AMOUNT')
          ? 'energyAmount'
          : 'invalidRequest';
    return refuse(failure, describeRequestIssues('withdrawWithoutVerify', issues));
  }
  const notText = notStrings(plain, ['tenantUserId', 'callBackId', 'symbol', 'chainName', 'toAddr']);
  if (notText) return refuse('invalidRequest', `${notText} [ORDER-FIELDS]`);
  const userId = parseDecimal(literal(plain.userId) ?? '');
  if (!userId || !isWholeDecimal(userId) || decimalToBigInt(userId) !== merchant) {
    return refuse(
      'userIdMismatch',
      `userId ${literal(plain.userId) ?? '?'} is not the userId of the merchant that owns this X-API-KEY`,
    );
  }
  const symbol = plain.symbol as string;
  const lease = symbol === 'ENERGY';
  if (!lease && !acceptsWithdrawalSymbol(ctx.policies, symbol)) {
    return refuse(
      'unsupportedSymbol',
      `symbol ${JSON.stringify(symbol)} is neither ENERGY nor a digital-currency symbol this service pays out (${describeWithdrawalSymbols(ctx.policies)})`,
      ['ORDER-KIND'],
    );
  }
  const amount = readAmount(ctx.policies, plain, lease);
  if ('failure' in amount) return amount;
  return {
    plain,
    symbol,
    callBackId: plain.callBackId as string,
    tenantUserId: plain.tenantUserId as string,
    lease,
    ...amount,
  };
}

/** The amount: a lease's number of transactions and its expiry, or a withdrawal's decimal within the policies' digits. */
function readAmount(
  policies: ServicePolicies,
  plain: Plain,
  lease: boolean,
): { amount: ExactDecimal; expiryHours: number | undefined } | OrderRefusal {
  const amount = parseDecimal(literal(plain.amount) ?? '');
  let expiryHours: number | undefined;
  if (lease) {
    // ORDER-ENERGY-AMOUNT: the number of transactions, a whole number.
    if (!amount || !isWholeDecimal(amount) || !isPositive(amount) || decimalToBigInt(amount) > MAX_LEASE_TRANSACTIONS) {
      return refuse(
        'energyAmount',
        `an ENERGY order's amount is the number of transactions: a whole number from 1 to ${MAX_LEASE_TRANSACTIONS}, not ${literal(plain.amount)}`,
        ['ORDER-ENERGY-AMOUNT'],
      );
    }
    if (plain.expiryHours !== undefined) {
      const hours = parseDecimal(literal(plain.expiryHours) ?? '');
      if (!hours || !isWholeDecimal(hours) || !isPositive(hours) || decimalToBigInt(hours) > BigInt(MAX_EXPIRY_HOURS)) {
        return refuse(
          'expiryHours',
          `expiryHours must be a whole number from 1 to ${MAX_EXPIRY_HOURS}, not ${literal(plain.expiryHours)}`,
          ['ORDER-EXPIRY'],
        );
      }
      expiryHours = Number(decimalToBigInt(hours));
    }
  } else if (
    !amount ||
    !isPositive(amount) ||
    integerDigits(amount) > policies.amountIntegerDigits ||
    amount.scale > policies.amountFractionDigits
  ) {
    // U-LIMITS (policies amountIntegerDigits, amountFractionDigits): how many digits an amount may have.
    return refuse(
      'amount',
      `amount must be a decimal above 0 with at most ${policies.amountIntegerDigits} integer and ${policies.amountFractionDigits} fraction digits, not ${literal(plain.amount)}`,
    );
  }
  return { amount, expiryHours };
}

/**
 * Records an order in one transaction of the state, deciding as it goes: a callBackId the merchant
 * used before is `duplicate` (ORDER-CALLBACK-ID); a lease above the balance less the pending debits
 * is `insufficient`, otherwise it is debited unless `lease.debit` is false (U-STATES, policy
 * leaseDebit); the order is stored and `callback` queued with it, so neither survives a crash
 * without the other.
 */
function recordOrder(
  state: ServiceState,
  order: NewOrder,
  lease: LeaseDebit | undefined,
  callback: QueuedCallback | undefined,
): CreateOrderOutcome {
  return state.transaction(() => {
    if (state.order(order.merchant, order.callBackId)) return 'duplicate';
    if (lease) {
      const balance = state.energy(order.merchant)?.balance ?? 0n;
      if (lease.cost + (lease.pending ?? 0n) > balance) return 'insufficient';
      if (lease.debit !== false) state.setBalance(order.merchant, balance - lease.cost);
    }
    state.insertOrder(order);
    if (callback) state.queueCallback(callback);
    return 'ok';
  });
}

/**
 * ORDER-RES types tenantUserId as an integer while the request types it as a string: a decimal
 * string that fits a Java long is echoed as that integer, digit for digit; any other string gets a
 * stable surrogate id (9e15 + n) kept in the state.
 */
function tenantIdOf(ctx: Pick<ServiceContext, 'state'>, merchant: MerchantId, tenantUserId: string): LosslessNumber {
  if (/^(0|[1-9]\d{0,18})$/.test(tenantUserId) && BigInt(tenantUserId) <= JAVA_LONG_MAX)
    return new LosslessNumber(tenantUserId);
  return new LosslessNumber(
    (SURROGATE_TENANT_BASE + BigInt(ctx.state.tenantNumber(merchant, tenantUserId))).toString(),
  );
}

/** The withdrawal callback (type 3) of an order, due after withdrawalDelayMs (CB-ID-WITHDRAW: txid). */
function withdrawalCallback(ctx: ServiceContext, order: NewOrder, txid: string, now: number): QueuedCallback {
  const trackingId = `wd-${ctx.random.hex(8)}`;
  // U-CB-FIELDS (policies callbackAmount, callbackFieldNames): the amount's form and the fields' spelling.
  const payload = shapeCallbackPayload<ExactJson>(
    {
      type: new LosslessNumber('3'),
      trackingId,
      tenantUserId: order.tenantUserId,
      business: new LosslessNumber('0'),
      txid,
      callBackId: order.callBackId,
      chain: order.chain,
      symbol: order.symbol,
      toAddress: order.toAddr,
      // Exact amounts: the digits as a JSON number, never through a float.
      amount: new LosslessNumber(order.amount),
    },
    ctx.policies,
    (text) => new LosslessNumber(text),
  );
  return {
    trackingId,
    merchant: order.merchant,
    type: 3,
    payload: stringifyExact(payload),
    deliveries: 1,
    concurrent: false,
    fixedUuid: ctx.random.uuid(),
    orderId: order.callBackId,
    createdAt: now,
    dueAt: now + ctx.withdrawalDelayMs,
  };
}
