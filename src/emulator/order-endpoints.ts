import type { IncomingMessage, ServerResponse } from 'node:http';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { mediaType, readBody } from '../core/http-io.js';
import { validateSchema, type SchemaIssue } from '../core/schemas.js';
import { BASE64_PATTERN } from '../crypto/base64.js';
import { halfFor, openJson } from '../crypto/codec.js';
import { CryptoError, type CryptoFailureReason } from '../crypto/errors.js';
import type { EnvelopeFailure } from './codes.js';
import type { EmulatorMerchant, Permission } from './config.js';
import { merchantKey, type EmulatorContext } from './context.js';
import { decimalToBigInt, formatDecimal, integerDigits, isPositive, isWholeDecimal, parseDecimal, type ExactDecimal } from './decimal.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './limits.js';
import { sendFailure, sendForbidden, sendSuccess, sendTooLarge, sendUnauthorized } from './envelope.js';
import { acceptsWithdrawalSymbol, describeWithdrawalSymbols, shapeCallbackPayload } from './policies.js';

/** The two encrypted order endpoints (ENERGY-PATH, ORDER-PATH). */
export type OrderEndpoint = 'getEnergyMaxCount' | 'withdrawWithoutVerify';

/** Exact paths under {base_url} (VERSION-V1). */
export const ORDER_PATHS: Readonly<Record<OrderEndpoint, string>> = Object.freeze({
  getEnergyMaxCount: '/api/v1/api/order/getEnergyMaxCount',
  withdrawWithoutVerify: '/api/v1/api/order/withdrawWithoutVerify',
});

/** Base of surrogate tenant ids: a non-numeric tenantUserId gets 9e15 + n (below 2^53, ORDER-RES). */
export const SURROGATE_TENANT_BASE = 9_000_000_000_000_000;
const JAVA_LONG_MAX = 9_223_372_036_854_775_807n;
const MAX_EXPIRY_HOURS = 8760;
const MAX_LEASE_TRANSACTIONS = 1_000_000_000_000n;

type Plain = Record<string, ExactJson>;
type Outcome = { ok: true; result: unknown } | { ok: false; failure: EnvelopeFailure; message: string };

/**
 * Serves getEnergyMaxCount or withdrawWithoutVerify: key check (ERR-401/403), Content-Type
 * (ENERGY-CT, ORDER-CT), form field `data` (ENERGY-DATA, ORDER-DATA), decryption with the merchant's
 * key per profile, schema validation, then the business rule; every failure is an envelope.
 */
export async function serveOrderEndpoint(ctx: EmulatorContext, endpoint: OrderEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { faults } = ctx;
  const verdict = ctx.keys.check(req.headers['x-api-key'], endpoint satisfies Permission, ctx.now(), {
    ignoreWindow: faults.has('err401-expired-ok'),
    ignorePermissions: faults.has('no-403'),
  });
  if (!verdict.ok) {
    if (verdict.status === 401) return sendUnauthorized(ctx, res, verdict.why);
    return sendForbidden(res, verdict.why);
  }
  const merchant = verdict.merchant;
  const type = mediaType(req.headers['content-type']);
  if (type !== 'application/x-www-form-urlencoded' && !faults.has('ct-any')) {
    return sendFailure(ctx, res, 'badContentType', `Content-Type must be application/x-www-form-urlencoded, not ${JSON.stringify(req.headers['content-type'] ?? '')}`);
  }
  const body = await readBody(req, ctx.config.bodyLimit);
  if (!body.ok) {
    if (body.reason === 'too-large') return sendTooLarge(res, ctx.config.bodyLimit);
    res.destroy();
    return;
  }
  const opened = openRequest(merchant, body.body);
  if (!opened.ok) return sendFailure(ctx, res, opened.failure, opened.message);
  const outcome = endpoint === 'getEnergyMaxCount' ? energyMaxCount(ctx, merchant, opened.plain) : submitOrder(ctx, merchant, opened.plain);
  if (!outcome.ok) return sendFailure(ctx, res, outcome.failure, outcome.message);
  sendSuccess(ctx, res, merchant, outcome.result);
}

const BASE64_REASONS: ReadonlySet<CryptoFailureReason> = new Set([
  'empty', 'data-prefix', 'plus-as-space', 'percent-encoded', 'url-safe-alphabet', 'line-breaks', 'whitespace',
  'invalid-character', 'missing-padding', 'bad-base64-length', 'misplaced-padding', 'non-canonical-base64',
]);

function openRequest(merchant: EmulatorMerchant, body: Buffer): { ok: true; plain: Plain } | { ok: false; failure: EnvelopeFailure; message: string } {
  const values = new URLSearchParams(body.toString('utf8')).getAll('data');
  if (values.length === 0 || values[0] === '') return { ok: false, failure: 'missingData', message: 'form field data is required' };
  if (values.length > 1) return { ok: false, failure: 'missingData', message: `form field data appears ${values.length} times; send it once` };
  const data = values[0]!;
  const profile = merchant.profile;
  const key = merchantKey(merchant, halfFor('request', 'decrypt', profile));
  let value: ExactJson;
  try {
    value = openJson(data, 'request', key, { profile }).value;
  } catch (error) {
    if (!(error instanceof CryptoError)) throw error;
    const failure: EnvelopeFailure = BASE64_REASONS.has(error.reason) ? 'badBase64' : error.reason === 'not-utf8' || error.reason === 'not-json' ? 'badJson' : 'cannotDecrypt';
    return { ok: false, failure, message: `cannot read data: ${error.message} [${error.reason}]` };
  }
  if (!BASE64_PATTERN.test(data)) {
    // openJson's strict decoder refuses everything the pattern refuses; this is a second fence.
    return { ok: false, failure: 'badBase64', message: 'data does not match ^[A-Za-z0-9+/]+={0,2}$' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof LosslessNumber) {
    return { ok: false, failure: 'badJson', message: 'the decrypted data is JSON but not an object' };
  }
  if (nestedDeeperThan(value)) return { ok: false, failure: 'invalidRequest', message: `the decrypted JSON is nested deeper than ${MAX_JSON_DEPTH} levels` };
  return { ok: true, plain: value as Plain };
}

function describeIssues(issues: readonly SchemaIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.message}${issue.rules.length > 0 ? ` [${issue.rules.join(', ')}]` : ''}`);
  return shown.join('; ') + (issues.length > 5 ? `; and ${issues.length - 5} more` : '');
}

/** ENERGY-REQ, ENERGY-RES, ENERGY-FLOOR: floor(balance / costPerTx) from the live balance, in BigInt. */
function energyMaxCount(ctx: EmulatorContext, merchant: EmulatorMerchant, plain: Plain): Outcome {
  const issues = validateSchema('EnergyMaxCountRequest', plain);
  if (issues.length > 0) return { ok: false, failure: 'invalidRequest', message: `invalid request: ${describeIssues(issues)}` };
  const notText = notStrings(plain, ['symbol', 'chainName']);
  if (notText) return { ok: false, failure: 'invalidRequest', message: `invalid request: ${notText} [ENERGY-REQ]` };
  if (plain.symbol !== 'ENERGY' || plain.chainName !== 'TRON') {
    return { ok: false, failure: 'unsupportedResource', message: `only symbol ENERGY on chainName TRON is supported, not ${String(plain.symbol)} on ${String(plain.chainName)}` };
  }
  settleLeaseDebits(ctx);
  const energy = ctx.faults.has('energy-stale') ? ctx.initialEnergy.get(merchant.userId) : ctx.store.energy(merchant.userId);
  if (!energy) return { ok: false, failure: 'internal', message: 'merchant missing from the store' };
  const count = ctx.faults.has('energy-round') ? BigInt(Math.round(Number(energy.balance) / Number(energy.costPerTx))) : energy.balance / energy.costPerTx;
  return { ok: true, result: { chainName: 'TRON', symbol: 'ENERGY', energyMaxCount: new LosslessNumber(count.toString()) } };
}

/**
 * The schema's view turns a number a float cannot hold (1e999) into its text, which a `string`
 * schema accepts; string fields are checked here once more so a number never reaches the store.
 */
function notStrings(plain: Plain, fields: readonly string[]): string | undefined {
  const wrong = fields.filter((field) => typeof plain[field] !== 'string');
  return wrong.length === 0 ? undefined : `${wrong.map((field) => `/${field}`).join(', ')} must be string`;
}

/** The literal text of a JSON number or string (amounts, integers kept exact). */
function literal(value: ExactJson | undefined): string | undefined {
  if (value instanceof LosslessNumber) return value.value;
  return typeof value === 'string' ? value : undefined;
}

/** ORDER-*: validate, refuse duplicates, record the order; a withdrawal queues its callback. */
function submitOrder(ctx: EmulatorContext, merchant: EmulatorMerchant, plain: Plain): Outcome {
  const { faults } = ctx;
  const issues = validateSchema('OrderRequest', plain).filter((issue) => {
    if (faults.has('order-tenant-type-any') && issue.rules.includes('ORDER-TENANT-TYPE') && issue.keyword !== 'required') return false;
    if (faults.has('order-energy-no-expiry') && issue.keyword === 'required' && issue.path === '/expiryHours') return false;
    return true;
  });
  if (issues.length > 0) {
    const has = (rule: string) => issues.some((issue) => issue.rules.includes(rule));
    const failure: EnvelopeFailure = has('ORDER-TENANT-TYPE') ? 'tenantType' : has('ORDER-EXPIRY') ? 'expiryHours' : has('ORDER-ENERGY-AMOUNT') ? 'energyAmount' : 'invalidRequest';
    return { ok: false, failure, message: `invalid order: ${describeIssues(issues)}` };
  }
  const notText = notStrings(plain, ['tenantUserId', 'callBackId', 'symbol', 'chainName', 'toAddr']);
  if (notText) return { ok: false, failure: 'invalidRequest', message: `invalid order: ${notText} [ORDER-FIELDS]` };
  const userId = parseDecimal(literal(plain.userId) ?? '');
  if (!userId || !isWholeDecimal(userId) || decimalToBigInt(userId) !== BigInt(merchant.userId)) {
    return { ok: false, failure: 'userIdMismatch', message: `userId ${literal(plain.userId) ?? '?'} is not the userId of the merchant that owns this X-API-KEY` };
  }
  const symbol = plain.symbol as string;
  const callBackId = plain.callBackId as string;
  const tenantUserId = plain.tenantUserId as string;
  const lease = symbol === 'ENERGY';
  const policies = ctx.config.policies;
  if (!lease && !acceptsWithdrawalSymbol(policies, symbol)) {
    return { ok: false, failure: 'unsupportedSymbol', message: `symbol ${JSON.stringify(symbol)} is neither ENERGY nor a digital-currency symbol this service pays out (${describeWithdrawalSymbols(policies)})` };
  }
  let amountText = literal(plain.amount) ?? '';
  // Fault order-amount-float: the BigDecimal goes through a binary float (ORDER-FIELDS broken).
  if (faults.has('order-amount-float')) amountText = String(Number(amountText));
  const amount = parseDecimal(amountText);
  let expiryHours: number | undefined;
  let leaseDebit: { cost: bigint; debit: boolean; pending: bigint } | undefined;
  if (lease) {
    // ORDER-ENERGY-AMOUNT: the number of transactions, a whole number.
    if (!amount || !isWholeDecimal(amount) || !isPositive(amount) || decimalToBigInt(amount) > MAX_LEASE_TRANSACTIONS) {
      return { ok: false, failure: 'energyAmount', message: `an ENERGY order's amount is the number of transactions: a whole number from 1 to ${MAX_LEASE_TRANSACTIONS}, not ${literal(plain.amount)}` };
    }
    if (plain.expiryHours !== undefined) {
      const hours = parseDecimal(literal(plain.expiryHours) ?? '');
      if (!hours || !isWholeDecimal(hours) || !isPositive(hours) || decimalToBigInt(hours) > BigInt(MAX_EXPIRY_HOURS)) {
        return { ok: false, failure: 'expiryHours', message: `expiryHours must be a whole number from 1 to ${MAX_EXPIRY_HOURS}, not ${literal(plain.expiryHours)}` };
      }
      expiryHours = Number(decimalToBigInt(hours));
    }
    settleLeaseDebits(ctx);
    const energy = ctx.store.energy(merchant.userId);
    const pending = ctx.pendingDebits.filter((debit) => debit.merchant === merchant.userId).reduce((sum, debit) => sum + debit.cost, 0n);
    // U-STATES (policy leaseDebit): the lease lowers the balance now, later, or never.
    leaseDebit = { cost: decimalToBigInt(amount) * (energy?.costPerTx ?? 1n), debit: policies.leaseDebit === 'now', pending };
  } else if (!amount || !isPositive(amount) || integerDigits(amount) > policies.amountIntegerDigits || amount.scale > policies.amountFractionDigits) {
    // U-LIMITS (policies amountIntegerDigits, amountFractionDigits): how many digits an amount may have.
    return { ok: false, failure: 'amount', message: `amount must be a decimal above 0 with at most ${policies.amountIntegerDigits} integer and ${policies.amountFractionDigits} fraction digits, not ${literal(plain.amount)}` };
  }
  const exact = formatDecimal(amount as ExactDecimal);
  const now = ctx.now();
  const txid = lease ? undefined : ctx.random.hex(32);
  const order = {
    merchant: merchant.userId,
    callBackId,
    kind: lease ? ('energy' as const) : ('withdrawal' as const),
    tenantUserId,
    symbol,
    chain: plain.chainName as string,
    toAddr: plain.toAddr as string,
    amount: exact,
    createdAt: now,
    ...(expiryHours === undefined ? {} : { expiryHours }),
    ...(txid === undefined ? {} : { txid }),
  };
  const event = txid === undefined ? undefined : withdrawalEvent(ctx, merchant, order, txid, now);
  const stored = ctx.store.createOrder(order, leaseDebit, event);
  if (stored === 'duplicate') {
    const first = ctx.store.order(merchant.userId, callBackId);
    // U-STATES (policy duplicateCallBackId): a replaying service answers the first order's result again.
    if (policies.duplicateCallBackId === 'replay' && first) return { ok: true, result: { tenantUserId: tenantIdOf(ctx, merchant, first.tenantUserId), id: callBackId } };
    return { ok: false, failure: 'duplicateCallBackId', message: `duplicate callBackId ${JSON.stringify(callBackId)}: the merchant used it for an earlier order` };
  }
  if (stored === 'insufficient') return { ok: false, failure: 'insufficientEnergy', message: `insufficient energy: the lease needs ${leaseDebit?.cost} and the merchant has less` };
  if (leaseDebit && policies.leaseDebit === 'later') ctx.pendingDebits.push({ merchant: merchant.userId, cost: leaseDebit.cost, dueAt: now + policies.leaseDebitDelayMs });
  if (event) ctx.wakeDispatcher();
  return {
    ok: true,
    result: {
      tenantUserId: faults.has('order-result-string') ? String(tenantIdOf(ctx, merchant, tenantUserId)) : tenantIdOf(ctx, merchant, tenantUserId),
      id: faults.has('order-id-echo-wrong') ? `${callBackId}-1` : callBackId,
    },
  };
}

/**
 * ORDER-RES types tenantUserId as an integer while the request types it as a string: a decimal
 * string that fits a Java long is echoed as that integer, digit for digit; any other string gets a
 * stable surrogate id (9e15 + n) kept in the store.
 */
function tenantIdOf(ctx: EmulatorContext, merchant: EmulatorMerchant, tenantUserId: string): LosslessNumber {
  if (/^(0|[1-9]\d{0,18})$/.test(tenantUserId) && BigInt(tenantUserId) <= JAVA_LONG_MAX) return new LosslessNumber(tenantUserId);
  return new LosslessNumber(String(SURROGATE_TENANT_BASE + ctx.store.tenantNumericId(merchant.userId, tenantUserId)));
}

/** The withdrawal callback (type 3) of an order, due after withdrawalDelayMs (CB-ID-WITHDRAW: txid). */
function withdrawalEvent(
  ctx: EmulatorContext,
  merchant: EmulatorMerchant,
  order: { callBackId: string; tenantUserId: string; symbol: string; chain: string; toAddr: string; amount: string },
  txid: string,
  now: number,
) {
  const trackingId = `wd-${ctx.random.hex(8)}`;
  const payload = shapeCallbackPayload<ExactJson>({
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
  }, ctx.config.policies, (text) => new LosslessNumber(text));
  return {
    trackingId,
    merchant: merchant.userId,
    type: 3,
    payload: stringifyExact(payload),
    deliveries: 1,
    concurrent: false,
    fixedUuid: ctx.random.uuid(),
    orderId: order.callBackId,
    createdAt: now,
    dueAt: now + ctx.config.callbacks.withdrawalDelayMs,
  };
}

/**
 * Applies the lease debits that are due (policy leaseDebit: later, U-STATES). They live in memory:
 * a restart forgets debits not yet due, as a service that debits on a later event may.
 */
export function settleLeaseDebits(ctx: EmulatorContext): void {
  const now = ctx.now();
  const due = ctx.pendingDebits.filter((debit) => debit.dueAt <= now);
  if (due.length === 0) return;
  for (const debit of due) {
    ctx.store.debitEnergy(debit.merchant, debit.cost);
    ctx.pendingDebits.splice(ctx.pendingDebits.indexOf(debit), 1);
  }
}
