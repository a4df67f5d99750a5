import { ConfigError } from '../core/errors.js';

/** Parses a whole-number flag value, or says which flag was wrong. */
export function parseInteger(value: string, flag: string, range: { min?: number; max?: number } = {}): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new ConfigError('bad-flag', `${flag} takes a whole number, not ${JSON.stringify(value)}`);
  const n = Number.parseInt(value, 10);
  if ((range.min !== undefined && n < range.min) || (range.max !== undefined && n > range.max)) {
    throw new ConfigError('bad-flag', `${flag} must be between ${range.min ?? '-∞'} and ${range.max ?? '∞'}, not ${n}`);
  }
  return n;
}

/** Checks a flag value against a closed list. */
export function parseChoice<T extends string>(value: string, choices: readonly T[], flag: string): T {
  if (!(choices as readonly string[]).includes(value)) {
    throw new ConfigError('bad-flag', `${flag} must be one of ${choices.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value as T;
}

/** `--generate N --seed S` as numbers (a bad value is one line and exit 2). */
export function generateFlags(flags: { generate?: string; seed?: string }): { numRuns: number; seed?: number } {
  const numRuns = parseInteger(flags.generate ?? '0', '--generate', { min: 0, max: 1_000_000 });
  return {
    numRuns,
    ...(flags.seed === undefined ? {} : { seed: parseInteger(flags.seed, '--seed', { min: 1, max: 2 ** 31 - 1 }) }),
  };
}
