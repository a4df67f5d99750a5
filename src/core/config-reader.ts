import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.js';

/**
 * The one reader of the toolkit's own YAML files (emulator.yaml, merchant.yaml, profiles): every
 * problem is a ConfigError of one line, `<source>: <field>: <what is wrong>`, with the reason the
 * caller names (`bad-emulator-config`, `bad-merchant-config`, ...).
 *
 * No node:* import here: core/profile.ts reads its YAML through this file, and the profile is part
 * of the MSW handlers' browser bundle. The caller says how a relative path resolves.
 */

/** A mapping of a config document, read field by field. */
export type ConfigDoc = Record<string, unknown>;

/**
 * Parses YAML text; a syntax error is one line naming the source and the first line of the parser's
 * complaint.
 *
 * @example parseConfigYaml('a: [', 'x.yaml', 'bad-config') // throws ConfigError 'x.yaml: not valid YAML: ...'
 */
export function parseConfigYaml(text: string, source: string, reason: string): unknown {
  try {
    return parseYaml(text);
  } catch (error) {
    throw new ConfigError(reason, `${source}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

/**
 * A value as a message shows it: JSON, cut at 60 characters.
 *
 * @example showValue('soon') // '"soon"'
 */
export function showValue(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * A value named by its type only, for fields that hold a secret: a key pasted with the wrong type
 * must not reach a log.
 *
 * @example describeType(12345) // 'a number'
 */
export function describeType(value: unknown): string {
  return value === null
    ? 'null'
    : value === undefined
      ? 'nothing'
      : Array.isArray(value)
        ? 'a list'
        : typeof value === 'object'
          ? 'a mapping'
          : typeof value === 'string'
            ? 'a string'
            : `a ${typeof value}`;
}

const absent = (value: unknown): value is undefined | null => value === undefined || value === null;

/**
 * Reads values at a path (`where`, e.g. `merchants[0].apiKey`) of a parsed document, failing with one
 * line that names the source and the field. An absent value is `undefined` or `null` (`key:` with
 * nothing after it). `resolvePath` turns a path as written into the one to open (the file readers
 * pass `(p) => isAbsolute(p) ? p : resolve(folderOfTheFile, p)`).
 *
 * @example new ConfigReader('x.yaml', 'bad-emulator-config').integer(70000, 'port', 0, 0, 65535) // throws 'x.yaml: port: must be a whole number from 0 to 65535, not 70000'
 */
export class ConfigReader {
  constructor(
    /** The file (or other origin) as the user named it, for messages. */
    readonly source: string,
    /** The ConfigError reason of every failure. */
    readonly reason: string,
    /** A path as written -> the path to open; as written by default. */
    readonly resolvePath: (path: string) => string = (path) => path,
  ) {}

  /** Throws `<source>: <where>: <message>` (no `<where>: ` when `where` is empty: the whole document). */
  fail(where: string, message: string): never {
    throw new ConfigError(this.reason, `${this.source}: ${where ? `${where}: ` : ''}${message}`);
  }

  /** A mapping whose fields are all among `fields` (a typo must not fall back to a default silently). */
  mapping(value: unknown, where: string, fields: readonly string[]): ConfigDoc {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      this.fail(where, `expected a mapping of ${fields.join(', ')}`);
    for (const key of Object.keys(value as ConfigDoc)) {
      if (!fields.includes(key)) this.fail(where, `unknown field '${key}' (known: ${fields.join(', ')})`);
    }
    return value as ConfigDoc;
  }

  /** {@link mapping}, or `{}` when absent. */
  optionalMapping(value: unknown, where: string, fields: readonly string[]): ConfigDoc {
    return absent(value) ? {} : this.mapping(value, where, fields);
  }

  /** A non-empty string. */
  string(value: unknown, where: string): string {
    if (typeof value !== 'string' || value.length === 0)
      this.fail(where, `must be a non-empty string, not ${showValue(value)}`);
    return value;
  }

  /** {@link string}, or `undefined` when absent. */
  optionalString(value: unknown, where: string): string | undefined {
    return absent(value) ? undefined : this.string(value, where);
  }

  /** A non-empty string that is a secret (an API key, a token): a wrong value is named by its type only. */
  secret(value: unknown, where: string): string {
    if (typeof value !== 'string' || value.length === 0)
      this.fail(where, `must be a non-empty string, not ${value === '' ? 'an empty string' : describeType(value)}`);
    return value;
  }

  /** A host name or address; `fallback` when absent. */
  host(value: unknown, where: string, fallback: string): string {
    if (absent(value)) return fallback;
    if (typeof value !== 'string' || value.trim() === '')
      this.fail(where, `must be a host name or address (e.g. 127.0.0.1), not ${showValue(value)}`);
    return value;
  }

  /** A whole number from `min` to `max`; `fallback` when absent, required when there is none. */
  integer(value: unknown, where: string, fallback: number | undefined, min: number, max: number): number {
    if (absent(value)) {
      if (fallback === undefined) this.fail(where, 'is required');
      return fallback;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(where, `must be a whole number from ${min} to ${max}, not ${showValue(value)}`);
    }
    return value;
  }

  /** A finite number from `min` to `max`; `fallback` when absent. */
  number(value: unknown, where: string, fallback: number, min: number, max: number): number {
    if (absent(value)) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
      this.fail(where, `must be a number from ${min} to ${max}, not ${showValue(value)}`);
    return value;
  }

  /** A whole number of any size from `min`: a YAML integer, or a digit string for values beyond 2^53. */
  bigint(value: unknown, where: string, min: bigint): bigint {
    let big: bigint | undefined;
    if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
    else if (typeof value === 'string' && /^\d{1,60}$/.test(value)) big = BigInt(value);
    else if (typeof value === 'bigint') big = value;
    if (big === undefined || big < min)
      this.fail(
        where,
        `must be a whole number from ${min} (a quoted digit string for values beyond 2^53), not ${showValue(value)}`,
      );
    return big;
  }

  /** An ISO 8601 date-time as written (a YAML timestamp as its ISO text); `undefined` when absent. */
  instant(value: unknown, where: string): string | undefined {
    if (absent(value)) return undefined;
    const text = value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value;
    if (typeof text !== 'string' || Number.isNaN(Date.parse(text)))
      this.fail(where, `must be an ISO 8601 date-time (e.g. 2030-01-01T00:00:00Z), not ${showValue(value)}`);
    return text;
  }

  /** The validity window of an API key: its `notBefore` and `notAfter` fields, each when given. */
  keyWindow(doc: ConfigDoc, where: string): { notBefore?: string; notAfter?: string } {
    const window: { notBefore?: string; notAfter?: string } = {};
    for (const bound of ['notBefore', 'notAfter'] as const) {
      const text = this.instant(doc[bound], `${where}.${bound}`);
      if (text !== undefined) window[bound] = text;
    }
    return window;
  }

  /** A file path, through `resolvePath`; `:memory:` (a throwaway SQLite store) as is. */
  path(value: unknown, where: string): string {
    if (typeof value !== 'string' || value.trim() === '')
      this.fail(where, `must be a file path, not ${showValue(value)}`);
    return value === ':memory:' ? value : this.resolvePath(value);
  }

  /** {@link path}, or `undefined` when absent. */
  optionalPath(value: unknown, where: string): string | undefined {
    return absent(value) ? undefined : this.path(value, where);
  }

  /** An http(s) URL as written; `undefined` when absent. */
  url(value: unknown, where: string): string | undefined {
    if (absent(value)) return undefined;
    const text = this.string(value, where);
    let parsed: URL | undefined;
    try {
      parsed = new URL(text);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      this.fail(where, `must be an http(s) URL, not ${showValue(value)}`);
    return text;
  }

  /** A list; `[]` when absent. */
  array(value: unknown, where: string): unknown[] {
    if (absent(value)) return [];
    if (!Array.isArray(value)) this.fail(where, `must be a list, not ${showValue(value)}`);
    return value;
  }
}
