import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLiteralIndex } from './literal-index.js';
import { spellings } from './secret-renderings.js';

/**
 * The RegExp the index replaces (the scrubber's former `known` pass), kept here as the oracle: one
 * global alternation, longest first, a literal shorter than `wordBelow` wrapped in word-boundary lookarounds.
 */
function regexReplace(replacement: ReadonlyMap<string, string>, wordBelow: number, input: string): string {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alternative = (literal: string) =>
    literal.length >= wordBelow ? escape(literal) : `(?<![A-Za-z0-9])${escape(literal)}(?![A-Za-z0-9])`;
  const keys = [...replacement.keys()].filter((key) => key.length > 0);
  if (keys.length === 0) return input;
  const known = new RegExp(
    keys
      .sort((a, b) => b.length - a.length)
      .map(alternative)
      .join('|'),
    'g',
  );
  return input.replace(known, (match) => replacement.get(match) ?? match);
}

function indexReplace(replacement: ReadonlyMap<string, string>, wordBelow: number, input: string): string {
  return createLiteralIndex(replacement, wordBelow).replace(input, (match) => match.value);
}

const both = (replacement: ReadonlyMap<string, string>, wordBelow: number, input: string) => {
  const out = indexReplace(replacement, wordBelow, input);
  expect(out).toBe(regexReplace(replacement, wordBelow, input));
  return out;
};

describe('createLiteralIndex', () => {
  it('takes the longest literal at a position, whatever order the literals came in', () => {
    const replacement = new Map([
      ['abcdef', '<6>'],
      ['abcdefgh', '<8>'],
      ['abcdefg', '<7>'],
    ]);
    expect(both(replacement, 0, 'x abcdefghi y abcdefg! abcdef')).toBe('x <8>i y <7>! <6>');
  });

  it('takes the leftmost match even when a longer literal starts later inside it', () => {
    const replacement = new Map([
      ['abcdef', '<a>'],
      ['defghijklm', '<d>'],
    ]);
    expect(both(replacement, 0, 'abcdefghijklm')).toBe('<a>ghijklm');
  });

  it('replaces a literal that lies inside another only where it stands alone', () => {
    const replacement = new Map([
      ['outer-secret-value', '<outer>'],
      ['secret', '<inner>'],
    ]);
    expect(both(replacement, 0, 'outer-secret-value, secret')).toBe('<outer>, <inner>');
  });

  it('replaces adjacent literals each, without overlap', () => {
    const replacement = new Map([
      ['aaaa', '<A>'],
      ['bbbbbb', '<B>'],
    ]);
    expect(both(replacement, 0, 'aaaaaaaabbbbbbbbbbbbaaa')).toBe('<A><A><B><B>aaa');
  });

  it('matches a short literal only as a whole word (no ASCII letter or digit either side), a long one anywhere', () => {
    const replacement = new Map([
      ['k', '<k>'],
      ['key1', '<key1>'],
      ['longkey', '<long>'],
    ]);
    expect(both(replacement, 6, 'k kk key1 key12 xkey1 -key1- (k) k9 9k xlongkeyx')).toBe(
      '<k> kk <key1> key12 xkey1 -<key1>- (<k>) k9 9k x<long>x',
    );
  });

  it('treats non-ASCII neighbours as word boundaries and matches non-ASCII literals exactly', () => {
    const replacement = new Map([
      ['k', '<k>'],
      ['päss🔑wörd', '<pw>'],
      ['ßx', '<sz>'],
    ]);
    expect(both(replacement, 6, 'ék€ päss🔑wörd Päss🔑wörd ßx ßxy')).toBe('é<k>€ <pw> Päss🔑wörd <sz> ßxy');
    // Characters whose low 7 bits collide with ASCII ('ᅡ' is U+1161, 0x61 = 'a') are not taken for them.
    expect(both(new Map([['abcd', '<x>']]), 0, 'ᅡbcd abcd')).toBe('ᅡbcd <x>');
  });

  it('keeps the first value given for a literal and ignores empty literals', () => {
    const replacement: Array<[string, string]> = [
      ['', '<empty>'],
      ['same', '<first>'],
      ['same', '<second>'],
    ];
    expect(createLiteralIndex(replacement, 0).replace('a same b', (match) => match.value)).toBe('a <first> b');
    expect(createLiteralIndex<string>([], 0).replace('text', () => 'x')).toBe('text');
  });

  it('matches as the RegExp alternation did on random literals and texts built from them', () => {
    // A small alphabet (ASCII letters and digits, separators, non-ASCII, a surrogate pair) so that
    // literals share prefixes, nest in one another and touch each other.
    const char = fc.constantFrom('a', 'b', 'A', '1', '-', ' ', '%', 'é', '🔑', 'ᅡ');
    const literal = fc.array(char, { minLength: 1, maxLength: 9 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        fc.uniqueArray(literal, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 7 }),
        fc.array(fc.oneof(fc.nat(), literal), { maxLength: 30 }),
        (literals, wordBelow, pieces) => {
          const replacement = new Map(literals.map((text, i) => [text, `<${i}>`]));
          const input = pieces
            .map((piece) => (typeof piece === 'number' ? literals[piece % literals.length]! : piece))
            .join('');
          expect(indexReplace(replacement, wordBelow, input)).toBe(regexReplace(replacement, wordBelow, input));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("matches as the RegExp alternation did on the scrubber's spellings of secrets, cut and joined with noise", () => {
    const secret = fc.string({
      unit: fc.constantFrom('a', 'k', 'Z', '7', '/', '+', '"', '&', '<', ' ', '%', 'é', '🔑'),
      minLength: 1,
      maxLength: 10,
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.string({ maxLength: 4 })), { maxLength: 12 }),
        (secrets, pieces) => {
          const replacement = new Map<string, string>();
          secrets.forEach((value, i) => {
            for (const spelling of spellings(value))
              if (!replacement.has(spelling)) replacement.set(spelling, `<${i}>`);
          });
          const all = [...replacement.keys()];
          // Whole spellings, their heads (a text cut short) and noise between them.
          const input = pieces
            .map(([which, cut, keep, noise]) => {
              const spelling = all[which % all.length]!;
              return (keep % 3 === 0 ? spelling.slice(0, 1 + (cut % spelling.length)) : spelling) + noise;
            })
            .join('');
          expect(indexReplace(replacement, 6, input)).toBe(regexReplace(replacement, 6, input));
        },
      ),
      { numRuns: 150 },
    );
  });
});
