import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A probe in a process of its own (V8's flags are the process's): one allocation site whose
 * objects all outlive their scavenge, and how many rounds found a new object of it allocated
 * straight into the old generation (pretenured), with and without `keepExchangesYoung`. Single
 * threaded, so no background compilation moves V8's decision from run to run.
 */
function pretenuredRounds(keepYoung: boolean): number {
  const module = fileURLToPath(new URL('./young-heap.ts', import.meta.url));
  const probe = `
    ${keepYoung ? `(await import(${JSON.stringify(module)})).keepExchangesYoung();` : ''}
    function make(i) { return { i, tag: 'x' }; }
    function rounds() {
      const kept = [];
      let old = 0;
      for (let round = 0; round < 200; round++) {
        for (let i = 0; i < 20000; i++) kept.push(make(i));
        if (!%InYoungGeneration(make(-1))) old++;
        if (kept.length > 200000) kept.length = 0;
      }
      return old;
    }
    process.stdout.write(String(rounds()));
  `;
  const dir = mkdtempSync(join(tmpdir(), 'wc-young-'));
  try {
    writeFileSync(join(dir, 'probe.mjs'), probe);
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--single-threaded', '--import', 'tsx', join(dir, 'probe.mjs')],
      {
        encoding: 'utf8',
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      },
    );
    return Number(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("observe keeps each exchange's objects young (decision 0123)", () => {
  it('turns V8 pretenuring off: objects that outlive a scavenge are still allocated young', () => {
    // The control: Node 20's V8 pretenures the probe's site. Node 22's and 24's do not, so this
    // test runs on Node 20 only (not in .ci/runtime-tests.txt).
    expect(pretenuredRounds(false)).toBeGreaterThan(0);
    expect(pretenuredRounds(true)).toBe(0);
  }, 30_000);
});
