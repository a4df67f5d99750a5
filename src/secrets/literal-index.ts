/**
 * An index of literal strings for one left-to-right pass over a text: at each position, the longest
 * literal that starts there. It does what one global RegExp alternation of the literals (longest
 * first, escaped) does, without the RegExp: V8 runs such an alternation position by position, each
 * literal in turn, and the scrubber's alternation holds every spelling of a whole PEM key (hundreds
 * of literals, some of them kilobytes long).
 *
 * Semantics (those of `new RegExp(sorted.map(alternative).join('|'), 'g')`): the leftmost match,
 * the longest literal at that position, matches never overlap; a literal shorter than `wordBelow`
 * matches only as a whole word, with no ASCII letter or digit just before or just after it (the
 * `(?<![A-Za-z0-9])…(?![A-Za-z0-9])` of the alternation). Positions are UTF-16 code units and
 * matching is exact (no case folding), as a RegExp without flags does.
 */

/** One literal and what it maps to. */
interface Entry<V> {
  literal: string;
  value: V;
  /** Shorter than `wordBelow`: matches only as a whole word. */
  word: boolean;
}

/** A match: where it starts, the literal, and the literal's value. */
interface LiteralMatch<V> {
  index: number;
  literal: string;
  value: V;
}

/** The literals, looked up at a position of a text. */
interface LiteralIndex<V> {
  /** How many literals. */
  readonly size: number;
  /** The longest literal that matches at `at` (whole-word rule included), or undefined. */
  at(input: string, at: number): Entry<V> | undefined;
  /** Every match, leftmost first, longest at its position, none overlapping. */
  matches(input: string): Array<LiteralMatch<V>>;
  /** The text with every match replaced by `replace(match)`. */
  replace(input: string, replace: (match: LiteralMatch<V>) => string): string;
}

const isWordChar = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

/** 7 bits of each of 4 characters (lossy outside ASCII: a collision only costs a comparison). */
const code4 = (text: string, at: number) =>
  ((text.charCodeAt(at) & 0x7f) << 21) |
  ((text.charCodeAt(at + 1) & 0x7f) << 14) |
  ((text.charCodeAt(at + 2) & 0x7f) << 7) |
  (text.charCodeAt(at + 3) & 0x7f);

/** 7 bits of each of 2 characters: the first filter, one byte per pair. */
const code2 = (text: string, at: number) => ((text.charCodeAt(at) & 0x7f) << 7) | (text.charCodeAt(at + 1) & 0x7f);

/**
 * Indexes the literals (empty ones are left out; the first value given for a literal is kept).
 * Literals of 4 characters or more are bucketed by their first 4, shorter ones by their first one;
 * each bucket is ordered longest first, so the first literal of a bucket that matches is the longest.
 *
 * @example createLiteralIndex(new Map([['secret', 'ak…#1234']]), 6).replace('a secret', (m) => m.value) // 'a ak…#1234'
 */
export function createLiteralIndex<V>(
  literals: ReadonlyMap<string, V> | Iterable<readonly [string, V]>,
  wordBelow: number,
): LiteralIndex<V> {
  const long = new Map<number, Array<Entry<V>>>();
  const short = new Map<number, Array<Entry<V>>>();
  // First filters: the first two characters of a long literal, the first character of a short one.
  const pairs = new Uint8Array(1 << 14);
  const firsts = new Uint8Array(1 << 7);
  const seen = new Set<string>();
  for (const [literal, value] of literals) {
    if (literal.length === 0 || seen.has(literal)) continue;
    seen.add(literal);
    const entry: Entry<V> = { literal, value, word: literal.length < wordBelow };
    if (literal.length >= 4) {
      const key = code4(literal, 0);
      const bucket = long.get(key);
      if (bucket) bucket.push(entry);
      else long.set(key, [entry]);
      pairs[code2(literal, 0)] = 1;
    } else {
      const key = literal.charCodeAt(0);
      const bucket = short.get(key);
      if (bucket) bucket.push(entry);
      else short.set(key, [entry]);
      firsts[key & 0x7f] = 1;
    }
  }
  // Longest first; among equal lengths the order given (two literals of one length cannot both match at one position).
  for (const bucket of [...long.values(), ...short.values()])
    bucket.sort((a, b) => b.literal.length - a.literal.length);
  const hasShort = short.size > 0;

  const fits = (input: string, i: number, entry: Entry<V>): boolean => {
    if (!input.startsWith(entry.literal, i)) return false;
    if (!entry.word) return true;
    return !(i > 0 && isWordChar(input.charCodeAt(i - 1))) && !isWordChar(input.charCodeAt(i + entry.literal.length));
  };

  const at = (input: string, i: number): Entry<V> | undefined => {
    if (i + 3 < input.length && pairs[code2(input, i)] === 1) {
      const bucket = long.get(code4(input, i));
      if (bucket) for (const entry of bucket) if (fits(input, i, entry)) return entry;
    }
    if (hasShort && firsts[input.charCodeAt(i) & 0x7f] === 1) {
      const bucket = short.get(input.charCodeAt(i));
      if (bucket) for (const entry of bucket) if (fits(input, i, entry)) return entry;
    }
    return undefined;
  };

  const matches = (input: string): Array<LiteralMatch<V>> => {
    const found: Array<LiteralMatch<V>> = [];
    if (seen.size === 0) return found;
    for (let i = 0; i < input.length;) {
      const entry = at(input, i);
      if (entry === undefined) {
        i++;
        continue;
      }
      found.push({ index: i, literal: entry.literal, value: entry.value });
      i += entry.literal.length;
    }
    return found;
  };

  const replace = (input: string, replacer: (match: LiteralMatch<V>) => string): string => {
    const found = matches(input);
    if (found.length === 0) return input;
    let out = '';
    let from = 0;
    for (const match of found) {
      out += input.slice(from, match.index) + replacer(match);
      from = match.index + match.literal.length;
    }
    return out + input.slice(from);
  };

  return { size: seen.size, at, matches, replace };
}
