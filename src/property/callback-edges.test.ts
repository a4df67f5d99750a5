import { describe, expect, it } from 'vitest';
import { LosslessNumber, type ExactJson } from '../core/exact-json.js';
import { maxPlaintextBlock } from '../core/profile.js';
import { CALLBACK_TYPE_TABLE } from '../spec/callback-types.js';
import { validateSchema } from '../core/schemas.js';
import { callbackEdgeExamples, deliveredText, padToEdge } from './callback-edges.js';
import { amountsAs } from './callbacks-once.js';
import { BIG_INTEGERS, NON_ASCII } from './edge-values.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const typeOf = (payload: Record<string, ExactJson>) => Number(String(payload.type));
/** As uniqueEvent sends it: identity fields with a suffix of fixed width. */
const asSent = (payload: Record<string, ExactJson>) =>
  Object.fromEntries(
    Object.entries(payload).map(([k, v]) => [
      k,
      ['trackingId', 'txid', 'callBackId'].includes(k) && typeof v === 'string' ? `${v}~abcd00001` : v,
    ]),
  );

describe('callback edge cases', () => {
  const examples = callbackEdgeExamples();

  it('put every callback type at n·block − 1, n·block, n·block + 1 bytes for three multiples, exactly as delivered', () => {
    for (const block of [
      maxPlaintextBlock('pkcs1', 128),
      maxPlaintextBlock('pkcs1', 256),
      maxPlaintextBlock('oaep-sha256', 256),
    ]) {
      for (const entry of CALLBACK_TYPE_TABLE) {
        const lengths = examples
          .flatMap((s) => s.events)
          .filter((e) => e.length && typeOf(e.payload) === entry.type)
          .map((e) => bytes(deliveredText(padToEdge(asSent(e.payload), e.length!, block))));
        expect(lengths, `type ${entry.type}`).toHaveLength(9);
        const multiples = [...new Set(lengths.map((n) => Math.round(n / block)))];
        expect(multiples).toHaveLength(3);
        for (const n of multiples)
          expect(lengths.filter((l) => Math.round(l / block) === n).sort()).toEqual(
            [n * block - 1, n * block, n * block + 1].sort(),
          );
      }
    }
  });

  it('reach every type in the first round (block edges), and a 4-byte character in every type in the second', () => {
    const types = CALLBACK_TYPE_TABLE.length;
    expect(new Set(examples.slice(0, types).map((s) => typeOf(s.events[0]!.payload)))).toEqual(
      new Set(CALLBACK_TYPE_TABLE.map((e) => e.type)),
    );
    for (const sequence of examples.slice(types, 2 * types)) {
      const payload = sequence.events[0]!.payload;
      expect(payload.tenantUserId).toBe(NON_ASCII[2]);
      for (const [field, value] of Object.entries(payload))
        if (typeof value === 'string' && field !== 'requestUUID' && field !== 'amount')
          expect(value, field).toBe(NON_ASCII[2]);
    }
    // 2- and 3-byte characters too, in every type.
    for (const char of NON_ASCII)
      expect(
        new Set(
          examples
            .flatMap((s) => s.events)
            .filter((e) => e.payload.tenantUserId === char)
            .map((e) => typeOf(e.payload)),
        ).size,
      ).toBe(types);
  });

  it('are valid callbacks of their type, amounts past 2^53 as JSON numbers and decimal strings included', () => {
    for (const event of examples.flatMap((s) => s.events)) {
      const entry = CALLBACK_TYPE_TABLE.find((e) => e.type === typeOf(event.payload))!;
      expect(
        validateSchema(entry.schema as Parameters<typeof validateSchema>[0], event.payload),
        JSON.stringify(event.payload),
      ).toEqual([]);
    }
    const amounts = examples
      .flatMap((s) => s.events)
      .map((e) => e.payload.amount)
      .filter((a) => a !== undefined);
    for (const value of BIG_INTEGERS) {
      expect(amounts.some((a) => a instanceof LosslessNumber && a.value === value)).toBe(true);
      expect(amounts.some((a) => typeof a === 'string' && a.startsWith(value))).toBe(true);
    }
    for (const s of examples) expect(s.events.length).toBeLessThanOrEqual(6);
  });

  it('respell amounts one way with their digits kept (U-CB-FIELDS)', () => {
    const sequence = {
      events: [
        { payload: { amount: '9007199254740993.5' }, twin: false },
        { payload: { amount: new LosslessNumber('18446744073709551617') }, twin: false },
        { payload: { amount: '+1' }, twin: false },
      ],
      redeliveries: [],
    };
    const numbers = amountsAs(sequence, 'number').events.map((e) => e.payload.amount);
    expect(numbers[0]).toEqual(new LosslessNumber('9007199254740993.5'));
    expect(numbers[2]).toBe('+1');
    expect(amountsAs(sequence, 'string').events.map((e) => e.payload.amount)).toEqual([
      '9007199254740993.5',
      '18446744073709551617',
      '+1',
    ]);
  });
});
