import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import type { RefineSite, StringFlavour } from './schema-arbitrary.js';
import { textArbitrary } from './schema-arbitrary.js';

/** What the refinements need to know of the target: the merchant's own userId (orders of others are refused). */
interface RefineContext {
  userId?: number;
  strings: StringFlavour;
}

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/** A positive exact decimal: up to 20 integer and 12 fraction digits, no leading zeros, never through a float. */
function exactDecimalText(): Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: 1, max: 9 }), digits(0, 19), fc.option(digits(1, 12), { nil: undefined }))
    .map(([lead, rest, fraction]) => `${lead}${rest}${fraction === undefined ? '' : `.${fraction}`}`);
}

/** A decimal as a JSON number or a decimal string: both are a BigDecimal to a Java binding (ORDER-FIELDS). */
function asNumberOrString(text: Arbitrary<string>): Arbitrary<ExactJson> {
  return fc.tuple(text, fc.boolean()).map(([value, asString]) => (asString ? value : new LosslessNumber(value)));
}

/** A digital-currency symbol as people write them (ORDER-KIND): upper-case letters and digits. */
function currencySymbol(): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom('USDT', 'USDC', 'TRX', 'ETH', 'BTC'), weight: 3 },
    {
      arbitrary: fc
        .tuple(
          fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
          fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), minLength: 1, maxLength: 9 }),
        )
        .map(([a, b]) => a + b),
      weight: 1,
    },
  );
}

/**
 * The interface's value rules as refinements of the schema-derived arbitraries, keyed by the
 * `x-rules` the spec puts on each node: what the schema types loosely (a string, a decimal) the
 * rule narrows to what "valid" means (ENERGY on TRON, tenantType 1, exact decimals, expiryHours
 * when ENERGY). Open points (U-LIMITS) are not narrowed beyond plausible values: a service may
 * still refuse, which property 1 reads as a legal refusal.
 */
export function valueRules(context: RefineContext): (site: RefineSite) => Arbitrary<ExactJson> | undefined {
  return ({ property, rules }) => {
    const has = (rule: string) => rules.includes(rule);
    // ENERGY-REQ: symbol currently always ENERGY, chainName currently always TRON.
    if (has('ENERGY-REQ') && property === 'symbol') return fc.constant('ENERGY');
    if (has('ENERGY-REQ') && property === 'chainName') return fc.constant('TRON');
    // ORDER-ENERGY-AMOUNT: the number of transactions, a whole number (checked before the Decimal rule).
    if (has('ORDER-ENERGY-AMOUNT') && property === 'amount')
      return asNumberOrString(fc.integer({ min: 1, max: 50 }).map(String));
    // ORDER-FIELDS: amount is a BigDecimal, exact digits.
    if (has('ORDER-FIELDS') && property === 'amount') return asNumberOrString(exactDecimalText());
    // ORDER-KIND: a digital-currency symbol makes a withdrawal, exactly ENERGY an energy lease.
    if (has('ORDER-KIND') && property === 'symbol') return fc.oneof(fc.constant('ENERGY'), currencySymbol());
    // ORDER-EXPIRY: an integer number of hours (its bounds are U-LIMITS: plausible values only).
    if (has('ORDER-EXPIRY') && property === 'expiryHours')
      return fc.integer({ min: 1, max: 720 }).map((n) => new LosslessNumber(String(n)));
    // ORDER-FIELDS: userId is the merchant's identifier in the wallet system: its own.
    if (property === 'userId' && context.userId !== undefined)
      return fc.constant(new LosslessNumber(String(context.userId)));
    if (has('ORDER-FIELDS') && property === 'chainName')
      return fc.oneof(
        { arbitrary: fc.constant('TRON'), weight: 4 },
        { arbitrary: fc.constantFrom('ETH', 'BSC'), weight: 1 },
      );
    // ORDER-RES types the result's tenantUserId as an integer: the request's is mostly digits (a service may refuse other text).
    // Ids of every length a Java long holds, long ones as often as short ones (snowflake ids have 18 or 19 digits).
    if (has('ORDER-FIELDS') && property === 'tenantUserId') {
      const canonical = (min: number, max: number) => digits(min, max).map((d) => d.replace(/^0+(?=.)/, ''));
      return fc.oneof(
        { arbitrary: canonical(1, 8), weight: 1 },
        { arbitrary: canonical(9, 15), weight: 1 },
        { arbitrary: canonical(16, 19), weight: 1 },
        { arbitrary: textArbitrary(context.strings, 0, 24), weight: 1 },
      );
    }
    // ORDER-CALLBACK-ID: a non-empty merchant-generated id (the runner makes it unique per send).
    if (has('ORDER-CALLBACK-ID') && property === 'callBackId') return textArbitrary(context.strings, 1, 24);
    return undefined;
  };
}

/**
 * The value rules of a generated VALID callback: the interface's rules (valueRules), and every free
 * string field (txid/txId, chain/chainName, symbol, toAddress, trackingId, callBackId, ...) holds
 * something. The schema sets no minLength, but an event with a blank identity value is not one a
 * service sends: a receiver refusing it is at most U-CB-FIELDS, not a fault the valid cases catch.
 */
export function callbackValueRules(context: RefineContext): (site: RefineSite) => Arbitrary<ExactJson> | undefined {
  const rules = valueRules(context);
  return (site) => {
    const refined = rules(site);
    if (refined) return refined;
    const { node } = site;
    const free =
      node.type === 'string' && !('const' in node) && !Array.isArray(node.enum) && typeof node.pattern !== 'string';
    if (!free) return undefined;
    // A visible first character, then any text: never blank, and it shrinks in a step to one letter
    // (a filter would make shrinking, which re-runs deliveries, walk through rejected blanks).
    const min = typeof node.minLength === 'number' ? Math.max(1, node.minLength) : 1;
    return fc
      .tuple(
        fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
        textArbitrary(context.strings, min - 1, Math.max(min, 40) - 1),
      )
      .map(([first, rest]) => first + rest);
  };
}
