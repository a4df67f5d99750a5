import { fail, isFinding, lastExchange, pass, preview, type Check } from './check.js';

/** `equals`: the HTTP status expected. */
type StatusParams = { equals: number };

/** `status`: the HTTP status equals `equals`. */
export const statusCheck: Check<StatusParams> = {
  id: 'status',
  title: 'HTTP status',
  rules: ['ENERGY-PATH'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: { equals: { type: 'integer', minimum: 100, maximum: 599, description: 'the HTTP status expected' } },
    required: ['equals'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const expected = ctx.params.equals;
    const got = exchange.response!.status;
    return [
      got === expected
        ? pass(`HTTP ${got}`)
        : fail(`expected HTTP ${expected}, got ${got}: ${preview(exchange.response!.body)}`),
    ];
  },
};
