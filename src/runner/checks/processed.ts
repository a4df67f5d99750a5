import { parseExactJson, stringifyExact } from '../../core/exact-json.js';
import { fail, pass, preview, type Check } from './check.js';

/** `processed`: the probe shows exactly `count` new business processings during the step. */
export const processedCheck: Check = {
  id: 'processed',
  title: 'business processing count (probe)',
  rules: ['CB-ONCE'],
  needs: 'probe',
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: 'no processing probe (--probe-url)' }];
    const expected = Number(ctx.params.count);
    return [processed.length === expected ? pass(`${expected} processing(s)`) : fail(`expected ${expected} processing(s), the probe shows ${processed.length}${processed.length ? `: ${preview(processed.join(' | '), 240)}` : ''}`)];
  },
};

/** `processed-exact`: each new probe entry is the delivered payload, every field and digit intact. */
export const processedExactCheck: Check = {
  id: 'processed-exact',
  title: 'processed payloads are exact (probe)',
  rules: ['CB-RAW-BODY'],
  needs: 'probe',
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: 'no processing probe (--probe-url)' }];
    const delivered = (ctx.outcome.delivered ?? []).map((text) => stringifyExact(parseExactJson(text)));
    for (const entry of processed) {
      if (!delivered.includes(entry)) return [fail(`the probe shows ${preview(entry, 240)}, which is not a payload that was delivered (a field or digit changed)`)];
    }
    return [processed.length > 0 ? pass(`${processed.length} entries match delivered payloads exactly`) : fail('nothing was processed')];
  },
};
