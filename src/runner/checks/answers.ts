import { parseExactJson, type ExactJson } from '../../core/exact-json.js';
import { readAcknowledgement } from '../../wire/acknowledgement.js';
import type { Finding } from '../types.js';
import type { CheckContext } from '../observation.js';
import { fail, pass, preview, type Check } from './check.js';

/** `status` of every answer (default 200 when no errCode is asked); `errCode` zero or nonzero; `lenient`: the body is a form some decoders read. */
type AnswersParams = { status?: number; errCode?: 'zero' | 'nonzero'; lenient?: boolean };

/**
 * `answers`: every delivery of the step got HTTP `status` and, with `errCode`, the acknowledgement
 * asked for, read as the service reads it (src/wire/acknowledgement.ts, CB-ERRCODE):
 * - `zero`: acknowledged passes; ambiguous (errCode 0 with another HTTP status, or written `0.0`)
 *   warns under U-CB-RESPONSE (a service may count it, a strict one may not); not acknowledged fails.
 * - `nonzero`: fails on an acknowledgement, and on an ambiguous one (a service that counts it loses
 *   the event: a possible false ack); anything not acknowledged passes, whatever its HTTP status.
 * Without `status`, `zero` leaves the status to the acknowledgement reading and `nonzero` takes any.
 * - `lenient` (with `nonzero`): the body is a Base64 form a lenient decoder reads correctly (line
 *   breaks, the URL-safe alphabet, spaces for '+'). Acknowledging it is no false ack when the event
 *   was processed: with the probe, exactly one processing of the event's own trackingId is a
 *   U-CRYPTO warning (no rule obliges the merchant to refuse what its decoder reads), no processing
 *   or another one fails (the event is lost); without the probe an acknowledgement warns (U-CRYPTO).
 */
export const answersCheck: Check<AnswersParams> = {
  id: 'answers',
  title: 'merchant answers',
  rules: ['CB-ERRCODE'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      status: {
        type: 'integer',
        minimum: 100,
        maximum: 599,
        description:
          'the HTTP status of every answer; default 200 without errCode, else the acknowledgement reading decides',
      },
      errCode: {
        enum: ['zero', 'nonzero'],
        description:
          'zero: every answer acknowledges (HTTP 200, the number 0); nonzero: none does, nor may be read as doing so',
      },
      lenient: {
        type: 'boolean',
        description:
          'with errCode nonzero: the body is a Base64 form a lenient decoder reads; an acknowledgement of the event processed once (probe) warns under U-CRYPTO',
      },
    },
    required: [],
    additionalProperties: false,
  },
  run(ctx) {
    const { errCode } = ctx.params;
    // With errCode zero, HTTP 200 is part of what "acknowledged" means: the reading judges it (another status with errCode 0 is ambiguous).
    const status =
      errCode === 'zero' && ctx.params.status === 200
        ? undefined
        : (ctx.params.status ?? (errCode === undefined ? 200 : undefined));
    const exchanges = ctx.outcome.exchanges;
    if (exchanges.length === 0) return [fail('the step delivered nothing')];
    if (ctx.params.lenient && errCode === 'nonzero') return lenientVerdict(ctx);
    let ambiguous: string | undefined;
    for (const [i, exchange] of exchanges.entries()) {
      const n = exchanges.length > 1 ? `delivery ${i + 1}/${exchanges.length}: ` : '';
      if (!exchange.response) return [fail(`${n}no answer: ${exchange.error ?? 'unknown'}`)];
      const { response } = exchange;
      if (status !== undefined && response.status !== status)
        return [fail(`${n}expected HTTP ${status}, got ${response.status}: ${preview(response.body)}`)];
      if (!errCode) continue;
      const ack = readAcknowledgement(response);
      if (errCode === 'zero' && ack.verdict === 'not-acknowledged') {
        if (response.status !== 200)
          return [fail(`${n}expected HTTP 200, got ${response.status}: ${preview(response.body)} (${ack.reason})`)];
        return [fail(`${n}expected errCode 0, got ${preview(response.body) || 'an empty body'} (${ack.reason})`)];
      }
      if (errCode === 'zero' && ack.verdict === 'ambiguous')
        ambiguous ??= `${n}${ack.reason}: ${preview(response.body)}`;
      if (errCode === 'nonzero' && ack.verdict === 'acknowledged')
        return [fail(`${n}answered errCode 0 to a callback it could not have processed: ${preview(response.body)}`)];
      if (errCode === 'nonzero' && ack.verdict === 'ambiguous')
        return [
          fail(
            `${n}answered a possible acknowledgement to a callback it could not have processed (${ack.reason}): ${preview(response.body)}`,
          ),
        ];
    }
    // The merchant may mean an acknowledgement; whether the service counts it is open.
    if (ambiguous)
      return [fail(`errCode 0 in a form the interface leaves open (U-CB-RESPONSE): ${ambiguous}`, ['U-CB-RESPONSE'])];
    return [
      pass(
        `${exchanges.length} answer(s): HTTP ${status ?? (errCode === 'zero' ? 200 : 'any')}${errCode ? `, errCode ${errCode}` : ''}; first ${preview(exchanges[0]!.response!.body, 80)}`,
      ),
    ];
  },
};

/** The trackingId of a payload text, if it has one. */
function trackingIdOf(text: string): string | undefined {
  try {
    const value = parseExactJson(text) as Record<string, ExactJson> | null;
    return value && typeof value === 'object' && !Array.isArray(value) && typeof value.trackingId === 'string'
      ? value.trackingId
      : undefined;
  } catch {
    return undefined;
  }
}

/** `answers` with `lenient`: a body a lenient decoder reads correctly, judged by what the merchant did with it. */
function lenientVerdict(ctx: CheckContext<AnswersParams>): Finding[] {
  const exchanges = ctx.outcome.exchanges;
  const unanswered = exchanges.find((exchange) => !exchange.response);
  if (unanswered) return [fail(`no answer: ${unanswered.error ?? 'unknown'}`)];
  const acks = exchanges.map((exchange) => readAcknowledgement(exchange.response));
  const taken = acks.findIndex((ack) => ack.verdict !== 'not-acknowledged');
  const processed = ctx.outcome.processed;
  if (taken < 0) {
    if (processed && processed.length > 0)
      return [
        fail(
          `refused the body, yet the probe shows ${processed.length} processing(s): ${preview(processed.join(' | '), 240)}`,
        ),
      ];
    return [
      pass(`${exchanges.length} answer(s) refuse the lenient form; first ${preview(exchanges[0]!.response!.body, 80)}`),
    ];
  }
  const answer = `${acks[taken]!.verdict === 'ambiguous' ? `a possible acknowledgement (${acks[taken]!.reason})` : 'errCode 0'}: ${preview(exchanges[taken]!.response!.body)}`;
  if (!processed)
    return [
      fail(
        `answered ${answer} to a Base64 form a lenient decoder reads; no rule obliges it to refuse what its decoder reads, and without a probe it is not known that the event was processed`,
        ['U-CRYPTO'],
      ),
    ];
  const own = new Set((ctx.outcome.delivered ?? []).map(trackingIdOf).filter((id): id is string => id !== undefined));
  if (processed.length === 1 && own.has(trackingIdOf(processed[0]!) ?? '')) {
    return [
      fail(
        `answered ${answer} to a Base64 form a lenient decoder reads, and processed the event once (the probe shows its trackingId): leniency no rule forbids`,
        ['U-CRYPTO'],
      ),
    ];
  }
  return [
    fail(
      `answered ${answer} to a Base64 form it did not process as the event: the probe shows ${processed.length} processing(s)${processed.length ? `: ${preview(processed.join(' | '), 240)}` : ' (the event is lost)'}`,
    ),
  ];
}
