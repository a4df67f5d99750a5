import { ConfigError } from '../core/errors.js';

/** Parses a whole-number flag value, or says which flag was wrong. */
export function parseInteger(value: string, flag: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new ConfigError('bad-flag', `${flag} takes a whole number, not ${JSON.stringify(value)}`);
  return Number.parseInt(value, 10);
}

/** Checks a flag value against a closed list. */
export function parseChoice<T extends string>(value: string, choices: readonly T[], flag: string): T {
  if (!(choices as readonly string[]).includes(value)) {
    throw new ConfigError('bad-flag', `${flag} must be one of ${choices.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value as T;
}
