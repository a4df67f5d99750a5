import { fail, isFinding, lastExchange, pass, preview, type Check } from './check.js';

/** `status`: the HTTP status equals `equals`. */
export const statusCheck: Check = {
  id: 'status',
  title: 'HTTP status',
  rules: ['ENERGY-PATH'],
  needs: 'exchange',
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const expected = Number(ctx.params.equals);
    const got = exchange.response!.status;
    return [got === expected ? pass(`HTTP ${got}`) : fail(`expected HTTP ${expected}, got ${got}: ${preview(exchange.response!.body)}`)];
  },
};
