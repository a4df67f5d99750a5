import { isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON with exact numbers. `amount` is a BigDecimal: `12345678901234567890.123` must survive a
 * round trip digit for digit, so numbers are kept as their literal text (LosslessNumber) and
 * never pass through a binary float.
 */
export type ExactJson = null | boolean | string | LosslessNumber | ExactJson[] | { [key: string]: ExactJson };

/** Deepest nesting of arrays and objects that parseExactJson accepts. */
const MAX_PARSE_DEPTH = 512;

/**
 * Parses JSON keeping every number's literal text. Throws SyntaxError with a position, also for
 * nesting deeper than {@link MAX_PARSE_DEPTH}: the recursive parser and every walker after it would
 * otherwise overflow the stack on a few kilobytes of brackets.
 */
export function parseExactJson(text: string): ExactJson {
  assertDepth(text);
  return parse(text) as ExactJson;
}

/** One pass over the text counting brackets outside strings; cheap next to the parse itself. */
function assertDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_PARSE_DEPTH)
        throw new SyntaxError(`JSON nested deeper than ${MAX_PARSE_DEPTH} levels at position ${i}`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Serialises JSON, writing exact numbers with their original digits. */
export function stringifyExact(value: unknown, indent?: number): string {
  const text = stringify(value, undefined, indent);
  if (text === undefined) throw new TypeError('value cannot be serialised as JSON');
  return text;
}

/**
 * The form a JSON Schema validator can judge. A number becomes a JS number when that loses no
 * digit, or when it is an integer literal (its type stays right, only its magnitude rounds);
 * a fractional number that a float would round becomes its literal text, so an integer check can
 * never be fooled by rounding (`12345678901234567890.5` is not an integer) and a decimal
 * string-or-number schema still accepts it.
 */
export function toValidationView(value: unknown): unknown {
  if (value instanceof LosslessNumber) {
    const text = value.value;
    if (isSafeNumber(text) || /^-?\d+$/.test(text)) return Number(text);
    return text;
  }
  if (Array.isArray(value)) return value.map(toValidationView);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toValidationView(v);
    return out;
  }
  return value;
}

/** Turns plain JS data (with numbers as numbers) into ExactJson, e.g. before stringifying. */
export { LosslessNumber };
