import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { stringifyExact } from '../../core/exact-json.js';
import { DEFAULT_PROFILE, plaintextBlockSize } from '../../core/profile.js';
import { generateMerchantKeyPair } from '../../crypto/key-pair.js';
import { parseKey, type RsaPrivateKey } from '../../crypto/keys.js';
import { CALLBACK_TYPE_TABLE, providerName } from '../../spec/callback-types.js';
import { packagedDimensions } from '../../spec/dimensions.js';
import { withRequestUUID } from '../../wire/callback-delivery.js';
import { atBlockEdge, defaultPayload, hasCasedLetter, nearMiss } from '../merchant-steps.js';
import type { KeyNearMiss, Step, Suite } from '../model.js';
import { parseSuite } from '../suite.js';
import type { MerchantTarget } from '../types.js';
import { derivedSuites } from './index.js';

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const merchantSuites = derivedSuites().filter((suite) => suite.side === 'merchant');
const byName = (name: string): Suite => merchantSuites.find((suite) => suite.name === `merchant/derived/${name}`)!;

describe('the merchant derived suites', () => {
  it('are suites the loader accepts: the schema, registered checks, parameters their steps produce', () => {
    for (const suite of merchantSuites) {
      const { name, ...body } = suite;
      expect(parseSuite(stringify(body), name).cases.map((c) => c.id)).toEqual(suite.cases.map((c) => c.id));
    }
  });

  it('vary every key component of every callback type alone, each a second event under the type key rule', () => {
    const cases = ['deposit-key-components', 'withdrawal-key-components', 'other-key-components'].flatMap(
      (name) => byName(name).cases,
    );
    for (const entry of CALLBACK_TYPE_TABLE)
      for (const field of [...entry.key.fields, ...(entry.key.optional ?? [])]) {
        const found = cases.find((c) => c.id === `${kebab(entry.id)}-${kebab(field)}-differs`);
        expect(found, `${entry.id}: ${field}`).toBeDefined();
        expect(found!.steps[1]!.deliver).toEqual({ copy: 'first', fields: { [field]: expect.any(String) } });
        expect(found!.steps[1]!.expect).toContainEqual({ check: 'processed', count: 1, rules: [entry.key.rule] });
        // A field with a second spelling (txid/txId, chain/chainName) is varied under both.
        expect(found!.spellings).toBe(providerName(field) === field ? 'interface' : 'both');
      }
  });

  it('make every field the interface names outside a deposit or withdrawal key a duplicate (MUST); fields it never names warn (U-CB-FIELDS)', () => {
    const only = (name: string) => byName(name).cases.filter((c) => c.id.includes('-only-'));
    const ruleOf = (c: { steps: Step[] }) => c.steps[1]!.expect!.find((e) => e.check === 'processed')!.rules;
    expect(Object.fromEntries(only('deposit-key-components').map((c) => [c.id, ruleOf(c)]))).toEqual({
      'deposit-only-tracking-id-differs': ['CB-ID-DEPOSIT'],
      'deposit-only-from-address-differs': ['U-CB-FIELDS'],
      'deposit-only-amount-differs': ['U-CB-FIELDS'],
      'deposit-only-tx-index-differs': ['U-CB-FIELDS'],
    });
    expect(Object.fromEntries(only('withdrawal-key-components').map((c) => [c.id, ruleOf(c)]))).toEqual({
      'withdrawal-only-tracking-id-differs': ['CB-ID-WITHDRAW'],
      'withdrawal-only-call-back-id-differs': ['CB-ID-WITHDRAW'],
      'withdrawal-only-chain-differs': ['CB-ID-WITHDRAW'],
      'withdrawal-only-symbol-differs': ['CB-ID-WITHDRAW'],
      'withdrawal-only-to-address-differs': ['CB-ID-WITHDRAW'],
      'withdrawal-only-amount-differs': ['U-CB-FIELDS'],
    });
    // A row may put a variant under an open point: its findings then warn (readings in the table).
    const other = packagedDimensions().find((row) => row.id === 'other-key-components')!;
    const read = derivedSuites([
      { ...other, variants: ['other-fields'], readings: { 'other-fields': 'U-CB-FIELDS' } },
    ])[0]!;
    expect(read.cases.length).toBeGreaterThan(0);
    for (const c of read.cases)
      expect(c.steps[1]!.expect).toContainEqual({ check: 'processed', count: 0, rules: ['U-CB-FIELDS'] });
  });

  it('send the values of one type under the type sharing most of its key: a withdrawal for a deposit, a deposit for a withdrawal', () => {
    const second = (name: string, id: string) => byName(name).cases.find((c) => c.id === id)!.steps[1]!.deliver;
    expect(second('deposit-key-components', 'deposit-as-withdrawal')).toEqual({ copy: 'first', type: 3 });
    expect(second('withdrawal-key-components', 'withdrawal-as-deposit')).toEqual({ copy: 'first', type: 1 });
  });

  it('send the values of each other callback type under the next type of CB-ID-OTHER, the last under the first (not-enough-money as not-enough-hot-money)', () => {
    const others = CALLBACK_TYPE_TABLE.filter((entry) => entry.key.rule === 'CB-ID-OTHER');
    const ids = byName('other-key-components').cases.map((c) => c.id);
    const pairs = others.map((entry, i) => `${kebab(entry.id)}-as-${kebab(others[(i + 1) % others.length]!.id)}`);
    expect(pairs.filter((id) => !ids.includes(id))).toEqual([]);
    expect(ids).toContain('not-enough-money-as-not-enough-hot-money');
  });

  it('resend every type while its first delivery may be in flight, and move a character across each pair of adjacent key fields', () => {
    const ids = merchantSuites.flatMap((suite) => suite.cases.map((c) => c.id));
    for (const entry of CALLBACK_TYPE_TABLE) expect(ids).toContain(`${kebab(entry.id)}-resent-in-flight`);
    expect(ids.filter((id) => id.startsWith('deposit-') && id.endsWith('-boundary'))).toEqual([
      'deposit-txid-chain-boundary',
      'deposit-chain-symbol-boundary',
      'deposit-symbol-to-address-boundary',
    ]);
  });

  it('refuse a row naming a variant its generator does not know, or a class the side has no generator for', () => {
    const row = { ...packagedDimensions()[0]!, variants: ['upper-case', 'upside-down'] };
    expect(() => derivedSuites([row])).toThrow(
      /callback-key-near-misses: the merchant exact-comparison generator knows no variant upside-down/,
    );
    expect(() => derivedSuites([{ ...row, class: 'computed-value' }])).toThrow(
      /no merchant generator for class computed-value/,
    );
  });

  it('restart right after the answer, before the probe is read, and need the probe and --restart', () => {
    for (const c of byName('acknowledged-survives-restart').cases) {
      expect(c.needs).toEqual(['probe', 'restart']);
      expect(c.steps[0]!.deliver).toMatchObject({ event: 'first', restartAfter: true });
      expect(c.steps[0]!.expect).toContainEqual({ check: 'processed', count: 1, rules: ['CB-ONCE'] });
    }
  });
});

describe('near misses of the key', () => {
  const key = 'ak_7f3Qz9';
  const variants: KeyNearMiss[] = [
    'upper-case',
    'lower-case',
    'one-letter-case',
    'appended',
    'last-removed',
    'first-removed',
    'nbsp-after',
    'twice-unknown-first',
  ];

  it('each differs from the key', () => {
    for (const variant of variants) expect(nearMiss(key, variant), variant).not.toEqual(key);
  });

  it('each is accepted by one loose comparison a real receiver writes, so that comparison fails a case', () => {
    const loose: Record<string, (header: string) => boolean> = {
      'ignores case': (header) => header.toLowerCase() === key.toLowerCase(),
      trims: (header) => header.trim() === key,
      'prefix either way': (header) => header.startsWith(key) || key.startsWith(header),
      'suffix either way': (header) => header.endsWith(key) || key.endsWith(header),
    };
    for (const [name, accepts] of Object.entries(loose))
      expect(
        variants.some(
          (variant) => typeof nearMiss(key, variant) === 'string' && accepts(nearMiss(key, variant) as string),
        ),
        name,
      ).toBe(true);
  });

  it('turn every letter over when the key already is in the asked case; a key without letters has no case variant', () => {
    expect(nearMiss('ABC-1', 'upper-case')).toBe('abc-1');
    expect(nearMiss('abc-1', 'lower-case')).toBe('ABC-1');
    expect(nearMiss('abc-1', 'one-letter-case')).toBe('abC-1');
    expect(nearMiss('abc-1', 'accented-letter')).toBe('ab\u00e7-1');
    expect(nearMiss('xyz-bdf', 'accented-letter')).toBe('x\u00fdz-bdf');
    expect(nearMiss('12-34', 'accented-letter')).toBe('12-3\u00e9');
    expect(hasCasedLetter('12-34')).toBe(false);
    expect(hasCasedLetter(key)).toBe(true);
    expect(nearMiss(key, 'twice-unknown-first')).toEqual([expect.stringMatching(/^wc-unknown-/), key]);
  });
});

describe('plaintexts at the block edges', () => {
  for (const bits of [1024, 2048]) {
    it(`end one byte under, at and one byte over a whole number of blocks of a ${bits}-bit key`, () => {
      const privateKey = parseKey(generateMerchantKeyPair(bits).privatePem) as RsaPrivateKey;
      const target = { profile: DEFAULT_PROFILE, privateKey } as unknown as MerchantTarget;
      const block = plaintextBlockSize(DEFAULT_PROFILE, privateKey.modulusBytes);
      const lengths = (['one-under', 'whole', 'one-over'] as const).map((edge) =>
        Buffer.byteLength(stringifyExact(withRequestUUID(atBlockEdge(defaultPayload(1), edge, target))), 'utf8'),
      );
      expect(lengths.map((length) => (length + 1) % block)).toEqual([0, 1, 2]);
    });

    it(`split a three-byte character across a block boundary of a ${bits}-bit key: each block alone is not UTF-8`, () => {
      const privateKey = parseKey(generateMerchantKeyPair(bits).privatePem) as RsaPrivateKey;
      const target = { profile: DEFAULT_PROFILE, privateKey } as unknown as MerchantTarget;
      const block = plaintextBlockSize(DEFAULT_PROFILE, privateKey.modulusBytes);
      const plain = Buffer.from(
        stringifyExact(withRequestUUID(atBlockEdge(defaultPayload(1), 'split-character', target))),
        'utf8',
      );
      const at = plain.indexOf(Buffer.from('\u20ac', 'utf8'));
      expect(at % block).toBe(block - 1);
      const starts = Array.from({ length: Math.ceil(plain.length / block) }, (_, i) => i * block);
      const decodedPerBlock = starts.map((start) => plain.subarray(start, start + block).toString('utf8')).join('');
      expect(decodedPerBlock).not.toBe(plain.toString('utf8'));
    });
  }
});
