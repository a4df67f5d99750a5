import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../../core/exact-json.js';
import type { Finding } from '../types.js';
import { NO_PARAMS, NO_PROBE, fail, pass, preview, type Check } from './check.js';

/** `count`: the processings the probe must show. */
type ProcessedParams = { count: number };

/** `processed`: the probe shows exactly `count` new business processings during the step. */
export const processedCheck: Check<ProcessedParams> = {
  id: 'processed',
  title: 'business processing count (probe)',
  rules: ['CB-ONCE'],
  needs: 'probe',
  params: {
    type: 'object',
    properties: {
      count: {
        type: 'integer',
        minimum: 0,
        description: 'the new business processings the probe must show after the step',
      },
    },
    required: ['count'],
    additionalProperties: false,
  },
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: NO_PROBE }];
    const expected = ctx.params.count;
    return [
      processed.length === expected
        ? pass(`${expected} processing(s)`)
        : fail(
            `expected ${expected} processing(s), the probe shows ${processed.length}${processed.length ? `: ${preview(processed.join(' | '), 240)}` : ''}`,
          ),
    ];
  },
};

/**
 * `processed-exact`: each new probe entry is the delivered payload, every field and digit intact.
 * Each finding names the rule of the field it compares: an `amount` is a BigDecimal (ORDER-FIELDS);
 * digits a binary float lost from an amount sent as a JSON number are a U-CB-FIELDS reading (the
 * interface leaves number vs decimal string open), so that finding warns; any other field is the
 * payload as read and decrypted (the expectation's rules: CB-RAW-BODY, CB-DECRYPT). The same value
 * written otherwise (`"1.10"` booked as `1.1`) is no difference: no rule fixes an amount's scale.
 */
export const processedExactCheck: Check = {
  id: 'processed-exact',
  title: 'processed payloads are exact (probe)',
  rules: ['CB-RAW-BODY'],
  needs: 'probe',
  params: NO_PARAMS,
  run(ctx) {
    const processed = ctx.outcome.processed;
    if (!processed) return [{ status: 'skipped', message: NO_PROBE }];
    const delivered = (ctx.outcome.delivered ?? []).map((text) => stringifyExact(parseExactJson(text)));
    const findings: Finding[] = [];
    const notes = new Set<string>();
    for (const entry of processed) {
      if (delivered.includes(entry)) continue;
      const compared = compareEntry(entry, delivered);
      if (!compared) {
        findings.push(
          fail(
            `the probe shows ${preview(entry, 240)}, which is not a payload that was delivered (a field or digit changed)`,
          ),
        );
        continue;
      }
      for (const note of compared.notes) notes.add(note);
      if (compared.differences.length)
        findings.push(fail(compared.differences.map((d) => d.line).join('; '), ruleOf(compared.differences)));
    }
    // The worst first: a difference under the expectation's rules or ORDER-FIELDS before a U-CB-FIELDS reading.
    const weight = (f: Finding) => (f.rules?.includes('U-CB-FIELDS') ? 1 : 0);
    if (findings.length) return [...findings].sort((a, b) => weight(a) - weight(b));
    const note = notes.size ? `; ${[...notes].join('; ')}` : '';
    return [
      processed.length > 0
        ? pass(`${processed.length} entries match delivered payloads exactly${note}`)
        : fail('nothing was processed'),
    ];
  },
};

/** One field a probe entry shows otherwise than it was sent, and the rule that field falls under (none: the expectation's). */
interface Difference {
  line: string;
  rule?: 'ORDER-FIELDS' | 'U-CB-FIELDS';
}

/** The rules of a finding over several differences: the expectation's if any field is not an amount, else ORDER-FIELDS over U-CB-FIELDS. */
function ruleOf(differences: Difference[]): string[] | undefined {
  if (differences.some((d) => !d.rule)) return undefined;
  return differences.some((d) => d.rule === 'ORDER-FIELDS') ? ['ORDER-FIELDS'] : ['U-CB-FIELDS'];
}

/** The BigDecimal fields of a callback (the spec's `Decimal`, ORDER-FIELDS). */
const DECIMAL_FIELDS = new Set(['amount']);

/** The exact value of a decimal text (`1.10`, `1.1e0` and `11E-1` give one value), undefined when it is none. */
export function decimalValue(text: string): string | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match || (match[2] === '' && !match[3])) return undefined;
  const fraction = match[3] ?? '';
  let digits = `${match[2]}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = BigInt(match[4] ?? '0') - BigInt(fraction.length);
  const kept = digits.replace(/0+$/, '');
  exponent += BigInt(digits.length - kept.length);
  digits = kept;
  return `${match[1] === '-' ? '-' : ''}${digits}e${exponent}`;
}

/** The text of a JSON number or string, undefined for anything else. */
function textOf(value: ExactJson | undefined): string | undefined {
  return value instanceof LosslessNumber ? value.value : typeof value === 'string' ? value : undefined;
}

/** An amount shown otherwise than sent: the same value written otherwise is a note, not a difference. */
function amountDifference(
  field: string,
  value: ExactJson,
  shown: ExactJson | undefined,
): Difference | { note: string } {
  const a = stringifyExact(value);
  const sentText = textOf(value);
  const shownText = textOf(shown);
  const sentValue = sentText === undefined ? undefined : decimalValue(sentText);
  if (sentValue !== undefined && shownText !== undefined && decimalValue(shownText) === sentValue) {
    return {
      note: `${field} ${a} booked as ${stringifyExact(shown!)} (the same value; no rule fixes its scale or form)`,
    };
  }
  const b = shown === undefined ? undefined : stringifyExact(shown);
  const float = sentText !== undefined && shownText !== undefined && Number(sentText) === Number(shownText);
  if (float && value instanceof LosslessNumber) {
    return {
      line: `${field} ${preview(a, 80)} sent as a JSON number was booked as ${preview(b!, 80)}: a JSON number amount loses digits in this receiver; the interface leaves number vs string open (U-CB-FIELDS)`,
      rule: 'U-CB-FIELDS',
    };
  }
  if (float) {
    return {
      line: `${field} ${preview(a, 80)} sent as a decimal string was booked as ${preview(b!, 80)}: digits lost, as through a binary float (ORDER-FIELDS: an amount is a BigDecimal, never rounded through a binary float)`,
      rule: 'ORDER-FIELDS',
    };
  }
  return {
    line: `${field}: sent ${preview(a, 80)}, the probe shows ${b === undefined ? 'nothing' : preview(b, 80)} (ORDER-FIELDS: an amount is a BigDecimal, kept exactly)`,
    rule: 'ORDER-FIELDS',
  };
}

/** The fields of `sent` that `entry` shows otherwise, each with both values, and notes on amounts written otherwise. */
function fieldDifferences(
  sent: Record<string, ExactJson>,
  entry: Record<string, ExactJson>,
): { differences: Difference[]; notes: string[] } {
  const differences: Difference[] = [];
  const notes: string[] = [];
  for (const [field, value] of Object.entries(sent)) {
    const shown = entry[field];
    const a = stringifyExact(value);
    if (shown !== undefined && stringifyExact(shown) === a) continue;
    if (DECIMAL_FIELDS.has(field)) {
      const judged = amountDifference(field, value, shown);
      if ('note' in judged) notes.push(judged.note);
      else differences.push(judged);
    } else if (shown === undefined)
      differences.push({ line: `${field}: sent ${preview(a, 80)}, the probe shows nothing` });
    else
      differences.push({
        line: `${field}: sent ${preview(a, 80)}, the probe shows ${preview(stringifyExact(shown), 80)}`,
      });
  }
  for (const field of Object.keys(entry))
    if (!(field in sent))
      differences.push({ line: `${field}: not sent, the probe shows ${preview(stringifyExact(entry[field]!), 80)}` });
  return { differences, notes };
}

/**
 * Compares a probe entry with the delivered payloads: the one with the entry's trackingId, else the
 * one of its type that differs least. Names each field the entry got wrong, with both values and the
 * field's rule (`amount 12345678901234567890.123 sent as a JSON number was booked as
 * 12345678901234567000: …`); undefined when there is no payload to compare with.
 */
function compareEntry(
  entryText: string,
  delivered: string[],
): { differences: Difference[]; notes: string[] } | undefined {
  const entry = parseExactJson(entryText) as Record<string, ExactJson> | null;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const sent = delivered
    .map((text) => parseExactJson(text) as Record<string, ExactJson>)
    .filter((payload) => payload && typeof payload === 'object' && !Array.isArray(payload));
  const same = (field: string) => (payload: Record<string, ExactJson>) =>
    entry[field] !== undefined && stringifyExact(payload[field] ?? null) === stringifyExact(entry[field]);
  const candidates =
    typeof entry.trackingId === 'string' && sent.some(same('trackingId'))
      ? sent.filter(same('trackingId'))
      : sent.filter(same('type'));
  return candidates
    .map((payload) => fieldDifferences(payload, entry))
    .sort((a, b) => a.differences.length - b.differences.length)[0];
}
