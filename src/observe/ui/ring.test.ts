import { describe, expect, it } from 'vitest';
import { Ring } from './ring.js';

describe('the live page ring', () => {
  it('holds the latest entries up to its capacity, oldest first, and counts what it forgot', () => {
    const ring = new Ring<number, string>(3);
    for (let i = 1; i <= 5; i++) ring.push(i, `e${i}`);
    expect(ring.values()).toEqual(['e3', 'e4', 'e5']);
    expect(ring.size).toBe(3);
    expect(ring.forgotten).toBe(2);
    expect(ring.get(2)).toBeUndefined();
    expect(ring.get(4)).toBe('e4');
  });

  it('forgets the oldest while the weights pass their bound, but never the newest entry', () => {
    const ring = new Ring<number, string>(10, 100);
    ring.push(1, 'a', 40);
    ring.push(2, 'b', 40);
    ring.push(3, 'c', 40);
    expect(ring.values()).toEqual(['b', 'c']);
    expect(ring.weight).toBe(80);
    ring.push(4, 'huge', 500);
    expect(ring.values()).toEqual(['huge']);
    expect(ring.weight).toBe(500);
  });

  it('replaces the entry of a key already held and makes it the newest', () => {
    const ring = new Ring<number, string>(2, 100);
    ring.push(1, 'a', 30);
    ring.push(2, 'b', 30);
    ring.push(1, 'a2', 50);
    expect(ring.values()).toEqual(['b', 'a2']);
    expect(ring.weight).toBe(80);
    expect(ring.forgotten).toBe(0);
  });

  it('stays at its bound over a million entries', () => {
    const ring = new Ring<number, number>(500, 32 * 1024);
    for (let i = 0; i < 1_000_000; i++) ring.push(i, i, 100);
    expect(ring.size).toBe(Math.min(500, Math.floor((32 * 1024) / 100)));
    expect(ring.weight).toBeLessThanOrEqual(32 * 1024);
    expect(ring.values().at(-1)).toBe(999_999);
  });

  it('refuses a capacity below one', () => {
    expect(() => new Ring(0)).toThrow(/at least one entry/);
  });
});
