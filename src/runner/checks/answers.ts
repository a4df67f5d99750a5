import { LosslessNumber } from '../../core/exact-json.js';
import { readAcknowledgement } from '../../wire/acknowledgement.js';
import { fail, pass, preview, type Check } from './check.js';

/** `status` of every answer (default 200, any for a refusal); `errCode` zero or nonzero. */
export type AnswersParams = { status?: number; errCode?: 'zero' | 'nonzero' };

/**
 * `answers`: every delivery of the step got HTTP `status` (default 200) and, for 200, `errCode`
 * `zero` (the number 0) or `nonzero` (anything but the number 0).
 */
export const answersCheck: Check<AnswersParams> = {
  id: 'answers',
  title: 'merchant answers',
  rules: ['CB-ERRCODE'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      status: { type: 'integer', minimum: 100, maximum: 599, description: 'the HTTP status of every answer; default 200, any status when errCode is nonzero' },
      errCode: { enum: ['zero', 'nonzero'], description: 'zero: every answer acknowledges (the number 0); nonzero: none does' },
    },
    required: [],
    additionalProperties: false,
  },
  run(ctx) {
    const { errCode } = ctx.params;
    // "Not acknowledged" is any answer but HTTP 200 with errCode 0, so a refusal may use any status.
    const status = ctx.params.status ?? (errCode === 'nonzero' ? undefined : 200);
    const exchanges = ctx.outcome.exchanges;
    if (exchanges.length === 0) return [fail('the step delivered nothing')];
    for (const [i, exchange] of exchanges.entries()) {
      const n = exchanges.length > 1 ? `delivery ${i + 1}/${exchanges.length}: ` : '';
      if (!exchange.response) return [fail(`${n}no answer: ${exchange.error ?? 'unknown'}`)];
      const { response } = exchange;
      if (status !== undefined && response.status !== status) return [fail(`${n}expected HTTP ${status}, got ${response.status}: ${preview(response.body)}`)];
      if (!errCode) continue;
      const code = (response.json as Record<string, unknown> | undefined)?.errCode;
      // design.md: only the number 0 acknowledges; the string "0" does not.
      const isZero = response.status === 200 && code instanceof LosslessNumber && Number(code.value) === 0; // 0, 0.0 and -0 are the number 0
      if (errCode === 'zero') {
        // What acknowledges is src/wire's one reading: the number 0 spelt 0.0, or on another status than 200, is ambiguous (U-CB-RESPONSE).
        const read = readAcknowledgement({ status: response.status, body: response.body, json: response.json });
        if (read.verdict === 'not-acknowledged') return [fail(`${n}expected errCode 0, got ${preview(response.body) || 'an empty body'}`)];
        if (read.verdict === 'ambiguous') return [fail(`${n}${read.reason}: ${preview(response.body)}; the interface leaves the answer's form open (U-CB-RESPONSE)`, ['U-CB-RESPONSE'])];
      }
      if (errCode === 'nonzero' && isZero) return [fail(`${n}answered errCode 0 to a callback it could not have processed: ${preview(response.body)}`)];
    }
    return [pass(`${exchanges.length} answer(s): HTTP ${status ?? 'any'}${errCode ? `, errCode ${errCode}` : ''}; first ${preview(exchanges[0]!.response!.body, 80)}`)];
  },
};
