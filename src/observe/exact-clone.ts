/**
 * Results cross from the judge's thread to the main thread by structured clone, which keeps plain
 * data but not classes: an exact number of the evidence (LosslessNumber, src/core/exact-json.ts)
 * would arrive as a bare object and lose its digits in report.json. It crosses as its text, with
 * its place noted, and becomes an exact number again on arrival.
 */
import { LosslessNumber } from '../core/exact-json.js';

type Path = Array<string | number>;

/** A value ready for postMessage: exact numbers as text, and where they were. */
export interface Cloneable<T> {
  value: T;
  numbers: Array<[Path, string]>;
}

/** Copies `value` with every exact number replaced by its text (noted in `numbers`). */
export function toCloneable<T>(value: T): Cloneable<T> {
  const numbers: Array<[Path, string]> = [];
  const walk = (item: unknown, path: Path): unknown => {
    if (item instanceof LosslessNumber) {
      numbers.push([path, item.value]);
      return item.value;
    }
    if (Array.isArray(item)) return item.map((one, i) => walk(one, [...path, i]));
    if (item !== null && typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype)
      return Object.fromEntries(Object.entries(item).map(([key, one]) => [key, walk(one, [...path, key])]));
    return item;
  };
  return { value: walk(value, []) as T, numbers };
}

/** The value again, its exact numbers exact (`cloneable` is the received copy: changed in place). */
export function fromCloneable<T>(cloneable: Cloneable<T>): T {
  let root = cloneable.value as unknown;
  for (const [path, text] of cloneable.numbers) {
    if (path.length === 0) {
      root = new LosslessNumber(text);
      continue;
    }
    let holder = root as Record<string | number, unknown>;
    for (const step of path.slice(0, -1)) holder = holder[step] as Record<string | number, unknown>;
    holder[path[path.length - 1]!] = new LosslessNumber(text);
  }
  return root as T;
}
