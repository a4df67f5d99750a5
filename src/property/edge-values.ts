/**
 * The edges generation must reach early, as plain values and pure functions (no target): plaintexts
 * one byte below, at and above a multiple of the RSA plaintext block, integers past 2^53 (where a
 * binary float rounds), and characters of 2, 3 and 4 bytes in UTF-8. The properties put them in
 * front of the random cases (`Property.examples`), so `--generate 200` covers each one on every seed.
 */
import { stringifyExact, type ExactJson } from '../core/exact-json.js';

/** One character of each UTF-8 width past ASCII: 2 bytes ('é'), 3 ('€'), 4 (a surrogate pair in UTF-16, '𝄞'). */
export const NON_ASCII = ['é', '€', '𝄞'] as const;

/**
 * Integers a binary float cannot hold: 2^53 + 1 (the first), a Java long's maximum, 2^64 + 1 (past
 * any 64-bit integer). A correct service keeps them exact or refuses them (U-LIMITS), never rounds.
 */
export const BIG_INTEGERS = ['9007199254740993', '9223372036854775807', '18446744073709551617'] as const;

/** Where a block edge lies: the `nth` multiple of the block (1-based) past the smallest plaintext, plus `delta` bytes. */
export interface BlockEdge {
  nth: 1 | 2 | 3;
  delta: -1 | 0 | 1;
}

/** The nine block edges: n = 1…3, one byte below, at, one byte above. */
export const BLOCK_EDGES: readonly BlockEdge[] = ([1, 2, 3] as const).flatMap((nth) =>
  ([-1, 0, 1] as const).map((delta) => ({ nth, delta })),
);

/**
 * The exact plaintext length of a block edge for a plaintext that is `length` bytes before padding:
 * n·block + delta, n counted from the first multiple that a padded plaintext can reach (n·block − 1
 * ≥ length), so n = 1…3 when the plaintext fits in one block, and the next three multiples otherwise.
 */
export function blockEdgeLength(length: number, blockSize: number, edge: BlockEdge): number {
  const first = Math.max(1, Math.ceil((length + 1) / blockSize));
  return (first + edge.nth - 1) * blockSize + edge.delta;
}

/**
 * The value with `field` padded (appended `fill`, ASCII) so that `measure(value)` is exactly
 * `bytes` bytes of UTF-8; undefined when it is already longer. `measure` is the text as it goes on
 * the wire (identity suffixes and the requestUUID included).
 */
export function padField(
  value: Record<string, ExactJson>,
  field: string,
  bytes: number,
  measure: (value: Record<string, ExactJson>) => string,
  fill = 'x',
): Record<string, ExactJson> | undefined {
  const current = typeof value[field] === 'string' ? (value[field] as string) : '';
  const base = { ...value, [field]: current };
  const missing = bytes - Buffer.byteLength(measure(base), 'utf8');
  if (missing < 0) return undefined;
  // An ASCII fill character is one byte in UTF-8 and needs no escape in JSON.
  return { ...base, [field]: current + fill.repeat(missing) };
}

/**
 * The JSON text with spaces after its opening brace so that it is exactly `bytes` bytes (the same
 * value to any JSON reader); for a request with no free text field (the energy query). Undefined when
 * the text is already longer.
 */
export function padWithWhitespace(text: string, bytes: number): string | undefined {
  const missing = bytes - Buffer.byteLength(text, 'utf8');
  if (missing < 0 || !text.startsWith('{')) return undefined;
  return `{${' '.repeat(missing)}${text.slice(1)}`;
}

/** The exact JSON text of a value, for `padField`'s measure. */
export const asText = (value: Record<string, ExactJson>): string => stringifyExact(value);
