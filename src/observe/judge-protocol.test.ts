import { describe, expect, it } from 'vitest';
import { restAfter } from './judge-protocol.js';

describe("the judge's share of a core (--judge-cpu)", () => {
  it('rests three times as long as it judged at a quarter of a core, nine times at a tenth', () => {
    expect(restAfter(0, 10, 110, 0.25)).toBe(140);
    expect(restAfter(0, 10, 110, 0.1)).toBeCloseTo(200, 9);
  });

  it('never rests with the whole core', () => {
    expect(restAfter(500, 10, 110, 1)).toBe(0);
  });

  it('adds to the rest still owed, and counts idle time since as rest taken', () => {
    expect(restAfter(150, 10, 110, 0.5)).toBe(160);
    expect(restAfter(20, 10, 110, 0.5)).toBe(120);
  });

  it('asks for at most two seconds at once, after a very long judgement', () => {
    expect(restAfter(0, 1_000, 1_000, 0.01)).toBe(3_000);
  });
});
