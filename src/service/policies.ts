import { showValue } from '../core/config-reader.js';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import type { CryptoFailureReason } from '../crypto/errors.js';
import { providerName } from '../spec/callback-types.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';

/**
 * The service's readings of the points the interface leaves open (the U-* rules of spec/rules.yaml). Each
 * reading is a named policy; the emulator reads them from emulator.yaml under `policies:`
 * (resolvePolicies), the MSW handlers run the defaults, which are the emulator's historical
 * behaviour. Business code asks the policy, never a scattered flag, so any legal reading can be
 * tried against the suites (test/service-policies.test.ts runs them all).
 */

/** A fixed set of allowed withdrawal symbols (U-LIMITS), as opposed to a pattern or anything. */
type SymbolList = readonly string[];

/** The service's policies: one per open point it decides. */
export interface ServicePolicies {
  /** U-STATES: `on` closes only registered cards (config or control API); `off` closes any well-formed card once. */
  cardRegistry: 'on' | 'off';
  /** U-STATES: an energy lease lowers the balance `now`, `later` (after leaseDebitDelayMs), or `never` (leased from a pool). */
  leaseDebit: 'now' | 'later' | 'never';
  /** U-STATES: the wait of `leaseDebit: later`, in milliseconds. */
  leaseDebitDelayMs: number;
  /** U-LIMITS: most integer digits of a withdrawal amount (at least 12: the suites' exact amounts need them). */
  amountIntegerDigits: number;
  /** U-LIMITS: most fraction digits of a withdrawal amount (at least 6: TRON USDT's precision). */
  amountFractionDigits: number;
  /** ORDER-KIND, U-LIMITS: withdrawal symbols allowed: `pattern` ([A-Z0-9]{1,20}), `any` non-empty text, or an explicit list. */
  withdrawalSymbols: 'pattern' | 'any' | SymbolList;
  /** U-CB-FIELDS: callback `amount` as the toolkit's payload model has it (`per-type`), always a JSON `number`, or always a decimal `string`. */
  callbackAmount: 'per-type' | 'number' | 'string';
  /** U-CB-FIELDS: callback field spelling: `interface` (txid, chain) or `provider` (txId, chainName, as the provider's docs write). */
  callbackFieldNames: 'interface' | 'provider';
  /** U-CODES: bad input to the order endpoints and card close is refused with a failure `envelope` (HTTP 200) or an `http` 4xx. */
  refusals: 'envelope' | 'http';
  /** U-STATES: a second order with a used callBackId is refused (`refuse`) or answered with the first order's result (`replay`). */
  duplicateCallBackId: 'refuse' | 'replay';
  /** U-CARD-VALUES: a closeSerialNo is `unique` per merchant (a reuse is refused) or `ignored`. */
  closeSerialNo: 'unique' | 'ignored';
  /**
   * U-CRYPTO: request `data` must be padded, canonical Base64 (`required`), or unpadded and
   * non-canonical text is read as Java's decoder reads it (`optional`; the pattern allows both).
   */
  base64Padding: 'required' | 'optional';
  /**
   * U-CODES: request fields bind strictly by JSON type (`off`), or as Jackson binds them (`on`):
   * a string of digits fills an integer field (userId, tenantType, expiryHours), a number a string field.
   */
  typeCoercion: 'off' | 'on';
}

/** The toolkit's own reading of every open point (what the emulator does when no policy is set). */
export const DEFAULT_POLICIES: Readonly<ServicePolicies> = Object.freeze({
  cardRegistry: 'on',
  leaseDebit: 'now',
  leaseDebitDelayMs: 1_000,
  amountIntegerDigits: 38,
  amountFractionDigits: 18,
  withdrawalSymbols: 'pattern',
  callbackAmount: 'per-type',
  callbackFieldNames: 'interface',
  refusals: 'envelope',
  duplicateCallBackId: 'refuse',
  closeSerialNo: 'unique',
  base64Padding: 'required',
  typeCoercion: 'off',
});

/** A policy name. */
export type PolicyName = keyof ServicePolicies;

/** What a policy accepts, its U-* rule, for validation, docs and the policy matrix test. */
interface PolicyDescription {
  /** The open point (rule id) the policy decides. */
  rule: string;
  /** The values, for enumerated policies; a sample of legal values for the numeric and list ones. */
  values: readonly ServicePolicies[PolicyName][];
  /** One line: what the policy decides. */
  text: string;
}

/** Every policy: its rule, values and meaning. docs/decisions/0040-open-points-emulator-policies.md follows it. */
export const POLICIES: Readonly<Record<PolicyName, PolicyDescription>> = Object.freeze({
  cardRegistry: {
    rule: 'U-STATES',
    values: ['on', 'off'],
    text: 'whether card close needs a card registered beforehand',
  },
  leaseDebit: {
    rule: 'U-STATES',
    values: ['now', 'later', 'never'],
    text: 'whether and when an energy lease lowers the available energy',
  },
  leaseDebitDelayMs: { rule: 'U-STATES', values: [1_000, 0], text: 'the delay of leaseDebit: later' },
  amountIntegerDigits: {
    rule: 'U-LIMITS',
    values: [38, 18, 12],
    text: 'integer digits of a withdrawal amount (12 to 1000)',
  },
  amountFractionDigits: {
    rule: 'U-LIMITS',
    values: [18, 8, 6],
    text: 'fraction digits of a withdrawal amount (6 to 1000)',
  },
  withdrawalSymbols: {
    rule: 'U-LIMITS',
    values: ['pattern', 'any', ['USDT', 'USDC', 'TRX']],
    text: 'which withdrawal symbols are accepted',
  },
  callbackAmount: {
    rule: 'U-CB-FIELDS',
    values: ['per-type', 'number', 'string'],
    text: 'a callback amount as a JSON number or a decimal string',
  },
  callbackFieldNames: {
    rule: 'U-CB-FIELDS',
    values: ['interface', 'provider'],
    text: 'callback field spelling txid/chain or txId/chainName',
  },
  refusals: {
    rule: 'U-CODES',
    values: ['envelope', 'http'],
    text: 'refusal of bad input: HTTP 200 failure envelope or HTTP 4xx',
  },
  duplicateCallBackId: {
    rule: 'U-STATES',
    values: ['refuse', 'replay'],
    text: 'a repeated callBackId: refused or answered with the first result',
  },
  closeSerialNo: {
    rule: 'U-CARD-VALUES',
    values: ['unique', 'ignored'],
    text: 'whether a reused closeSerialNo is refused',
  },
  base64Padding: {
    rule: 'U-CRYPTO',
    values: ['required', 'optional'],
    text: 'whether request data may be unpadded or non-canonical Base64',
  },
  typeCoercion: {
    rule: 'U-CODES',
    values: ['off', 'on'],
    text: 'whether "42" binds to an integer field and 42 to a string field',
  },
});

/** Every policy name, in table order. */
export const POLICY_NAMES = Object.keys(POLICIES) as PolicyName[];

/** The range of the numeric policies. */
const NUMERIC: Partial<Record<PolicyName, { min: number; max: number }>> = {
  leaseDebitDelayMs: { min: 0, max: 86_400_000 },
  amountIntegerDigits: { min: 12, max: 1000 },
  amountFractionDigits: { min: 6, max: 1000 },
};

/**
 * Validates `policies:` of emulator.yaml (a mapping, possibly absent) against {@link POLICIES};
 * returns the full set with defaults filled, or throws `fail(where, message)`'s error for an unknown
 * policy or value.
 *
 * @example resolvePolicies({ cardRegistry: 'off' }, fail).cardRegistry // 'off'
 */
export function resolvePolicies(raw: unknown, fail: (where: string, message: string) => never): ServicePolicies {
  const policies: ServicePolicies = { ...DEFAULT_POLICIES };
  if (raw === undefined || raw === null) return policies;
  if (typeof raw !== 'object' || Array.isArray(raw))
    fail('policies', `expected a mapping of ${POLICY_NAMES.join(', ')}`);
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const where = `policies.${name}`;
    if (!Object.hasOwn(POLICIES, name))
      fail('policies', `unknown policy '${name}' (known: ${POLICY_NAMES.join(', ')})`);
    const policy = name as PolicyName;
    const range = NUMERIC[policy];
    if (range) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max)
        fail(where, `must be a whole number from ${range.min} to ${range.max}, not ${showValue(value)}`);
      (policies as unknown as Record<string, unknown>)[policy] = value;
    } else if (policy === 'withdrawalSymbols') {
      policies.withdrawalSymbols = symbolsPolicy(value, where, fail);
    } else {
      const allowed = POLICIES[policy].values as readonly unknown[];
      if (!allowed.includes(value)) fail(where, `must be one of ${allowed.join(', ')}, not ${showValue(value)}`);
      (policies as unknown as Record<string, unknown>)[policy] = value;
    }
  }
  return policies;
}

function symbolsPolicy(
  value: unknown,
  where: string,
  fail: (where: string, message: string) => never,
): ServicePolicies['withdrawalSymbols'] {
  if (value === 'pattern' || value === 'any') return value;
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'string' && item !== '' && item !== 'ENERGY')
  )
    return Object.freeze([...(value as string[])]);
  return fail(where, `must be pattern, any, or a non-empty list of symbols other than ENERGY, not ${showValue(value)}`);
}

const CURRENCY_SYMBOL = /^[A-Z0-9]{1,20}$/;

/**
 * Does `symbol` make a withdrawal under the policy (ORDER-KIND; which symbols exist is U-LIMITS)?
 *
 * @example acceptsWithdrawalSymbol(DEFAULT_POLICIES, 'usdt') // false
 */
export function acceptsWithdrawalSymbol(policies: ServicePolicies, symbol: string): boolean {
  const rule = policies.withdrawalSymbols;
  if (rule === 'any') return symbol.trim() !== '';
  if (rule === 'pattern') return CURRENCY_SYMBOL.test(symbol);
  return rule.includes(symbol);
}

/** Words for the refusal message of a symbol the policy does not accept. */
export function describeWithdrawalSymbols(policies: ServicePolicies): string {
  const rule = policies.withdrawalSymbols;
  if (rule === 'any') return 'any non-empty text';
  if (rule === 'pattern') return '1-20 upper-case letters or digits';
  return `one of ${rule.join(', ')}`;
}

/**
 * A callback payload as the policies shape it: the amount as a number or a string, the fields
 * spelled as the interface or the provider writes them (U-CB-FIELDS). Key order is kept.
 *
 * @example shapeCallbackPayload({ txid: 'ab', amount: '1.5' }, { ...DEFAULT_POLICIES, callbackFieldNames: 'provider' }) // { txId: 'ab', amount: '1.5' }
 */
export function shapeCallbackPayload<T>(
  payload: Record<string, T>,
  policies: ServicePolicies,
  asNumber: (text: string) => T,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [field, value] of Object.entries(payload)) {
    let shaped = value;
    if (field === 'amount' && policies.callbackAmount !== 'per-type') {
      const text =
        typeof value === 'string'
          ? value
          : value !== null && typeof value === 'object' && 'value' in value
            ? String((value as { value: unknown }).value)
            : undefined;
      if (text !== undefined && /^-?\d+(\.\d+)?$/.test(text))
        shaped = policies.callbackAmount === 'string' ? (text as T) : asNumber(text);
    }
    const name = policies.callbackFieldNames === 'provider' ? providerName(field) : field;
    // A payload that already carries the provider's name keeps it (fields given through the control API).
    if (name !== field && Object.hasOwn(payload, name)) continue;
    out[name] = shaped;
  }
  return out;
}

/**
 * The Base64 forms of request `data` the service reads instead of refusing (U-CRYPTO, policy
 * base64Padding): none, or the forms the interface's pattern allows (`LENIENT_BASE64_REASONS`).
 */
export function acceptedBase64(policies: ServicePolicies): ReadonlySet<CryptoFailureReason> {
  return policies.base64Padding === 'optional' ? LENIENT_BASE64_REASONS : NO_REASONS;
}

const NO_REASONS: ReadonlySet<CryptoFailureReason> = new Set();

/** Request fields by the type the interface gives them, for coercion (ORDER-FIELDS, ENERGY-REQ). */
export interface FieldTypes {
  integers: readonly string[];
  strings: readonly string[];
}

/**
 * A request as the policy binds it (U-CODES, policy typeCoercion): with `on`, a string of digits in
 * an integer field becomes that integer, and a JSON number in a string field becomes its literal
 * text, as Jackson's default binding does; anything else is left for validation to refuse. With
 * `off` the request is returned unchanged.
 *
 * @example coerceFields({ userId: '42' }, { ...DEFAULT_POLICIES, typeCoercion: 'on' }, { integers: ['userId'], strings: [] }) // { userId: 42 }
 */
export function coerceFields(
  plain: Record<string, ExactJson>,
  policies: ServicePolicies,
  types: FieldTypes,
): Record<string, ExactJson> {
  if (policies.typeCoercion !== 'on') return plain;
  const out = { ...plain };
  for (const field of types.integers) {
    const value = out[field];
    if (typeof value === 'string' && /^-?\d{1,30}$/.test(value)) out[field] = new LosslessNumber(value);
  }
  for (const field of types.strings) {
    const value = out[field];
    if (value instanceof LosslessNumber) out[field] = value.value;
  }
  return out;
}
