import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../../core/exact-json.js';
import { NO_PARAMS, fail, pass, preview, type Check } from './check.js';

/** `count`: the processings the probe must show. */
export type ProcessedParams = { count: number };

/** `processed`: the probe shows exactly `count` new business processings during the step. */
export const processedCheck: Check<ProcessedParams> = {
  id: 'processed',
  title: 'business processing count (probe)',
  rules: ['CB-ONCE'],
  needs: 'probe',
  params: {
    type: 'object',
    properties: { count: { type: 'integer', minimum: 0, description: 'the new business processings the probe must show after the step' } },
    required: ['count'],
    additionalProperties: false,
  },
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: 'no processing probe (--probe-url)' }];
    const expected = ctx.params.count;
    return [processed.length === expected ? pass(`${expected} processing(s)`) : fail(`expected ${expected} processing(s), the probe shows ${processed.length}${processed.length ? `: ${preview(processed.join(' | '), 240)}` : ''}`)];
  },
};

/** `processed-exact`: each new probe entry is the delivered payload, every field and digit intact. */
export const processedExactCheck: Check = {
  id: 'processed-exact',
  title: 'processed payloads are exact (probe)',
  rules: ['CB-RAW-BODY'],
  needs: 'probe',
  params: NO_PARAMS,
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: 'no processing probe (--probe-url)' }];
    const delivered = (ctx.outcome.delivered ?? []).map((text) => stringifyExact(parseExactJson(text)));
    for (const entry of processed) {
      if (!delivered.includes(entry)) return [fail(differences(entry, delivered) ?? `the probe shows ${preview(entry, 240)}, which is not a payload that was delivered (a field or digit changed)`)];
    }
    return [processed.length > 0 ? pass(`${processed.length} entries match delivered payloads exactly`) : fail('nothing was processed')];
  },
};

/** The fields of `sent` that `entry` shows otherwise, each with both values. */
function fieldDifferences(sent: Record<string, ExactJson>, entry: Record<string, ExactJson>): string[] {
  const lines: string[] = [];
  for (const [field, value] of Object.entries(sent)) {
    const shown = entry[field];
    const a = stringifyExact(value);
    if (shown === undefined) lines.push(`${field}: sent ${preview(a, 80)}, the probe shows nothing`);
    else if (stringifyExact(shown) !== a) {
      const b = stringifyExact(shown);
      const shownText = shown instanceof LosslessNumber ? shown.value : typeof shown === 'string' ? shown : undefined;
      const float = value instanceof LosslessNumber && shownText !== undefined && Number(value.value) === Number(shownText);
      lines.push(`${field}: sent ${preview(a, 80)}, the probe shows ${preview(b, 80)}${float ? ' (parsed as a binary float?)' : ''}`);
    }
  }
  for (const field of Object.keys(entry)) if (!(field in sent)) lines.push(`${field}: not sent, the probe shows ${preview(stringifyExact(entry[field]!), 80)}`);
  return lines;
}

/**
 * Names each field a probe entry got wrong, with both values: `amount: sent 12345678901234567890.123,
 * the probe shows 12345678901234567000 (parsed as a binary float?)`. The delivered payload compared
 * is the one with the entry's trackingId, else the one of its type that differs least; undefined
 * when there is none to compare with.
 */
export function differences(entryText: string, delivered: string[]): string | undefined {
  const entry = parseExactJson(entryText) as Record<string, ExactJson> | null;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const sent = delivered.map((text) => parseExactJson(text) as Record<string, ExactJson>).filter((payload) => payload && typeof payload === 'object');
  const same = (field: string) => (payload: Record<string, ExactJson>) => entry[field] !== undefined && stringifyExact(payload[field] ?? null) === stringifyExact(entry[field]);
  const candidates = typeof entry.trackingId === 'string' && sent.some(same('trackingId')) ? sent.filter(same('trackingId')) : sent.filter(same('type'));
  const best = candidates.map((payload) => fieldDifferences(payload, entry)).sort((a, b) => a.length - b.length)[0];
  return best?.length ? best.join('; ') : undefined;
}
