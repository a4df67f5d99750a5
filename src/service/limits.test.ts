import { describe, expect, it } from 'vitest';
import { nestedDeeperThan } from './limits.js';

describe('nesting limit', () => {
  it('measures depth without recursion, so 100,000 levels cannot overflow the stack', () => {
    expect(nestedDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nestedDeeperThan(deep)).toBe(true);
    expect(nestedDeeperThan('text')).toBe(false);
  });
});
