import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LosslessNumber } from '../core/exact-json.js';

/** A failing example as stored: the minimal case, the seed and path that found it, when. */
interface StoredExample {
  value: unknown;
  seed: number;
  path?: string;
  rules: string[];
  foundAt: string;
}

/**
 * The failing-example database (as hypothesis keeps one): one JSON file per property under
 * `<reports>/examples/`, replayed before any new case so a CI gate never forgets a found defect.
 * Numbers are kept exact (a BigDecimal example must replay digit for digit).
 */
export interface ExampleStore {
  load(side: string, property: string): StoredExample[];
  /** Keeps `examples` (deduplicated, newest last); an empty list removes the file. */
  save(side: string, property: string, examples: StoredExample[]): void;
}

const LIMIT = 20;

/** An example store in a folder (`reports/examples`). Unreadable files are treated as empty, never fatal. */
export function folderExampleStore(dir: string): ExampleStore {
  const file = (side: string, property: string) => join(dir, `${side}-${property}.json`);
  return {
    load(side, property) {
      try {
        const parsed = JSON.parse(readFileSync(file(side, property), 'utf8')) as { examples?: StoredExample[] };
        const examples = Array.isArray(parsed.examples)
          ? parsed.examples.filter((example) => example && typeof example === 'object' && 'value' in example)
          : [];
        return examples.map((example) => ({ ...example, value: decodeExact(example.value) }));
      } catch {
        return [];
      }
    },
    save(side, property, examples) {
      const seen = new Set<string>();
      const kept = examples
        .filter((example) => {
          const key = JSON.stringify(encodeExact(example.value));
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        })
        .slice(-LIMIT);
      if (kept.length === 0) {
        rmSync(file(side, property), { force: true });
        return;
      }
      mkdirSync(dir, { recursive: true });
      const encoded = kept.map((example) => ({ ...example, value: encodeExact(example.value) }));
      writeFileSync(
        file(side, property),
        `${JSON.stringify({ property: `${side}/${property}`, examples: encoded }, null, 2)}\n`,
      );
    },
  };
}

/** A store that keeps nothing (library use without a folder). */
export const NO_EXAMPLE_STORE: ExampleStore = { load: () => [], save: () => undefined };

/** An exact number is stored as `{"$exact": "digits"}` so it replays as an exact number, and a plain number stays one. */
function encodeExact(value: unknown): unknown {
  if (value instanceof LosslessNumber) return { $exact: value.value };
  if (Array.isArray(value)) return value.map(encodeExact);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeExact(v)]));
  return value;
}

/** The inverse of {@link encodeExact}. */
function decodeExact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeExact);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === '$exact' && typeof record.$exact === 'string')
      return new LosslessNumber(record.$exact);
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, decodeExact(v)]));
  }
  return value;
}
