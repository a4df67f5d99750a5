import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { plaintextBlockSize } from '../core/profile.js';
import {
  asText,
  BIG_INTEGERS,
  BLOCK_EDGES,
  blockEdgeLength,
  NON_ASCII,
  padField,
  padWithWhitespace,
  type BlockEdge,
} from './edge-values.js';
import type { Property } from './property.js';
import {
  asSent,
  CALLBACK_ID_SUFFIX_LENGTH,
  judgeValidAnswer,
  ordersAllowed,
  seal,
  sendData,
  validCases,
  type ServiceCase,
  type ServiceEnv,
} from './service-exchange.js';

/** Every string field of a request (an energy query has symbol and chainName only): non-ASCII goes in each. */
const STRING_FIELDS = ['tenantUserId', 'toAddr', 'callBackId', 'symbol', 'chainName'] as const;

/** The fields a block edge pads (ASCII appended); `whitespace` pads the JSON text itself (the energy query has no free field). */
const PAD_FIELDS = ['callBackId', 'toAddr', 'tenantUserId', 'whitespace'] as const;

/** Characters the examples skip: astral (surrogate pairs in UTF-16, 4 bytes in UTF-8), combining sequences, joiners, CJK. */
const HARD_TEXT = [
  '😀',
  '𝒜',
  '𠜎',
  'e\u0301',
  'a\u0308\u0323',
  '👨\u200D👩\u200D👧',
  '🇨🇳',
  '中文',
  'Ω',
  '\u00A0',
  '\u2028',
  '"\\',
  '\t\n',
  ...NON_ASCII,
];

/** One edge of a valid request. */
type Edge =
  | { edge: 'none' }
  | { edge: 'unicode'; field: (typeof STRING_FIELDS)[number]; at: number; text: string }
  | { edge: 'block-boundary'; field: (typeof PAD_FIELDS)[number]; nth: BlockEdge['nth']; delta: BlockEdge['delta'] }
  | { edge: 'long-text'; field: 'toAddr' | 'callBackId'; length: number }
  | { edge: 'precise-amount'; integer: string; fraction: string; asString: boolean }
  | { edge: 'big-integer'; field: 'amount' | 'expiryHours'; value: string; asString: boolean };

/** A valid request and the edge it is pushed to. */
export interface EdgeCase {
  base: ServiceCase;
  edge: Edge;
}

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/** The edges; `none` first, so a failure that needs no edge shrinks to the plain request. */
const EDGES: Arbitrary<Edge> = fc.oneof(
  { arbitrary: fc.constant({ edge: 'none' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      edge: fc.constant('unicode' as const),
      field: fc.constantFrom(...STRING_FIELDS),
      at: fc.nat(40),
      text: fc.oneof(fc.constantFrom(...HARD_TEXT), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 })),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      edge: fc.constant('block-boundary' as const),
      field: fc.constantFrom(...PAD_FIELDS),
      nth: fc.constantFrom(1 as const, 2 as const, 3 as const),
      delta: fc.constantFrom(0 as const, -1 as const, 1 as const),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      edge: fc.constant('long-text' as const),
      field: fc.constantFrom('toAddr' as const, 'callBackId' as const),
      length: fc.integer({ min: 1, max: 2000 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      edge: fc.constant('precise-amount' as const),
      integer: fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 37)).map(([a, b]) => `${a}${b}`),
      fraction: digits(0, 18),
      asString: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      edge: fc.constant('big-integer' as const),
      field: fc.constantFrom('amount' as const, 'expiryHours' as const),
      value: fc.constantFrom(...BIG_INTEGERS),
      asString: fc.boolean(),
    }),
    weight: 1,
  },
);

/** The request kinds of the interface: what a case is, for the edges' coverage. */
type RequestKind = 'energy query' | 'withdrawal' | 'energy lease';

/** The kind of a case: an energy query, or an order whose symbol ENERGY makes it a lease (ORDER-KIND). */
export function kindOf(testCase: ServiceCase): RequestKind {
  if (testCase.endpoint === 'energy') return 'energy query';
  return testCase.plain.symbol === 'ENERGY' ? 'energy lease' : 'withdrawal';
}

/** The smallest valid request of each kind the target allows (short texts, so that a failure on an example is already minimal). */
function minimalCases(userId: number | undefined, orders: boolean): ServiceCase[] {
  const energy: ServiceCase = { endpoint: 'energy', plain: { symbol: 'ENERGY', chainName: 'TRON' } };
  if (!orders || userId === undefined) return [energy];
  const order = {
    userId: new LosslessNumber(String(userId)),
    tenantUserId: '1',
    tenantType: new LosslessNumber('1'),
    callBackId: 'c',
    chainName: 'TRON',
    toAddr: 'a',
  };
  return [
    energy,
    { endpoint: 'order', plain: { ...order, symbol: 'USDT', amount: new LosslessNumber('1.5') } },
    {
      endpoint: 'order',
      plain: { ...order, symbol: 'ENERGY', amount: new LosslessNumber('1'), expiryHours: new LosslessNumber('1') },
    },
  ];
}

/**
 * The edge cases every run starts with (fast-check examples, before the random ones): each request
 * kind at the nine block edges (n = 1…3; one byte below, at, above), each string field of each kind
 * with a 2-, 3- and 4-byte character, and every integer the service computes with (an amount, a
 * lease's transactions, expiryHours) past 2^53, as a JSON number and as a decimal string.
 */
export function edgeExamples(userId: number | undefined, orders: boolean): EdgeCase[] {
  const bases = minimalCases(userId, orders);
  const out: EdgeCase[] = [];
  for (const [i, base] of bases.entries()) {
    for (const [j, at] of BLOCK_EDGES.entries()) {
      const field = base.endpoint === 'energy' ? 'whitespace' : PAD_FIELDS[(i + j) % 3]!;
      out.push({ base, edge: { edge: 'block-boundary', field, nth: at.nth, delta: at.delta } });
    }
  }
  for (const base of bases) {
    for (const field of STRING_FIELDS.filter((name) => typeof base.plain[name] === 'string')) {
      for (const text of NON_ASCII) out.push({ base, edge: { edge: 'unicode', field, at: 1, text } });
    }
  }
  for (const base of bases.filter((b) => b.endpoint === 'order')) {
    const lease = kindOf(base) === 'energy lease';
    for (const value of BIG_INTEGERS) {
      for (const asString of lease ? [false] : [false, true])
        out.push({ base, edge: { edge: 'big-integer', field: 'amount', value, asString } });
      if (lease) out.push({ base, edge: { edge: 'big-integer', field: 'expiryHours', value, asString: false } });
    }
  }
  return out;
}

/**
 * The request with its edge applied, and its exact text as sent. A block boundary pads a free field
 * with ASCII (or, for the energy query, the JSON text with spaces) so that the whole plaintext (as
 * sent, callBackId suffix included) is n × block size + delta bytes.
 */
export function applyEdge(
  plain: Record<string, ExactJson>,
  edge: Edge,
  blockSize: number,
): { sent: Record<string, ExactJson>; text: string } {
  const done = (sent: Record<string, ExactJson>) => ({ sent, text: stringifyExact(sent) });
  const out = { ...plain };
  switch (edge.edge) {
    case 'none':
      return done(out);
    case 'unicode': {
      // A field the request lacks (an energy query has no toAddr): its first string field takes the text.
      const field =
        typeof out[edge.field] === 'string' ? edge.field : STRING_FIELDS.find((name) => typeof out[name] === 'string');
      if (!field) return done(out);
      const value = out[field] as string;
      // Insert between code points, never inside a surrogate pair.
      const chars = [...value];
      const at = Math.min(edge.at, chars.length);
      out[field] = [...chars.slice(0, at), edge.text, ...chars.slice(at)].join('');
      return done(out);
    }
    case 'block-boundary': {
      const text = stringifyExact(out);
      const bytes = blockEdgeLength(Buffer.byteLength(text, 'utf8'), blockSize, edge);
      if (edge.field === 'whitespace' || typeof out[edge.field] !== 'string')
        return { sent: out, text: padWithWhitespace(text, bytes) ?? text };
      const padded = padField(out, edge.field, bytes, asText);
      return padded ? done(padded) : done(out);
    }
    case 'long-text':
      if (typeof out[edge.field] !== 'string') return done(out);
      // A callBackId keeps its unique suffix (a replay must not be a duplicate).
      out[edge.field] =
        edge.field === 'callBackId'
          ? 'L'.repeat(edge.length) + String(out.callBackId).slice(-CALLBACK_ID_SUFFIX_LENGTH)
          : 'L'.repeat(edge.length);
      return done(out);
    case 'precise-amount': {
      if (out.symbol === 'ENERGY' || !('amount' in out)) return done(out);
      const text = edge.fraction ? `${edge.integer}.${edge.fraction}` : edge.integer;
      out.amount = edge.asString ? text : new LosslessNumber(text);
      return done(out);
    }
    case 'big-integer': {
      // Only where the request has the number (an energy query has none; a withdrawal may ignore expiryHours, ORDER-EXPIRY).
      if (!(edge.field in out)) return done(out);
      out[edge.field] = edge.asString && edge.field === 'amount' ? edge.value : new LosslessNumber(edge.value);
      return done(out);
    }
  }
}

/**
 * Property 5: the edges the examples skip (Unicode in every string field, astral and combining
 * characters included; plaintexts one byte below, at and above the first three block multiples,
 * for every request kind; the shortest and longest texts; amounts at precision limits; integers
 * past 2^53) get what property 1 demands of any valid request. The fixed edges run first on every
 * seed. A service may refuse what U-LIMITS lets it (a long value, a huge amount): a refusal with a
 * proper envelope is a legal answer.
 */
export function edges(env: ServiceEnv): Property<EdgeCase> {
  const target = env.target;
  const blockSize = plaintextBlockSize(target.profile, target.publicKey.modulusBytes);
  return {
    id: 'edges',
    title:
      'Unicode, block boundaries, shortest and longest values, precise amounts and integers past 2^53 are handled like any valid request',
    rules: ['ORDER-FIELDS', 'ORDER-RES', 'ENERGY-RES', 'CRYPTO-ENVELOPE', 'ENV-CODE'],
    arbitrary: fc.record({ base: validCases(target, 'unicode'), edge: EDGES }),
    examples: edgeExamples(target.userId, ordersAllowed(target)),
    async judge({ base, edge }) {
      const { sent, text } = applyEdge(asSent(env, base), edge, blockSize);
      const exchange = await sendData(env, base.endpoint, seal(env, text), text);
      const verdict = judgeValidAnswer(exchange, base, sent);
      if (verdict.ok) return verdict;
      const where =
        edge.edge === 'block-boundary'
          ? `the ${kindOf(base)}'s plaintext of ${Buffer.byteLength(text, 'utf8')} bytes (block size ${blockSize})`
          : `${edge.edge} in the ${kindOf(base)}`;
      return {
        ...verdict,
        message: `${verdict.message} [edge: ${where}]`,
        rules: [...new Set([...verdict.rules, base.endpoint === 'order' ? 'ORDER-FIELDS' : 'ENERGY-RES'])],
      };
    },
  };
}
