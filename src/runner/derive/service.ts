/**
 * The service side's derived cases (spec/dimensions.yaml): near misses of the merchant's key on the
 * order endpoints, value classes of the callBackId the result must echo, energy balances around the
 * edges of the floor, and plaintexts at the RSA block edges judged by one verdict. The rows that vary
 * one part of a valid request (the form's media type, a field's value) are in service-fields.ts.
 */
import type { Dimension } from '../../spec/dimensions.js';
import type { LengthEdge, Case, Step } from '../model.js';
import { expect, KEY_VARIANTS, keyOfVariant, type Generators } from './common.js';
import {
  ENERGY_QUERY,
  lease,
  MEDIA_TYPE_VARIANTS,
  mediaTypeNearMisses,
  VALUE_CLASS_VARIANTS,
  valueClasses,
  withdrawal,
} from './service-fields.js';

/**
 * Near misses of the merchant's key, on the energy query (ERR-401: 401 with its body) and on order
 * submission (AUTH-KEY: refused; the status and body there are open, U-CODES, as
 * suites/service/errors.yaml judges a missing key). The order is a valid one, so a service that
 * forgives the near miss accepts it: it needs --allow-orders.
 */
function keyNearMisses(dimension: Dimension): Case[] {
  return dimension.variants.flatMap((variant): Case[] => {
    const { key, needs, what } = keyOfVariant(variant);
    return [
      {
        id: `energy-key-${variant}`,
        title: `An energy query with ${what} gets 401 UNAUTHORIZED`,
        rules: [dimension.rule, ...dimension.also],
        needs,
        steps: [
          {
            request: { endpoint: 'energy', ...key, plain: ENERGY_QUERY },
            expect: [
              expect(dimension, variant, 'status', { equals: 401 }, [dimension.rule]),
              expect(dimension, variant, 'error-body', { schema: 'UnauthorizedError' }, [dimension.rule]),
            ],
          },
        ],
      },
      {
        id: `order-key-${variant}`,
        title: `An order with ${what} is refused (401 as the energy query answers; the order endpoint's error bodies are open, U-CODES)`,
        rules: ['AUTH-KEY', 'U-CODES'],
        needs: ['userId', 'orders', ...needs],
        steps: [
          {
            request: { endpoint: 'order', ...key, plain: withdrawal('{{id}}') },
            expect: [
              expect(dimension, variant, 'refused', {}, ['AUTH-KEY']),
              { check: 'status', equals: 401, rules: ['U-CODES'] },
              { check: 'error-body', schema: 'UnauthorizedError', rules: ['U-CODES'] },
            ],
          },
        ],
      },
    ];
  });
}

/** Near misses of one right value: the key (ERR-401) or the form's media type (ENERGY-CT), by the row's rule. */
function nearMisses(dimension: Dimension): Case[] {
  return dimension.rule === 'ENERGY-CT' ? mediaTypeNearMisses(dimension) : keyNearMisses(dimension);
}

/**
 * The callBackId of each value class, fresh per case (ORDER-CALLBACK-ID: the merchant keeps it
 * unique) and still of its class: digits only come from `{{digits:N}}`.
 */
const CALLBACK_IDS: Record<string, { value: string; what: string }> = {
  'leading-zeros': { value: '000{{digits:12}}', what: 'digits only, with leading zeros' },
  // 17 digits ending in 1: above 2^53 and odd, so no binary float holds it.
  'beyond-2-53': { value: '9{{digits:15}}1', what: 'digits only, beyond 2^53' },
  'very-long': { value: '{{id}}-{{long:1000}}', what: 'very long (1016 characters)' },
  'non-ascii': { value: '{{id}}-订单-ü-😀', what: 'non-ASCII (CJK, Latin-1, an astral emoji)' },
  // A quote, a backslash, a slash, a text that reads as a \u escape, and U+2028 (a line break to JavaScript).
  'json-special': { value: '{{id}}-"q"\\b/\\u0041\u2028', what: 'JSON-special characters' },
  'form-special': { value: '{{id}}-a+b%20c&d=e f', what: 'characters form and URL encoding change' },
};

/**
 * Each value class of the callBackId comes back in the result's `id` exactly, as a string
 * (ORDER-RES). A service may refuse a value it caps or does not take (U-LIMITS: a warning); an
 * order it accepts must echo the id unchanged.
 */
function echoedIds(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const callBackId = CALLBACK_IDS[variant];
    if (!callBackId) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no callBackId for the variant ${variant}`);
    return {
      id: `callbackid-${variant}`,
      title: `An order whose callBackId is ${callBackId.what} gets it back in id exactly, as a string (a service may refuse the value, U-LIMITS)`,
      rules: [dimension.rule, ...dimension.also],
      needs: ['userId', 'orders'],
      steps: [
        {
          request: { endpoint: 'order', plain: withdrawal(callBackId.value) },
          expect: [
            { check: 'envelope', outcome: 'success', rules: ['U-LIMITS'] },
            expect(
              dimension,
              variant,
              'result',
              { schema: 'OrderResult', echo: { id: 'callBackId' }, ifAccepted: true },
              [dimension.rule],
            ),
          ],
        },
      ],
    };
  });
}

const TWO_53 = 2n ** 53n;

/**
 * The balance and cost of each edge of the floor. The fractions (x.46, x.5, x.99998) tell a floor
 * from a rounding; 7.5 tells it from rounding half to even too; beyond 2^53 a float division is off.
 */
const ENERGY_EDGES: Record<string, { balance: bigint; cost: bigint }> = {
  'fraction-below-half': { balance: 7n * 65_000n + 30_000n, cost: 65_000n },
  'fraction-half': { balance: 7n * 64_000n + 32_000n, cost: 64_000n },
  'fraction-above-half': { balance: 7n * 65_000n + 64_999n, cost: 65_000n },
  'exact-multiple': { balance: 12n * 65_000n, cost: 65_000n },
  'zero-balance': { balance: 0n, cost: 65_000n },
  // floor((2c − 1) / c) = 1, where doubles read 2^54 / 2^53 = 2.
  'balance-beyond-2-53': { balance: 2n * (TWO_53 + 1n) - 1n, cost: TWO_53 + 1n },
  // floor((3q + 2) / 3) = q = 2^53 + 1, where a double division rounds to 2^53 + 2.
  'quotient-beyond-2-53': { balance: 3n * (TWO_53 + 1n) + 2n, cost: 3n },
};

/** A control step setting the energy (exact digits), then a query judged against it. */
function setAndRead(balance: bigint, cost: bigint, rules: string[], dimension: Dimension, variant: string): Step[] {
  return [
    { control: { energy: { balance: `#decimal:${balance}`, costPerTx: `#decimal:${cost}` } } },
    {
      request: { endpoint: 'energy', plain: ENERGY_QUERY },
      expect: [
        expect(dimension, variant, 'energy-floor', { balance: String(balance), costPerTx: String(cost) }, rules),
      ],
    },
  ];
}

/**
 * Each edge of floor(balance / costPerTx), read after a change of state: first another state (the
 * same balance at twice the cost, or for a zero balance a positive one), then the edge. A reading
 * that lags the state, or that recomputes on a balance change only, fails the second read.
 */
function energyEdges(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    if (variant === 'after-lease') return afterLease(dimension, variant);
    const edge = ENERGY_EDGES[variant];
    if (!edge) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no energy values for the variant ${variant}`);
    const before =
      edge.balance === 0n
        ? { balance: 5n * edge.cost, cost: edge.cost }
        : { balance: edge.balance, cost: 2n * edge.cost };
    return {
      id: `energy-${variant}`,
      title: `energyMaxCount is floor(balance / costPerTx) at ${edge.balance} / ${edge.cost}, read right after the state changed`,
      rules: [dimension.rule],
      needs: ['control'],
      steps: [
        ...setAndRead(before.balance, before.cost, [dimension.rule], dimension, variant),
        ...setAndRead(edge.balance, edge.cost, [dimension.rule], dimension, variant),
      ],
    };
  });
}

/** The lease of `after-lease`: 7 transactions at 3 each, from a balance of exactly 10 transactions. */
const LEASE = { balance: 30n, cost: 3n, transactions: 7n };

/**
 * A balance read after an energy lease (ORDER-ENERGY-AMOUNT: its amount is a number of
 * transactions). Whether and when the lease lowers the balance is open (U-STATES), so either
 * balance is right: untouched, or lower by transactions × costPerTx. The cost is small and the
 * balance an exact multiple so that any other debit (the amount alone, the amount divided by the
 * cost, one transaction's cost) moves the floor to a third value.
 */
function afterLease(dimension: Dimension, variant: string): Case {
  const { balance, cost, transactions } = LEASE;
  const debited = balance - transactions * cost;
  const order = { ...lease('{{id}}'), amount: Number(transactions) };
  return {
    id: `energy-${variant}`,
    title: `energyMaxCount after a lease of ${transactions} transactions at ${cost} each is floor(${balance} / ${cost}) or, debited, floor(${debited} / ${cost})`,
    rules: [dimension.rule, 'ORDER-ENERGY-AMOUNT', 'U-STATES'],
    needs: ['control', 'userId', 'orders'],
    steps: [
      ...setAndRead(balance, cost, [dimension.rule], dimension, variant),
      {
        request: { endpoint: 'order', plain: order },
        expect: [{ check: 'envelope', outcome: 'success', rules: ['ORDER-KIND'] }],
      },
      {
        request: { endpoint: 'energy', plain: ENERGY_QUERY },
        expect: [
          expect(
            dimension,
            variant,
            'energy-floor',
            { balance: [String(balance), String(debited)], costPerTx: String(cost) },
            [dimension.rule, 'ORDER-ENERGY-AMOUNT'],
          ),
          {
            check: 'energy-floor',
            balance: String(debited),
            costPerTx: String(cost),
            rules: ['U-STATES'],
            title: 'An energy lease lowers energyMaxCount at once',
          },
        ],
      },
    ],
  };
}

/**
 * The energy query's plaintext at the row's edges of one and of two blocks, lengthened with
 * whitespace JSON ignores: one content, so one verdict (CRYPTO-SAME, the differential oracle).
 */
function requestEdges(dimension: Dimension): Case[] {
  const edges = dimension.variants as LengthEdge[];
  return [1, 2].map((blocks) => ({
    id: `energy-plaintext-at-${blocks}-block${blocks > 1 ? 's' : ''}`,
    title: `One energy query at ${edges.join(', ')} of ${blocks} RSA block${blocks > 1 ? 's' : ''} gets one verdict`,
    rules: [dimension.rule, ...dimension.also],
    needs: [],
    steps: [
      {
        request: { endpoint: 'energy', plain: ENERGY_QUERY, plainLength: edges, plainBlocks: blocks },
        expect: [expect(dimension, 'whole', 'same-verdict', {}, [dimension.rule])],
      },
    ],
  }));
}

/**
 * An order whose answer's plaintext ends at each edge of two or more blocks (steered through the
 * echoed callBackId, measured on a first order of the case) opens whole and echoes the id.
 */
function answerEdges(dimension: Dimension): Case[] {
  return (dimension.variants as LengthEdge[]).map((edge) => ({
    id: `order-answer-${edge}`,
    title: `An order answer whose plaintext is ${edge === 'whole' ? 'exactly a whole number of' : `one byte ${edge === 'one-under' ? 'under' : 'over'}`} RSA blocks opens whole (a service may cap the callBackId's length, U-LIMITS)`,
    rules: [dimension.rule, ...dimension.also],
    needs: ['userId', 'orders'],
    steps: [
      {
        title: 'a first order: the length of its answer',
        request: { endpoint: 'order', plain: withdrawal('{{id}}') },
        expect: [{ check: 'result', schema: 'OrderResult', echo: { id: 'callBackId' }, rules: ['ORDER-RES'] }],
      },
      {
        request: { endpoint: 'order', plain: withdrawal('{{id}}'), answerLength: edge },
        expect: [
          // First: an answer that does not open is this case's finding (ENV-DATA), not the envelope's.
          expect(dimension, edge, 'answer-edge', { edge }, [dimension.rule, 'CRYPTO-SAME']),
          { check: 'envelope', outcome: 'success', rules: ['U-LIMITS'] },
          expect(dimension, edge, 'result', { schema: 'OrderResult', echo: { id: 'callBackId' }, ifAccepted: true }, [
            'ORDER-RES',
          ]),
        ],
      },
    ],
  }));
}

/** Block edges: of the requests (CRYPTO-SAME) or of the answers (ENV-DATA), by the row's rule. */
function blockEdges(dimension: Dimension): Case[] {
  return dimension.rule === 'ENV-DATA' ? answerEdges(dimension) : requestEdges(dimension);
}

export const SERVICE_GENERATORS: Generators = {
  'exact-comparison': {
    variants: [...KEY_VARIANTS, ...MEDIA_TYPE_VARIANTS],
    cases: nearMisses,
  },
  'echoed-identifier': { variants: Object.keys(CALLBACK_IDS), cases: echoedIds },
  'value-class': { variants: VALUE_CLASS_VARIANTS, cases: valueClasses },
  'computed-value': { variants: [...Object.keys(ENERGY_EDGES), 'after-lease'], cases: energyEdges },
  'block-edge': { variants: ['one-under', 'whole', 'one-over'] satisfies LengthEdge[], cases: blockEdges },
};
