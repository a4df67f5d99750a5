import { LosslessNumber } from '../core/exact-json.js';
import { validateSchema } from '../core/schemas.js';
import { notStrings, refuse, type EnvelopeOutcome, type Plain, type ServiceContext } from './service-context.js';
import { coerceFields } from './policies.js';
import { describeRequestIssues } from './request-wording.js';
import type { MerchantId, ServiceState } from './state.js';

/**
 * getEnergyMaxCount (ENERGY-REQ, ENERGY-RES, ENERGY-FLOOR): floor(balance / costPerTx) from the
 * live balance, in BigInt, after the lease debits that are due.
 *
 * @example getEnergyMaxCount(ctx, 10086n, { symbol: 'ENERGY', chainName: 'TRON' }) // { ok: true, result: { …, energyMaxCount: 312 } }
 */
export function getEnergyMaxCount(ctx: ServiceContext, merchant: MerchantId, request: Plain): EnvelopeOutcome {
  // U-CODES (policy typeCoercion): a number in a string field bound as its text, as Jackson binds it.
  const plain = coerceFields(request, ctx.policies, { integers: [], strings: ['symbol', 'chainName'] });
  const issues = validateSchema('EnergyMaxCountRequest', plain);
  if (issues.length > 0) return refuse('invalidRequest', describeRequestIssues('getEnergyMaxCount', issues));
  const notText = notStrings(plain, ['symbol', 'chainName']);
  if (notText) return refuse('invalidRequest', `${notText} [ENERGY-REQ]`);
  if (plain.symbol !== 'ENERGY' || plain.chainName !== 'TRON') {
    return refuse(
      'unsupportedResource',
      `only symbol ENERGY on chainName TRON is supported, not ${String(plain.symbol)} on ${String(plain.chainName)}`,
    );
  }
  settleLeaseDebits(ctx);
  const energy = ctx.state.energy(merchant);
  if (!energy) return refuse('internal', 'merchant missing from the store');
  return {
    ok: true,
    result: {
      chainName: 'TRON',
      symbol: 'ENERGY',
      energyMaxCount: new LosslessNumber((energy.balance / energy.costPerTx).toString()),
    },
  };
}

/**
 * Applies the lease debits that are due (policy leaseDebit: later, U-STATES); the control API's
 * energy routes call it too, so a balance read is never behind the debits.
 */
export function settleLeaseDebits(ctx: Pick<ServiceContext, 'state' | 'now'>): void {
  const now = ctx.now();
  const pending = ctx.state.pendingDebits;
  const due = pending.filter((debit) => debit.dueAt <= now);
  for (const debit of due) {
    debitEnergy(ctx.state, debit.merchant, debit.cost);
    pending.splice(pending.indexOf(debit), 1);
  }
}

/** Lowers the merchant's balance by `cost` (a deferred lease debit), never below 0. */
export function debitEnergy(state: ServiceState, merchant: MerchantId, cost: bigint): void {
  const energy = state.energy(merchant);
  if (energy) state.setBalance(merchant, energy.balance > cost ? energy.balance - cost : 0n);
}
