import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../core/exact-json.js';
import type { Rule } from '../core/rules.js';
import { folderExampleStore } from './example-store.js';
import type { Property } from './property.js';
import { sampleReport } from '../../test/support/sample-report.js';
import { checkProperties, mergeGenerated } from './run-properties.js';

const rules = new Map<string, Rule>([
  ['ORDER-FIELDS', { id: 'ORDER-FIELDS', severity: 'MUST', text: 'fields' } as Rule],
  ['U-LIMITS', { id: 'U-LIMITS', severity: 'UNSPECIFIED', text: 'limits' } as Rule],
]);

/** A property that fails on any list holding a number above 100, as a target with a cap would. */
function capped(rule = 'ORDER-FIELDS'): Property<number[]> & { seen: number[][] } {
  const seen: number[][] = [];
  return {
    id: 'capped',
    title: 'numbers stay small',
    rules: [rule],
    seen,
    arbitrary: fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 8 }),
    async judge(value) {
      seen.push(value);
      return value.some((n) => n > 100)
        ? { ok: false, message: 'a number above 100', rules: [rule], evidence: { value } }
        : { ok: true };
    },
  };
}

describe('checking properties over generated cases', () => {
  it('shrinks a failure to the minimal case and names the seed that replays it', async () => {
    const [result] = await checkProperties('service', [capped() as Property<unknown>], {
      numRuns: 200,
      seed: 7,
      rules,
    });
    expect(result!.status).toBe('failed');
    expect(result!.evidence?.generated).toMatchObject({ case: [101], seed: 7, replay: '--generate 200 --seed 7' });
    expect(result!.message).toContain('[101]');
    expect(result!.message).toContain('--seed 7');
  });

  it('replays the same cases from the same seed', async () => {
    const first = capped();
    const second = capped();
    await checkProperties('service', [first as Property<unknown>], { numRuns: 50, seed: 99, rules });
    await checkProperties('service', [second as Property<unknown>], { numRuns: 50, seed: 99, rules });
    expect(second.seen).toEqual(first.seen);
  });

  /** Holds every case, some only under another reading of an open point (a number above 100), and fails on 999 when asked. */
  function otherReading(failOn999 = false): Property<number[]> {
    return {
      id: 'reading',
      title: 'other readings warn',
      rules: ['ORDER-FIELDS', 'U-LIMITS'],
      arbitrary: fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 8 }),
      async judge(value) {
        if (failOn999 && value.includes(999))
          return { ok: false, message: 'a 999', rules: ['ORDER-FIELDS'], evidence: { value } };
        return value.some((n) => n > 100)
          ? {
              ok: true,
              tag: 'other reading',
              warning: { message: 'a number above 100', rules: ['U-LIMITS'], evidence: { value } },
            }
          : { ok: true };
      },
    };
  }

  it('a case held under another legal reading warns and generation goes on; --strict makes it a shrunk failure', async () => {
    const [warned] = await checkProperties('service', [otherReading() as Property<unknown>], {
      numRuns: 100,
      seed: 3,
      rules,
    });
    expect(warned!.status).toBe('warning');
    expect(warned!.rules).toEqual(['U-LIMITS']);
    expect(warned!.message).toMatch(
      /^100 cases \(\d+ other reading, \d+ held\), no failure; \d+ held under another legal reading than the property's own: a number above 100 \(first such case: \[.*\]; replay with --generate 100 --seed 3\)$/,
    );
    expect(warned!.evidence?.generated).toMatchObject({ seed: 3, cases: 100 });
    const [strict] = await checkProperties('service', [otherReading() as Property<unknown>], {
      numRuns: 100,
      seed: 3,
      rules,
      strict: true,
    });
    expect(strict!.status).toBe('failed');
    expect(strict!.evidence?.generated).toMatchObject({ case: [101] });
  });

  it('a failure still wins over the warnings found before it', async () => {
    const failing: Property<number[]> = {
      ...otherReading(true),
      arbitrary: fc.array(fc.constantFrom(150, 999), { minLength: 1, maxLength: 3 }),
    };
    const [result] = await checkProperties('service', [failing as Property<unknown>], { numRuns: 100, seed: 4, rules });
    expect(result!.status).toBe('failed');
    expect(result!.rules).toEqual(['ORDER-FIELDS']);
    expect((result!.evidence?.generated as { case: number[] }).case).toContain(999);
  });

  it('names a failure once, on the minimal case after shrinking (explain), not on every failing candidate', async () => {
    const explained: number[][] = [];
    const property: Property<number[]> = {
      ...capped(),
      async explain(value, verdict) {
        explained.push(value);
        return { ...verdict, message: `under another reading: ${verdict.message}`, rules: ['U-LIMITS'] };
      },
    };
    const [result] = await checkProperties('service', [property as Property<unknown>], {
      numRuns: 200,
      seed: 7,
      rules,
    });
    expect(explained).toEqual([[101]]);
    expect(result!.status).toBe('warning');
    expect(result!.rules).toEqual(['U-LIMITS']);
    expect(result!.message).toMatch(
      /^under another reading: a number above 100 \(minimal case after \d+ shrinks: \[101\]/,
    );
    expect(result!.evidence?.generated).toMatchObject({ case: [101] });
    // Shrinking tried many failing candidates; the judge alone saw them.
    expect((result!.evidence?.generated as { shrinks: number }).shrinks).toBeGreaterThan(1);
  });

  it('warns, never fails, when the property rests on an open point', async () => {
    const [result] = await checkProperties('service', [capped('U-LIMITS') as Property<unknown>], {
      numRuns: 100,
      seed: 3,
      rules,
    });
    expect(result!.status).toBe('warning');
  });

  it("runs a property's edge examples first on every seed, counted among the N cases", async () => {
    for (const seed of [1, 2]) {
      const property = {
        ...capped(),
        arbitrary: fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 8 }),
        examples: [[100], [0, 100]],
      };
      const [result] = await checkProperties('service', [property as Property<unknown>], { numRuns: 5, seed, rules });
      expect(property.seen.slice(0, 2)).toEqual([[100], [0, 100]]);
      expect(property.seen).toHaveLength(5);
      expect(result!.status).toBe('passed');
    }
    // An example that fails is the failure, shrunk where the arbitrary can shrink a value it did not draw.
    const failing = {
      ...capped(),
      arbitrary: fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 8 }),
      examples: [[7, 500]],
    };
    const [failed] = await checkProperties('service', [failing as Property<unknown>], { numRuns: 5, seed: 3, rules });
    expect(failed!.status).toBe('failed');
    expect(failing.seen[0]).toEqual([7, 500]);
    expect(failed!.message).toContain('minimal case after');
  });

  it('passes with the number of cases when nothing fails', async () => {
    const property: Property<number> = {
      id: 'small',
      title: 't',
      rules: ['ORDER-FIELDS'],
      arbitrary: fc.integer({ min: 0, max: 9 }),
      judge: async () => ({ ok: true, tag: 'accepted' }),
    };
    const [result] = await checkProperties('service', [property as Property<unknown>], { numRuns: 40, seed: 1, rules });
    expect(result).toMatchObject({
      status: 'passed',
      suite: 'generated/service',
      case: 'small',
      id: 'generated/service/small',
    });
    expect(result!.message).toMatch(/^40 cases \(40 accepted\)/);
  });

  it("puts what a property restored (or could not) into the report's notes", async () => {
    const property: Property<number> = {
      id: 'stateful',
      title: 't',
      rules: ['ORDER-FIELDS'],
      arbitrary: fc.integer({ min: 0, max: 9 }),
      judge: async () => ({ ok: true }),
      finish: async () => ['energy not restored: GET /__control/merchants/1/energy answered 404'],
    };
    const results = await checkProperties('service', [property as Property<unknown>], { numRuns: 5, seed: 1, rules });
    const report = mergeGenerated(sampleReport(), results, rules);
    expect(report.notes?.filter((note) => note.startsWith('generated stateful'))).toEqual([
      'generated stateful: energy not restored: GET /__control/merchants/1/energy answered 404',
    ]);
  });

  it('stores a failing example and replays it first on the next run, whatever the seed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-examples-'));
    const store = folderExampleStore(dir);
    await checkProperties('service', [capped() as Property<unknown>], { numRuns: 200, seed: 7, rules, store });
    expect(JSON.parse(readFileSync(join(dir, 'service-capped.json'), 'utf8')).examples[0].value).toEqual([101]);
    const again = capped();
    // One case only, from a seed that draws small numbers first: the stored example is what fails.
    const [result] = await checkProperties('service', [again as Property<unknown>], {
      numRuns: 1,
      seed: 12345,
      rules,
      store,
    });
    expect(again.seen[0]).toEqual([101]);
    expect(result!.status).toBe('failed');
    expect(result!.message).toContain('a stored failing example');
  });

  it('forgets a stored example once it passes, and keeps exact numbers exact in the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-examples-'));
    const store = folderExampleStore(dir);
    store.save('service', 'p', [
      { value: { amount: new LosslessNumber('12345678901234567890.123') }, seed: 1, rules: [], foundAt: 'now' },
    ]);
    expect(String((store.load('service', 'p')[0]!.value as { amount: LosslessNumber }).amount)).toBe(
      '12345678901234567890.123',
    );
    expect(store.load('service', 'p')[0]!.value).toEqual({ amount: new LosslessNumber('12345678901234567890.123') });
    const property: Property<unknown> = {
      id: 'p',
      title: 't',
      rules: [],
      arbitrary: fc.constant({}),
      judge: async () => ({ ok: true }),
    };
    await checkProperties('service', [property], { numRuns: 3, seed: 1, rules, store });
    expect(store.load('service', 'p')).toEqual([]);
  });
});
