/**
 * The service side's derived cases (spec/dimensions.yaml): near misses of the merchant's key on the
 * order endpoints, value classes of the callBackId the result must echo, energy balances around the
 * edges of the floor, and plaintexts at the RSA block edges judged by one verdict.
 */
import type { Dimension } from '../../spec/dimensions.js';
import type { LengthEdge, Case, Step } from '../model.js';
import { expect, KEY_VARIANTS, keyOfVariant, type Generators } from './common.js';

const ENERGY_QUERY = { symbol: 'ENERGY', chainName: 'TRON' };

/** A valid withdrawal order (suites/service/orders.yaml) with the given callBackId. */
function withdrawal(callBackId: string): Record<string, unknown> {
  return {
    userId: '{{userId}}',
    tenantUserId: '20931',
    tenantType: 1,
    callBackId,
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: '#decimal:123456789012.123456',
  };
}

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

/**
 * Near misses of the form's media type, each with the whole valid form: a body a service reads
 * when it checks the type by prefix (`startsWith`), by substring (`includes`), or takes every form
 * its framework parses (Flask's `request.form`, Spring's `@RequestParam` read multipart too).
 */
const MEDIA_TYPES: Record<string, { contentType?: string; multipart?: true; what: string }> = {
  'multipart-form': { multipart: true, what: 'the form sent as multipart/form-data' },
  'prefix-extended': {
    contentType: 'application/x-www-form-urlencoded-v2',
    what: 'Content-Type application/x-www-form-urlencoded-v2 (the form type as a prefix)',
  },
  'other-top-level-type': {
    contentType: 'text/x-www-form-urlencoded',
    what: 'Content-Type text/x-www-form-urlencoded (the form subtype under text/)',
  },
  'in-parameter': {
    contentType: 'text/plain; format=application/x-www-form-urlencoded',
    what: 'Content-Type text/plain naming the form type in a parameter',
  },
};

/**
 * Near misses of the form's media type on the energy query (ENERGY-CT) and on order submission
 * (ORDER-CT): refused, as under any other type. The order is a valid one, so a service that takes
 * the near miss places it: it needs --allow-orders.
 */
function mediaTypeNearMisses(dimension: Dimension): Case[] {
  return dimension.variants.flatMap((variant): Case[] => {
    const near = MEDIA_TYPES[variant];
    if (!near) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no media type for the variant ${variant}`);
    const sent = {
      ...(near.contentType ? { contentType: near.contentType } : {}),
      ...(near.multipart ? { form: 'multipart' as const } : {}),
    };
    return [
      {
        id: `energy-media-type-${variant}`,
        title: `An energy query with ${near.what} is refused`,
        rules: ['ENERGY-CT'],
        needs: [],
        steps: [
          {
            request: { endpoint: 'energy', ...sent, plain: ENERGY_QUERY },
            expect: [expect(dimension, variant, 'refused', {}, ['ENERGY-CT'])],
          },
        ],
      },
      {
        id: `order-media-type-${variant}`,
        title: `An order with ${near.what} is refused`,
        rules: ['ORDER-CT'],
        needs: ['userId', 'orders'],
        steps: [
          {
            request: { endpoint: 'order', ...sent, plain: withdrawal('{{id}}') },
            expect: [expect(dimension, variant, 'refused', {}, ['ORDER-CT'])],
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

/** A valid energy lease (ORDER-KIND: exactly ENERGY) of two transactions for a day, with the given callBackId. */
function lease(callBackId: string): Record<string, unknown> {
  return { ...withdrawal(callBackId), symbol: 'ENERGY', amount: 2, expiryHours: 24 };
}

/**
 * One value of one order field for each value class: a type the field is not (a boolean, null, an
 * object or a list), past its one allowed value (tenantType), or past the bounds a service may set
 * (zero, negative: U-LIMITS in the table's readings). Each replaces the field in a valid order, and
 * names the rules its acceptance breaks (true for tenantType is neither an integer nor 1).
 */
const FIELD_VALUES: Record<
  string,
  { order: 'withdrawal' | 'lease'; field: string; value: unknown; what: string; rules: string[] }
> = {
  'tenant-type-negative': {
    order: 'withdrawal',
    field: 'tenantType',
    value: -1,
    what: 'tenantType -1',
    rules: ['ORDER-TENANT-TYPE'],
  },
  // 2^32 + 1: a 32-bit integer keeps its low bits, 1.
  'tenant-type-wraps-to-one': {
    order: 'withdrawal',
    field: 'tenantType',
    value: 4_294_967_297,
    what: 'tenantType 4294967297 (2^32 + 1, which a 32-bit integer wraps to 1)',
    rules: ['ORDER-TENANT-TYPE'],
  },
  'tenant-type-boolean': {
    order: 'withdrawal',
    field: 'tenantType',
    value: true,
    what: 'tenantType true',
    rules: ['ORDER-FIELDS', 'ORDER-TENANT-TYPE'],
  },
  'tenant-type-null': {
    order: 'withdrawal',
    field: 'tenantType',
    value: null,
    what: 'tenantType null',
    rules: ['ORDER-FIELDS', 'ORDER-TENANT-TYPE'],
  },
  'user-id-boolean': {
    order: 'withdrawal',
    field: 'userId',
    value: true,
    what: 'userId true',
    rules: ['ORDER-FIELDS'],
  },
  'user-id-null': { order: 'withdrawal', field: 'userId', value: null, what: 'userId null', rules: ['ORDER-FIELDS'] },
  'string-field-object': {
    order: 'withdrawal',
    field: 'tenantUserId',
    value: { id: '20931' },
    what: 'tenantUserId an object',
    rules: ['ORDER-FIELDS'],
  },
  'string-field-array': {
    order: 'withdrawal',
    field: 'toAddr',
    value: ['TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE'],
    what: 'toAddr a list of one address',
    rules: ['ORDER-FIELDS'],
  },
  'string-field-null': {
    order: 'withdrawal',
    field: 'chainName',
    value: null,
    what: 'chainName null',
    rules: ['ORDER-FIELDS'],
  },
  'amount-boolean': { order: 'withdrawal', field: 'amount', value: true, what: 'amount true', rules: ['ORDER-FIELDS'] },
  'amount-null': { order: 'withdrawal', field: 'amount', value: null, what: 'amount null', rules: ['ORDER-FIELDS'] },
  'amount-zero': {
    order: 'withdrawal',
    field: 'amount',
    value: 0,
    what: 'a withdrawal amount of 0',
    rules: ['ORDER-FIELDS'],
  },
  'amount-negative': {
    order: 'withdrawal',
    field: 'amount',
    value: -1.5,
    what: 'a withdrawal amount of -1.5',
    rules: ['ORDER-FIELDS'],
  },
  'lease-amount-zero': {
    order: 'lease',
    field: 'amount',
    value: 0,
    what: 'a lease of 0 transactions',
    rules: ['ORDER-ENERGY-AMOUNT'],
  },
  'lease-amount-negative': {
    order: 'lease',
    field: 'amount',
    value: -2,
    what: 'a lease of -2 transactions',
    rules: ['ORDER-ENERGY-AMOUNT'],
  },
  'expiry-boolean': {
    order: 'lease',
    field: 'expiryHours',
    value: true,
    what: 'a lease whose expiryHours is true',
    rules: ['ORDER-EXPIRY'],
  },
  'expiry-fraction': {
    order: 'lease',
    field: 'expiryHours',
    value: 1.5,
    what: 'a lease whose expiryHours is 1.5',
    rules: ['ORDER-EXPIRY'],
  },
  'expiry-zero': {
    order: 'lease',
    field: 'expiryHours',
    value: 0,
    what: 'a lease whose expiryHours is 0',
    rules: ['ORDER-EXPIRY'],
  },
  'expiry-negative': {
    order: 'lease',
    field: 'expiryHours',
    value: -24,
    what: 'a lease whose expiryHours is -24',
    rules: ['ORDER-EXPIRY'],
  },
};

/** One value of one field of the energy query for each value class it can get wrong: null, another type. */
const ENERGY_FIELD_VALUES: Record<string, { field: 'symbol' | 'chainName'; value: unknown; what: string }> = {
  'symbol-null': { field: 'symbol', value: null, what: 'symbol null' },
  'symbol-boolean': { field: 'symbol', value: true, what: 'symbol true' },
  'symbol-object': { field: 'symbol', value: { name: 'ENERGY' }, what: 'symbol an object' },
  'chain-name-null': { field: 'chainName', value: null, what: 'chainName null' },
  'chain-name-array': { field: 'chainName', value: ['TRON'], what: 'chainName a list of TRON' },
};

/**
 * Each value class of a field of the energy query in an otherwise valid query: refused
 * (ENERGY-REQ: both fields are required strings; only another symbol may be taken).
 */
function energyFieldValues(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const entry = ENERGY_FIELD_VALUES[variant];
    if (!entry) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no field value for the variant ${variant}`);
    return {
      id: `energy-${variant}`,
      title: `An energy query with ${entry.what} is refused`,
      rules: [dimension.rule],
      needs: [],
      steps: [
        {
          request: { endpoint: 'energy', plain: { ...ENERGY_QUERY, [entry.field]: entry.value } },
          expect: [expect(dimension, variant, 'refused', {}, [dimension.rule])],
        },
      ],
    };
  });
}

/** Value classes of a request's fields: the energy query's (ENERGY-REQ) or the order's (ORDER-FIELDS), by the row's rule. */
function valueClasses(dimension: Dimension): Case[] {
  return dimension.rule === 'ENERGY-REQ' ? energyFieldValues(dimension) : fieldValues(dimension);
}

/** The energy a lease case sets first: enough for its order, so a service that takes the value cannot refuse for want of energy. */
const LEASE_ENERGY = { control: { energy: { balance: 1_000_000, costPerTx: 65_000 } } };

/**
 * Each value class of each order field in an otherwise valid order: refused (ORDER-FIELDS and the
 * rule of the field's one value). A variant the table lists under `readings` (a bound the interface
 * leaves open, a value a JSON binder truncates) warns when accepted.
 */
function fieldValues(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const entry = FIELD_VALUES[variant];
    if (!entry) throw new Error(`spec/dimensions.yaml: ${dimension.id}: no field value for the variant ${variant}`);
    const base = entry.order === 'lease' ? lease('{{id}}') : withdrawal('{{id}}');
    const reading = dimension.readings[variant];
    const order: Step = {
      request: { endpoint: 'order', plain: { ...base, [entry.field]: entry.value } },
      expect: [expect(dimension, variant, 'refused', {}, entry.rules)],
    };
    return {
      id: `order-${variant}`,
      title: `An order with ${entry.what} is refused${reading ? ` (a service may take it, ${reading})` : ''}`,
      rules: [...entry.rules, ...(reading ? [reading] : [])],
      needs: entry.order === 'lease' ? ['userId', 'orders', 'control'] : ['userId', 'orders'],
      steps: entry.order === 'lease' ? [LEASE_ENERGY, order] : [order],
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
  const lease = { ...withdrawal('{{id}}'), symbol: 'ENERGY', amount: Number(transactions), expiryHours: 24 };
  return {
    id: `energy-${variant}`,
    title: `energyMaxCount after a lease of ${transactions} transactions at ${cost} each is floor(${balance} / ${cost}) or, debited, floor(${debited} / ${cost})`,
    rules: [dimension.rule, 'ORDER-ENERGY-AMOUNT', 'U-STATES'],
    needs: ['control', 'userId', 'orders'],
    steps: [
      ...setAndRead(balance, cost, [dimension.rule], dimension, variant),
      {
        request: { endpoint: 'order', plain: lease },
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
    variants: [...KEY_VARIANTS, ...Object.keys(MEDIA_TYPES)],
    cases: nearMisses,
  },
  'echoed-identifier': { variants: Object.keys(CALLBACK_IDS), cases: echoedIds },
  'value-class': {
    variants: [...Object.keys(FIELD_VALUES), ...Object.keys(ENERGY_FIELD_VALUES)],
    cases: valueClasses,
  },
  'computed-value': { variants: [...Object.keys(ENERGY_EDGES), 'after-lease'], cases: energyEdges },
  'block-edge': { variants: ['one-under', 'whole', 'one-over'] satisfies LengthEdge[], cases: blockEdges },
};
