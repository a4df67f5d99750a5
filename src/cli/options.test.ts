import { describe, expect, it } from 'vitest';
import { EXIT } from './exit.js';
import { parseChoice, parseInteger } from './options.js';
import { refusal } from '../../test/support/refusal.js';

/** What a call throws, as [reason, message]; undefined when it returns. */
describe('whole-number flags', () => {
  it.each<[string, { min?: number; max?: number }, number]>([
    ['42', {}, 42],
    [' 7 ', {}, 7],
    ['-3', {}, -3],
    ['0', { min: 0 }, 0],
    ['100', { min: 1, max: 100 }, 100],
  ])('reads %j within %j', (value, range, n) => {
    expect(parseInteger(value, '--port', range)).toBe(n);
  });

  it.each<[string, { min?: number; max?: number }, string]>([
    ['4.5', {}, '--port takes a whole number, not "4.5"'],
    ['', {}, '--port takes a whole number, not ""'],
    ['12abc', {}, '--port takes a whole number, not "12abc"'],
    ['1e3', {}, '--port takes a whole number, not "1e3"'],
    ['0', { min: 1 }, '--port must be between 1 and ∞, not 0'],
    ['65536', { min: 0, max: 65535 }, '--port must be between 0 and 65535, not 65536'],
    ['-1', { max: 10, min: 0 }, '--port must be between 0 and 10, not -1'],
    ['11', { max: 10 }, '--port must be between -∞ and 10, not 11'],
  ])('refuses %j within %j in one line', (value, range, message) => {
    expect(refusal(() => parseInteger(value, '--port', range))).toEqual(['bad-flag', message]);
  });
});

describe('flags with a closed list of values', () => {
  it('returns a listed value as it is', () => {
    expect(parseChoice('forge', ['native', 'forge'] as const, '--engine')).toBe('forge');
  });

  it.each([['Forge'], [' forge'], ['']])('refuses %j, naming every choice', (value) => {
    expect(refusal(() => parseChoice(value, ['native', 'forge'] as const, '--engine'))).toEqual([
      'bad-flag',
      `--engine must be one of native, forge, not ${JSON.stringify(value)}`,
    ]);
  });
});

describe('exit statuses', () => {
  it('are 0 when every MUST check passed, 1 when one failed, 2 when the run could not be done', () => {
    expect(EXIT).toEqual({ ok: 0, failed: 1, unusable: 2 });
  });
});
