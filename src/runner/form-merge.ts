/**
 * Merging one check's verdicts from two runs of a merchant case, one per payload form U-CB-FIELDS
 * leaves open (field spellings, the amount's JSON form), into the verdict the report shows.
 */
import type { Rule } from '../core/rules.js';
import type { CheckResult, Status } from './types.js';
import { failureStatus } from './verdict.js';

/** One axis of the forms U-CB-FIELDS leaves open: how to name it, and a verdict that stands as judged. */
interface FormAxis {
  noun: string;
  /** Both forms, for a failure under each: `field spellings`. */
  both: string;
  /** The form a run used, in words: `txid/chain (the interface's spelling)`. */
  label(second: boolean): string;
  /** A verdict the check already judged under the form's own rule: it stands, it is not "one form only". */
  stands?(result: CheckResult): boolean;
}

/**
 * One check's verdicts under two forms of the payload (U-CB-FIELDS): the same verdict stands; a
 * target that passes with one form only gets a warning naming the other, unless the failing
 * verdict already names the form's own rule; both judged but different: the worse stands.
 */
function mergeForms(
  first: CheckResult,
  second: CheckResult | undefined,
  axis: FormAxis,
  rules: Map<string, Rule>,
  strict: boolean,
): CheckResult {
  if (!second || second.status === first.status) {
    return first.status === 'failed' && second
      ? { ...first, message: `${first.message} (with both ${axis.both})` }
      : first;
  }
  if (first.status === 'skipped' || second.status === 'skipped') {
    // One skipped, the other judged: the judged verdict stands.
    const judged = first.status === 'skipped' ? second : first;
    return {
      ...judged,
      status: judged.status === 'failed' ? failureStatus(judged.rules, rules, strict, 'merchant') : judged.status,
    };
  }
  const rank: Record<Status, number> = { failed: 3, warning: 2, skipped: 1, passed: 0 };
  const bad = rank[second.status] > rank[first.status] ? second : first;
  const good = bad === first ? second : first;
  if (good.status !== 'passed' || axis.stands?.(bad)) return bad;
  const ruleIds = [...new Set([...bad.rules, 'U-CB-FIELDS'])];
  return {
    ...bad,
    rules: ruleIds,
    status: strict ? 'failed' : 'warning',
    message: `passes with one ${axis.noun} only: with ${axis.label(bad === second)}: ${bad.message}`,
  };
}

const SPELLINGS: FormAxis = {
  noun: 'spelling',
  both: 'field spellings',
  label: (provider) =>
    provider ? "txId/chainName (the provider documentation's spelling)" : "txid/chain (the interface's spelling)",
};

/**
 * One check's verdicts under both field spellings (U-CB-FIELDS): the same verdict stands; a target
 * that passes with one spelling only gets a warning naming the other; failing both is a failure.
 */
export function mergeSpellings(
  asInterface: CheckResult,
  asProvider: CheckResult | undefined,
  rules: Map<string, Rule>,
  strict: boolean,
): CheckResult {
  return mergeForms(asInterface, asProvider, SPELLINGS, rules, strict);
}

const AMOUNT_FORMS: FormAxis = {
  noun: 'amount form',
  both: 'amount forms',
  label: (string) => (string ? 'amounts as decimal strings' : 'amounts as JSON numbers'),
  // processed-exact judges the amount under its own rules: digits lost from a JSON number are a
  // U-CB-FIELDS warning, from a decimal string an ORDER-FIELDS failure. That verdict stands.
  stands: (result) => result.rules.includes('ORDER-FIELDS') || result.rules.includes('U-CB-FIELDS'),
};

/**
 * One check's verdicts with amounts as JSON numbers and as decimal strings (U-CB-FIELDS leaves the
 * form open; ORDER-FIELDS makes the amount a BigDecimal in both): a verdict the check gave under the
 * amount's own rule stands; a target that passes with one form only otherwise gets a U-CB-FIELDS
 * warning naming the form that failed; failing both is a failure.
 */
export function mergeAmountForms(
  asNumber: CheckResult,
  asString: CheckResult | undefined,
  rules: Map<string, Rule>,
  strict: boolean,
): CheckResult {
  return mergeForms(asNumber, asString, AMOUNT_FORMS, rules, strict);
}
