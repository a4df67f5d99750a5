import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { SoakCheckpoint } from './support/observe-soak.js';

/**
 * Issue 34: memory stays flat under a million exchanges. A synthetic stream of 1,000,000
 * exchanges runs through the judge, its tally and stream, and the metrics (no socket), in a child
 * process with `--expose-gc`, so the heap is measured after a full collection: a count of live
 * bytes, not a timing, and the same on a loaded machine. A small window (16 events) and a small
 * per-check limit (10 results) fill every bounded structure within the first 10,000 exchanges;
 * after that nothing may grow: not the results, not the metrics' series, not the heap beyond 1.2×.
 */
const SOAK = fileURLToPath(new URL('./support/observe-soak.ts', import.meta.url));

describe('observe over a million exchanges', () => {
  it('keeps its memory, its results and its metric series bounded', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', SOAK, '1000000', '16', '10', '10000', '100000', '1000000'],
      { maxBuffer: 1024 * 1024 },
    );
    const [early, middle, end] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Required<SoakCheckpoint>);
    expect([early!.exchanges, middle!.exchanges, end!.exchanges]).toEqual([10_000, 100_000, 1_000_000]);
    // The window turned over many times: events were forgotten, as the bound requires.
    expect(end!.forgotten).toBeGreaterThan(1_900);
    expect(end!.results).toBe(middle!.results);
    expect(end!.series).toBe(early!.series);
    expect(end!.heapUsed).toBeLessThanOrEqual(early!.heapUsed * 1.2);
  }, 240_000);
});
