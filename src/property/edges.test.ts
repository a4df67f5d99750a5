import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import { maxPlaintextBlock } from '../core/profile.js';
import { BIG_INTEGERS, blockEdgeLength, NON_ASCII, padField, padWithWhitespace, asText } from './edge-values.js';
import { applyEdge, edgeExamples, kindOf, type EdgeCase } from './edges.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('block edges', () => {
  it('are n·block − 1, n·block and n·block + 1 bytes, counted from the first multiple a plaintext can reach', () => {
    // PKCS#1 v1.5 with a 1024-bit key: k − 11 = 117.
    const block = maxPlaintextBlock('pkcs1', 128);
    expect(block).toBe(117);
    expect(
      [1, 2, 3].flatMap((nth) =>
        [-1, 0, 1].map((delta) => blockEdgeLength(38, block, { nth: nth as 1, delta: delta as 0 })),
      ),
    ).toEqual([116, 117, 118, 233, 234, 235, 350, 351, 352]);
    // A plaintext of 130 bytes cannot be 116: its first edges are at 2 × 117.
    expect(blockEdgeLength(130, block, { nth: 1, delta: -1 })).toBe(233);
    // 116 bytes already: 116 is reachable (no padding), so n = 1 still.
    expect(blockEdgeLength(115, block, { nth: 1, delta: -1 })).toBe(116);
    // OAEP (SHA-1) with 2048 bits: k − 2h − 2 = 214.
    expect(blockEdgeLength(38, maxPlaintextBlock('oaep-sha1', 256), { nth: 3, delta: 1 })).toBe(643);
  });

  it('padField reaches the exact byte length as measured on the wire, non-ASCII and suffixes included', () => {
    const value = { toAddr: '€', callBackId: 'c' };
    const measure = (v: typeof value) =>
      asText({ ...v, callBackId: `${v.callBackId}~abcd00001`, requestUUID: '00000000-0000-0000-0000-000000000000' });
    for (const target of [116, 117, 118, 351]) {
      const padded = padField(value, 'toAddr', target, measure as never)!;
      expect(bytes(measure(padded as typeof value))).toBe(target);
    }
    expect(padField(value, 'toAddr', 10, measure as never)).toBeUndefined();
  });

  it('padWithWhitespace keeps the JSON value and reaches the exact length', () => {
    const text = '{"symbol":"ENERGY","chainName":"TRON"}';
    const padded = padWithWhitespace(text, 117)!;
    expect(bytes(padded)).toBe(117);
    expect(JSON.parse(padded)).toEqual(JSON.parse(text));
    expect(padWithWhitespace(text, 10)).toBeUndefined();
  });
});

describe('the edges property: fixed edge cases first', () => {
  const examples = edgeExamples(70421, true);
  const block = 117;
  const sent = (c: EdgeCase) =>
    applyEdge(
      {
        ...c.base.plain,
        ...(c.base.endpoint === 'order' ? { callBackId: `${String(c.base.plain.callBackId)}~abcd00001` } : {}),
      },
      c.edge,
      block,
    );

  it('puts every request kind at the nine block edges (three multiples, below/at/above), each plaintext exact', () => {
    for (const kind of ['energy query', 'withdrawal', 'energy lease']) {
      const lengths = examples
        .filter((c) => kindOf(c.base) === kind && c.edge.edge === 'block-boundary')
        .map((c) => bytes(sent(c).text));
      expect(lengths, kind).toHaveLength(9);
      const multiples = [...new Set(lengths.map((n) => Math.round(n / block)))];
      expect(multiples, kind).toHaveLength(3);
      for (const n of multiples)
        expect(lengths.filter((l) => Math.round(l / block) === n).sort(), kind).toEqual(
          [n * block - 1, n * block, n * block + 1].sort(),
        );
    }
    // The energy query fits in one block: its edges start at 1 × 117.
    expect(
      examples
        .filter((c) => kindOf(c.base) === 'energy query' && c.edge.edge === 'block-boundary')
        .map((c) => bytes(sent(c).text)),
    ).toContain(116);
  });

  it('puts a 2-, 3- and 4-byte character in every string field of every kind', () => {
    for (const [kind, fields] of [
      ['energy query', ['symbol', 'chainName']],
      ['withdrawal', ['tenantUserId', 'toAddr', 'callBackId', 'symbol', 'chainName']],
      ['energy lease', ['tenantUserId', 'toAddr', 'callBackId', 'symbol', 'chainName']],
    ] as const) {
      for (const field of fields) {
        for (const char of NON_ASCII) {
          const found = examples.find(
            (c) =>
              kindOf(c.base) === kind && c.edge.edge === 'unicode' && c.edge.field === field && c.edge.text === char,
          );
          expect(found, `${kind} ${field} ${char}`).toBeDefined();
          expect(String(sent(found!).sent[field])).toContain(char);
        }
      }
    }
    expect(NON_ASCII.map(bytes)).toEqual([2, 3, 4]);
  });

  it('puts integers past 2^53 in every number an order computes with, exactly, as a number and as a string', () => {
    // Each one rounds through a binary float.
    for (const value of BIG_INTEGERS) expect(BigInt(Number(value)), value).not.toBe(BigInt(value));
    const big = examples
      .filter((c) => c.edge.edge === 'big-integer')
      .map((c) => ({ kind: kindOf(c.base), text: sent(c).text }));
    for (const value of BIG_INTEGERS) {
      expect(big.some((b) => b.kind === 'withdrawal' && b.text.includes(`"amount":${value}`))).toBe(true);
      expect(big.some((b) => b.kind === 'withdrawal' && b.text.includes(`"amount":"${value}"`))).toBe(true);
      expect(big.some((b) => b.kind === 'energy lease' && b.text.includes(`"amount":${value}`))).toBe(true);
      expect(big.some((b) => b.kind === 'energy lease' && b.text.includes(`"expiryHours":${value}`))).toBe(true);
    }
  });

  it('keeps the free texts of every example short (a failure on one is already minimal) and has only energy queries without orders', () => {
    for (const c of examples)
      for (const field of ['tenantUserId', 'toAddr', 'callBackId'])
        if (field in c.base.plain) expect([...String(c.base.plain[field])].length).toBeLessThanOrEqual(4);
    const energyOnly = edgeExamples(undefined, false);
    expect(new Set(energyOnly.map((c) => kindOf(c.base)))).toEqual(new Set(['energy query']));
    expect(energyOnly.length).toBe(9 + 6);
  });

  it('leaves a request without the edged number as it is', () => {
    const energy = { symbol: 'ENERGY', chainName: 'TRON' };
    expect(
      applyEdge(energy, { edge: 'big-integer', field: 'amount', value: BIG_INTEGERS[0], asString: false }, block).text,
    ).toBe(stringifyExact(energy));
    const withdrawal = { amount: new LosslessNumber('1.5'), symbol: 'USDT' };
    expect(
      applyEdge(
        withdrawal,
        { edge: 'big-integer', field: 'expiryHours', value: BIG_INTEGERS[0], asString: false },
        block,
      ).text,
    ).toBe(stringifyExact(withdrawal));
  });
});
