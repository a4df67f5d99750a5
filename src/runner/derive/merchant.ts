/**
 * The merchant side's derived cases (spec/dimensions.yaml): near misses of the key, each component
 * of every idempotency key varied alone, plaintexts at the RSA block edges, and what was
 * acknowledged surviving a restart right after the answer.
 */
import { CALLBACK_TYPE_TABLE, providerName, type CallbackTypeEntry } from '../../spec/callback-types.js';
import type { Dimension } from '../../spec/dimensions.js';
import type { BlockEdge, Case, Step } from '../model.js';
import { expect, KEY_VARIANTS, keyOfVariant, type Generators } from './common.js';

/**
 * A value unlike the default of `field` (src/spec/callback-types.ts examples), fresh where the field
 * identifies something, so no two cases (or spellings) of a run share an event.
 */
const OTHER_VALUE: Record<string, unknown> = {
  txid: '{{hex:64}}',
  trackingId: 'wc-{{uuid}}',
  callBackId: 'wc-{{uuid}}',
  chain: 'ETH',
  symbol: 'USDC',
  toAddress: 'TVariedToAddress{{hex:18}}',
  fromAddress: 'TVariedFromAddress{{hex:16}}',
  address: 'TVariedAddress{{hex:20}}',
  amount: '#decimal:7.25',
  txIndex: 9,
};

/** A case id's word for a field or type identifier: `toAddress` → `to-address`. */
const kebab = (name: string): string => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** The key fields of a type's recipe, those it takes when present included (callBackId for CB-ID-OTHER). */
function keyFields(entry: CallbackTypeEntry): string[] {
  return [...entry.key.fields, ...(entry.key.optional ?? [])];
}

/** The fields a type carries that are not in its key: varied alone they leave the event the same. */
function otherFields(entry: CallbackTypeEntry): string[] {
  const key = new Set(keyFields(entry));
  return ['trackingId', ...entry.fields].filter((name) => !key.has(name) && name in OTHER_VALUE);
}

/**
 * The other type whose events carry most of this type's key fields: the same values under another
 * type must still make another event (a withdrawal sharing a deposit's txid, chain, symbol and
 * toAddress; a not-enough-money event sharing a withdrawal request's trackingId and callBackId).
 */
function anotherType(entry: CallbackTypeEntry): CallbackTypeEntry {
  const shared = (other: CallbackTypeEntry) =>
    keyFields(entry).filter((name) => name === 'trackingId' || other.fields.includes(name)).length;
  const others = CALLBACK_TYPE_TABLE.filter((other) => other.type !== entry.type);
  return others.reduce((best, other) => (shared(other) > shared(best) ? other : best));
}

/** Both spellings when the varied field has another one (txid/txId, chain/chainName), else the interface's. */
function spellingsFor(field: string): Case['spellings'] {
  return providerName(field) === field ? 'interface' : 'both';
}

/** The first step of a key case: a fresh event of the type, processed once. */
function firstEvent(entry: CallbackTypeEntry): Step {
  return {
    deliver: { type: entry.type, event: 'first' },
    expect: [{ check: 'processed', count: 1, rules: ['CB-ONCE'] }],
  };
}

/** Each key component varied alone: a new event, processed. */
function componentCases(dimension: Dimension, entry: CallbackTypeEntry): Case[] {
  const rules = [dimension.rule];
  return keyFields(entry).map((field) => ({
    id: `${kebab(entry.id)}-${kebab(field)}-differs`,
    title: `Two ${entry.name} events that differ only in ${field} are both processed`,
    rules,
    needs: ['probe'],
    spellings: spellingsFor(field),
    steps: [
      firstEvent(entry),
      {
        deliver: { copy: 'first', fields: { [field]: OTHER_VALUE[field] } },
        expect: [
          { check: 'answers', errCode: 'zero', rules: ['CB-ERRCODE'] },
          expect(dimension, 'each-component', 'processed', { count: 1 }, rules),
        ],
      },
    ],
  }));
}

/** The callback fields the interface names (its idempotency table); every other field is U-CB-FIELDS's. */
const INTERFACE_FIELDS = new Set(['type', 'trackingId', 'callBackId', 'txid', 'chain', 'symbol', 'toAddress']);

/** Each field outside the key varied alone: the same event, a duplicate. */
function otherFieldCases(dimension: Dimension, entry: CallbackTypeEntry): Case[] {
  // A field the interface never names (amount, fromAddress, txIndex) exists only by the toolkit's
  // reading of U-CB-FIELDS: a key holding it is judged under that reading, never as a MUST broken.
  const rulesOf = (field: string) => (INTERFACE_FIELDS.has(field) ? [dimension.rule] : ['U-CB-FIELDS']);
  return otherFields(entry).map((field) => ({
    id: `${kebab(entry.id)}-only-${kebab(field)}-differs`,
    title: `A ${entry.name} event that repeats the key and differs only in ${field} is a duplicate`,
    rules: [dimension.rule, 'CB-DUP-ACK'],
    needs: ['probe'],
    spellings: 'interface',
    steps: [
      firstEvent(entry),
      {
        deliver: { copy: 'first', fields: { [field]: OTHER_VALUE[field] } },
        expect: [
          expect(dimension, 'other-fields', 'answers', { errCode: 'zero' }, ['CB-DUP-ACK']),
          expect(dimension, 'other-fields', 'processed', { count: 0 }, rulesOf(field)),
        ],
      },
    ],
  }));
}

/**
 * The types whose events carry this type's values in the other-type cases: the one sharing most of
 * its key, and the next type of the same rule in the table (each type of a rule is thus paired
 * with another, the last with the first), so keys of one rule that leave the type out are found
 * without pairing every type with every other.
 */
function otherTypes(entry: CallbackTypeEntry): CallbackTypeEntry[] {
  const most = anotherType(entry);
  const sameRule = CALLBACK_TYPE_TABLE.filter((other) => other.key.rule === entry.key.rule);
  const next = sameRule[(sameRule.indexOf(entry) + 1) % sameRule.length]!;
  return next.type === entry.type || next.type === most.type ? [most] : [most, next];
}

/** The same values under another type: two events, both processed (a key of one type is not another's). */
function otherTypeCase(dimension: Dimension, entry: CallbackTypeEntry, other: CallbackTypeEntry): Case {
  return {
    id: `${kebab(entry.id)}-as-${kebab(other.id)}`,
    title: `A ${other.name} event carrying the values of a ${entry.name} event already processed is processed too`,
    rules: [dimension.rule],
    needs: ['probe'],
    // Both spellings where the key has a field with two (txid/txId, chain/chainName).
    spellings: keyFields(entry).some((field) => spellingsFor(field) === 'both') ? 'both' : 'interface',
    steps: [
      firstEvent(entry),
      {
        deliver: { copy: 'first', type: other.type },
        expect: [
          { check: 'answers', errCode: 'zero', rules: ['CB-ERRCODE'] },
          expect(dimension, 'other-type', 'processed', { count: 1 }, [dimension.rule]),
        ],
      },
    ],
  };
}

/**
 * First values of key fields for the boundary cases: each starts with a known literal character, so
 * the generator can move it across the boundary; `{{id}}` keeps each case's events its own.
 */
const BOUNDARY_VALUE: Record<string, string> = {
  txid: 'h{{id}}',
  chain: 'TRON',
  symbol: 'USDT',
  toAddress: 'T{{id}}',
  trackingId: 'wc-{{id}}',
  callBackId: 'cb-{{id}}',
};

/**
 * Two events whose adjacent key fields differ only in where one ends and the next begins
 * (`h…T` + `RON` against `h…` + `TRON`): a key made by plain concatenation takes them for one.
 */
function boundaryCases(dimension: Dimension, entry: CallbackTypeEntry): Case[] {
  const fields = keyFields(entry).filter((name) => name in BOUNDARY_VALUE);
  return fields.slice(1).map((right, i) => {
    const left = fields[i]!;
    const first = Object.fromEntries(fields.map((name) => [name, BOUNDARY_VALUE[name]!]));
    const moved = { [left]: `${first[left]}${first[right]!.charAt(0)}`, [right]: first[right]!.slice(1) };
    return {
      id: `${kebab(entry.id)}-${kebab(left)}-${kebab(right)}-boundary`,
      title: `Two ${entry.name} events whose ${left} and ${right} join to the same text are both processed`,
      rules: [dimension.rule],
      needs: ['probe'],
      spellings: 'interface',
      steps: [
        {
          deliver: { type: entry.type, event: 'first', fields: first },
          expect: [{ check: 'processed', count: 1, rules: ['CB-ONCE'] }],
        },
        {
          deliver: { copy: 'first', fields: moved },
          expect: [
            { check: 'answers', errCode: 'zero', rules: ['CB-ERRCODE'] },
            expect(dimension, 'component-boundary', 'processed', { count: 1 }, [dimension.rule]),
          ],
        },
      ],
    };
  });
}

/**
 * The same event again while its first delivery may still be in flight (a retry after a slow answer):
 * four identical deliveries at once, one processing. Answering "retry later" to a copy still in
 * flight is a legal reading (U-STATES), as in the hand-written burst case.
 */
function inFlightCase(dimension: Dimension, entry: CallbackTypeEntry): Case {
  return {
    id: `${kebab(entry.id)}-resent-in-flight`,
    title: `A ${entry.name} event delivered four times at once is processed once`,
    rules: [dimension.rule, 'CB-ONCE'],
    needs: ['probe'],
    spellings: 'interface',
    steps: [
      {
        deliver: { type: entry.type, event: 'first', deliveries: 4, concurrent: true },
        expect: [
          { check: 'answers', errCode: 'zero', rules: ['U-STATES'] },
          expect(dimension, 'resend-in-flight', 'processed', { count: 1 }, ['CB-ONCE']),
        ],
      },
    ],
  };
}

/** Every callback type whose key the row's rule defines, each varied per the row's variants. */
function compositeKey(dimension: Dimension): Case[] {
  const entries = CALLBACK_TYPE_TABLE.filter((entry) => entry.key.rule === dimension.rule);
  return entries.flatMap((entry) => [
    ...(dimension.variants.includes('each-component') ? componentCases(dimension, entry) : []),
    ...(dimension.variants.includes('other-fields') ? otherFieldCases(dimension, entry) : []),
    ...(dimension.variants.includes('component-boundary') ? boundaryCases(dimension, entry) : []),
    ...(dimension.variants.includes('other-type')
      ? otherTypes(entry).map((other) => otherTypeCase(dimension, entry, other))
      : []),
    ...(dimension.variants.includes('resend-in-flight') ? [inFlightCase(dimension, entry)] : []),
  ]);
}

/** One case per near miss of the key: 401, and nothing processed. */
function keyNearMisses(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => {
    const { key, needs, what } = keyOfVariant(variant);
    return {
      id: `key-${variant}`,
      title: `${what[0]!.toUpperCase()}${what.slice(1)} gets 401 and nothing is processed`,
      rules: [dimension.rule, ...dimension.also],
      needs,
      steps: [
        {
          deliver: { type: 1, ...key },
          expect: [
            expect(dimension, variant, 'answers', { status: 401 }, [dimension.rule]),
            expect(dimension, variant, 'processed', { count: 0 }, ['CB-KEY-FIRST']),
          ],
        },
      ],
    };
  });
}

/** One case per edge: a valid callback whose plaintext ends there is acknowledged and processed. */
function blockEdges(dimension: Dimension): Case[] {
  const where = (variant: string) =>
    variant === 'split-character'
      ? 'holds a character whose UTF-8 bytes a block boundary splits'
      : `is ${variant === 'whole' ? 'exactly a whole number of' : `one byte ${variant === 'one-under' ? 'under' : 'over'}`} RSA blocks`;
  return dimension.variants.map((variant) => ({
    id: `plaintext-${variant}`,
    title: `A callback whose plaintext ${where(variant)} is acknowledged and processed`,
    rules: [dimension.rule],
    needs: [],
    steps: [
      {
        deliver: { type: 1, plainLength: variant as BlockEdge },
        expect: [
          expect(dimension, variant, 'answers', { errCode: 'zero' }, [dimension.rule]),
          expect(dimension, variant, 'processed', { count: 1 }, [dimension.rule]),
          // The split character must arrive whole: decoded per block, it becomes U+FFFD and still parses.
          ...(variant === 'split-character'
            ? [expect(dimension, variant, 'processed-exact', {}, [dimension.rule])]
            : []),
        ],
      },
    ],
  }));
}

const DURABLE_TYPES: Record<string, number> = { deposit: 1, withdrawal: 3, other: 6 };

/** Acknowledged, restarted at once, still processed once; the redelivery after it is a duplicate. */
function durability(dimension: Dimension): Case[] {
  return dimension.variants.map((variant) => ({
    id: `acknowledged-${variant}-survives-restart`,
    title: `A ${variant} event acknowledged right before a restart is processed, and its redelivery is a duplicate`,
    rules: [dimension.rule, ...dimension.also],
    needs: ['probe', 'restart'],
    steps: [
      {
        deliver: { type: DURABLE_TYPES[variant] ?? 1, event: 'first', restartAfter: true },
        expect: [
          { check: 'answers', errCode: 'zero', rules: ['CB-ERRCODE'] },
          expect(dimension, variant, 'processed', { count: 1 }, [dimension.rule]),
        ],
      },
      {
        deliver: { same: 'first' },
        expect: [
          { check: 'answers', errCode: 'zero', rules: ['CB-DUP-ACK'] },
          expect(dimension, variant, 'processed', { count: 0 }, [dimension.rule]),
        ],
      },
    ],
  }));
}

export const MERCHANT_GENERATORS: Generators = {
  'exact-comparison': {
    variants: KEY_VARIANTS,
    cases: keyNearMisses,
  },
  'composite-key': {
    variants: ['each-component', 'component-boundary', 'other-fields', 'other-type', 'resend-in-flight'],
    cases: compositeKey,
  },
  'block-edge': {
    variants: ['one-under', 'whole', 'one-over', 'split-character'] satisfies BlockEdge[],
    cases: blockEdges,
  },
  durability: { variants: Object.keys(DURABLE_TYPES), cases: durability },
};
