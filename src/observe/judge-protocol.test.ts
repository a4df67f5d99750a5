import { describe, expect, it } from 'vitest';
import { BusyMeter, restAfter, shareNow } from './judge-protocol.js';

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

describe('the judge steps back while forwarding is busy', () => {
  it('keeps a tenth of its share while the forwarding thread is at least half busy', () => {
    expect(shareNow(0.25, 0.5)).toBeCloseTo(0.025, 9);
    expect(shareNow(0.25, 0.95)).toBeCloseTo(0.025, 9);
    expect(shareNow(0.25, 0.49)).toBe(0.25);
  });

  it('keeps its whole share while the load is unknown (no /proc, or no window yet)', () => {
    expect(shareNow(0.25, undefined)).toBe(0.25);
  });

  it("measures the thread's CPU time over wall time, over windows of at least 250 ms", () => {
    const meter = new BusyMeter();
    expect(meter.sample(0, 1_000)).toBeUndefined();
    expect(meter.sample(100, 1_090)).toBeUndefined();
    expect(meter.sample(300, 1_240)).toBeCloseTo(0.8, 9);
    // Between windows, the last figure; the next window starts where the last one closed.
    expect(meter.sample(400, 1_240)).toBeCloseTo(0.8, 9);
    expect(meter.sample(600, 1_270)).toBeCloseTo(0.1, 9);
  });

  it('forgets the load when the CPU time cannot be read', () => {
    const meter = new BusyMeter();
    meter.sample(0, 0);
    expect(meter.sample(300, 300)).toBe(1);
    expect(meter.sample(400, undefined)).toBeUndefined();
    expect(meter.sample(500, 500)).toBeUndefined();
  });
});
