/**
 * How the service describes a plain request that breaks its schema (ENERGY-REQ, ORDER-*, CARD-REQ):
 * by field (`chainName is required`, `tenantType must be 1`), each issue with its rules, a field
 * that fails twice (by its property and by an if/then branch) named once, five issues at most.
 * The emulator and the MSW handlers answer these words alike (src/service/pipeline.ts).
 */
import { describeIssues } from '../core/issue-wording.js';
import type { SchemaIssue } from '../core/schemas.js';

/** The operations whose plain request the service validates. */
type ValidatedOperation = 'getEnergyMaxCount' | 'withdrawWithoutVerify' | 'closeCard';

/**
 * The `const` of each plain request's properties, by field (the spec's table: `request.constants`
 * of `WALLET_ENDPOINTS`, to which `src/service/request-wording.test.ts` holds it).
 */
export const REQUEST_CONSTANTS: Readonly<Record<ValidatedOperation, Readonly<Record<string, unknown>>>> = Object.freeze(
  {
    getEnergyMaxCount: Object.freeze({}),
    withdrawWithoutVerify: Object.freeze({ tenantType: 1 }),
    closeCard: Object.freeze({}),
  },
);

/** Issues shown at most in one refusal, then `; and N more`. */
const SHOWN_ISSUES = 5;

/**
 * The schema issues of an operation's plain request as one refusal message.
 *
 * @example describeRequestIssues('withdrawWithoutVerify', validateSchema('OrderRequest', plain)) // 'tenantType must be 1 [ORDER-TENANT-TYPE]'
 */
export function describeRequestIssues(operation: ValidatedOperation, issues: readonly SchemaIssue[]): string {
  return describeIssues(issues, {
    limit: SHOWN_ISSUES,
    fields: { constants: REQUEST_CONSTANTS[operation] },
    once: true,
  });
}
