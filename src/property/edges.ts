import fc, { type Arbitrary } from 'fast-check';
import { LosslessNumber, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { plaintextBlockSize } from '../core/profile.js';
import type { Property } from './property.js';
import { asSent, CALLBACK_ID_SUFFIX_LENGTH, judgeValidAnswer, ordersAllowed, seal, sendData, validCases, type ServiceCase, type ServiceEnv } from './service-exchange.js';

/** The free-text fields of an order, where any Unicode is a valid value. */
const TEXT_FIELDS = ['tenantUserId', 'toAddr', 'callBackId'] as const;

/** Characters the examples skip: astral (surrogate pairs in UTF-16, 4 bytes in UTF-8), combining sequences, joiners, CJK. */
export const HARD_TEXT = ['😀', '𝒜', '𠜎', 'e\u0301', 'a\u0308\u0323', '👨\u200D👩\u200D👧', '🇨🇳', '中文', 'Ω', '\u00A0', '\u2028', '"\\', '\t\n'];

/** One edge of a valid order. */
export type Edge =
  | { edge: 'none' }
  | { edge: 'unicode'; field: (typeof TEXT_FIELDS)[number]; at: number; text: string }
  | { edge: 'block-boundary'; field: 'toAddr' | 'callBackId'; blocks: number; delta: -1 | 0 | 1 }
  | { edge: 'long-text'; field: 'toAddr' | 'callBackId'; length: number }
  | { edge: 'precise-amount'; integer: string; fraction: string; asString: boolean };

/** A valid order and the edge it is pushed to. */
export interface EdgeCase {
  base: ServiceCase;
  edge: Edge;
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/** The edges; `none` first, so a failure that needs no edge shrinks to the plain order. */
export const EDGES: Arbitrary<Edge> = fc.oneof(
  { arbitrary: fc.constant({ edge: 'none' as const }), weight: 1 },
  { arbitrary: fc.record({ edge: fc.constant('unicode' as const), field: fc.constantFrom(...TEXT_FIELDS), at: fc.nat(40), text: fc.oneof(fc.constantFrom(...HARD_TEXT), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 })) }), weight: 3 },
  { arbitrary: fc.record({ edge: fc.constant('block-boundary' as const), field: fc.constantFrom('toAddr' as const, 'callBackId' as const), blocks: fc.integer({ min: 1, max: 4 }), delta: fc.constantFrom(0 as const, -1 as const, 1 as const) }), weight: 3 },
  { arbitrary: fc.record({ edge: fc.constant('long-text' as const), field: fc.constantFrom('toAddr' as const, 'callBackId' as const), length: fc.integer({ min: 1, max: 2000 }) }), weight: 2 },
  { arbitrary: fc.record({ edge: fc.constant('precise-amount' as const), integer: fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 37)).map(([a, b]) => `${a}${b}`), fraction: digits(0, 18), asString: fc.boolean() }), weight: 2 },
);

/**
 * The order with its edge applied. A block boundary pads a field with ASCII so that the whole
 * plaintext (as sent, callBackId suffix included) is `blocks` × block size + delta bytes.
 */
export function applyEdge(plain: Record<string, ExactJson>, edge: Edge, blockSize: number): Record<string, ExactJson> {
  const out = { ...plain };
  switch (edge.edge) {
    case 'none':
      return out;
    case 'unicode': {
      const value = String(out[edge.field] ?? '');
      const at = Math.min(edge.at, value.length);
      // Insert between code points, never inside a surrogate pair.
      const chars = [...value];
      out[edge.field] = [...chars.slice(0, at), edge.text, ...chars.slice(at)].join('');
      return out;
    }
    case 'block-boundary': {
      const length = Buffer.byteLength(stringifyExact(out), 'utf8');
      let blocks = edge.blocks;
      while (blocks * blockSize + edge.delta < length) blocks++;
      out[edge.field] = String(out[edge.field] ?? '') + 'x'.repeat(blocks * blockSize + edge.delta - length);
      return out;
    }
    case 'long-text':
      // A callBackId keeps its unique suffix (a replay must not be a duplicate).
      out[edge.field] = edge.field === 'callBackId' ? 'L'.repeat(edge.length) + String(out.callBackId).slice(-CALLBACK_ID_SUFFIX_LENGTH) : 'L'.repeat(edge.length);
      return out;
    case 'precise-amount': {
      if (out.symbol === 'ENERGY') return out;
      const text = edge.fraction ? `${edge.integer}.${edge.fraction}` : edge.integer;
      out.amount = edge.asString ? text : new LosslessNumber(text);
      return out;
    }
  }
}

/**
 * Property 5: the edges the examples skip (Unicode in every free-text field, astral and
 * combining characters included; plaintexts at and around every block boundary; the shortest and
 * longest texts; amounts at precision limits) get what property 1 demands of any valid order.
 */
export function edges(env: ServiceEnv): Property<EdgeCase> {
  const target = env.target;
  const blockSize = plaintextBlockSize(target.profile, target.publicKey.modulusBytes);
  return {
    id: 'edges',
    title: 'Unicode, block boundaries, shortest and longest values and precise amounts are handled like any valid order',
    rules: ['ORDER-FIELDS', 'ORDER-RES', 'CRYPTO-ENVELOPE', 'ENV-CODE'],
    ...(ordersAllowed(target) ? {} : { skip: 'needs --user-id and --allow-orders (order cases move money on a real service)' }),
    arbitrary: fc.record({ base: validCases(target, 'unicode').filter((c) => c.endpoint === 'order'), edge: EDGES }),
    async judge({ base, edge }) {
      const sent = applyEdge(asSent(env, base), edge, blockSize);
      const text = stringifyExact(sent);
      const exchange = await sendData(env, 'order', seal(env, text), text);
      const verdict = judgeValidAnswer(exchange, base, sent);
      if (verdict.ok) return verdict;
      const where = edge.edge === 'block-boundary' ? `a plaintext of ${Buffer.byteLength(text, 'utf8')} bytes (block size ${blockSize})` : edge.edge;
      return { ...verdict, message: `${verdict.message} [edge: ${where}]`, rules: [...new Set([...verdict.rules, 'ORDER-FIELDS'])] };
    },
  };
}
