import { describe, expect, it } from 'vitest';
import { Tally } from './tally.js';

/** The tally's memory is bounded by construction: individual results per check and status, reasons per check and status. */
describe('Tally', () => {
  it('keeps at most the limit of results and of reasons per check, however many judgements', () => {
    const tally = new Tally(new Map(), false, 5);
    for (let seq = 1; seq <= 100_000; seq++) {
      tally.add({
        check: 'c',
        title: 'a check',
        labels: [],
        side: 'service',
        finding: { status: 'failed', message: `bad ${seq}` },
        seq,
      });
      // A reason naming its event, as a forgotten event's does: one reason per judgement.
      tally.add({
        check: 's',
        title: 'a skip',
        labels: [],
        side: 'service',
        finding: { status: 'skipped', message: `event ${seq} was forgotten` },
        seq,
      });
      tally.add({
        check: 'p',
        title: 'a pass',
        labels: [],
        side: 'service',
        finding: { status: 'passed', message: '' },
        seq,
      });
    }
    tally.unjudged('shed: the queue was full', 7);
    const results = tally.results();
    // 5 failures of their own and one for the rest; 20 reasons and one for the rest; one pass.
    expect(results.filter((result) => result.id.includes('/c'))).toHaveLength(6);
    expect(results.filter((result) => result.id.includes('/s/'))).toHaveLength(21);
    expect(results.filter((result) => result.id.endsWith('/p'))).toHaveLength(1);
    const notJudged = tally.notJudged();
    expect(notJudged.reduce((n, group) => n + (group.unit === 'judgement' ? group.count : 0), 0)).toBe(100_000);
    expect(notJudged.at(-1)).toEqual({ reason: 'shed: the queue was full', count: 7, unit: 'exchange' });
    expect(notJudged.find((group) => group.reason.includes('more reasons than the first 20'))?.count).toBe(
      100_000 - 20,
    );
  });
});
