import { describe, expect, it } from 'vitest';
import { BENCH_PAGE, benchPage } from './bench-page.js';

describe('the benchmark page from bench/results.json', () => {
  it('renders one section per bench, sorted, with its command, day, machine and printed lines', () => {
    const page = benchPage({
      benches: {
        runner: {
          measured: '2026-11-28',
          cores: 2,
          loadAverage: 3.14,
          command: 'npm run bench runner',
          lines: ['runner ÷ plain script: 1.22x'],
        },
        crypto: {
          measured: '2026-11-26',
          cores: 2,
          command: 'npm run bench crypto',
          source: 'transcribed',
          lines: ['native ÷ forge: 44x'],
        },
      },
    });
    expect(page.path).toBe(BENCH_PAGE);
    const text = page.contents;
    expect(text.indexOf('## crypto')).toBeLessThan(text.indexOf('## runner'));
    expect(text).toContain(
      '`npm run bench crypto`, 2026-11-26, 2 cores, load average not recorded (transcribed):\n\n```text\nnative ÷ forge: 44x\n```',
    );
    expect(text).toContain('`npm run bench runner`, 2026-11-28, 2 cores, load average 3.1 at the start:');
    expect(text.endsWith('```\n')).toBe(true);
  });
});
