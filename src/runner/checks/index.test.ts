import { describe, expect, it } from 'vitest';
import { answersCheck } from './answers.js';
import { CHECKS, findCheck } from './index.js';
import { processedCheck, processedExactCheck } from './processed.js';

describe('the check registry', () => {
  it('registers each check under a unique id', () => {
    const ids = CHECKS.map((check) => check.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(16);
  });

  it.each(CHECKS.map((check) => [check.id, check] as const))('finds %s by its id', (id, check) => {
    expect(findCheck(id)).toBe(check);
  });

  it('finds the merchant-side checks', () => {
    expect([findCheck('answers'), findCheck('processed'), findCheck('processed-exact')]).toEqual([answersCheck, processedCheck, processedExactCheck]);
  });

  it('finds nothing under an unknown id', () => {
    expect(findCheck('statuz')).toBeUndefined();
    expect(findCheck('')).toBeUndefined();
  });
});
