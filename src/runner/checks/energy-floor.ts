import { fail, isFinding, lastExchange, pass, type Check } from './check.js';

/** `energy-floor`: energyMaxCount = floor(balance / costPerTx), with the balance the case set. */
export const energyFloorCheck: Check = {
  id: 'energy-floor',
  title: 'energyMaxCount from the live balance',
  rules: ['ENERGY-FLOOR'],
  needs: 'exchange',
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const decrypted = exchange.response!.decrypted;
    if (!decrypted) return [fail(`no decrypted result${exchange.response!.decryptError ? `: ${exchange.response!.decryptError}` : ''}`)];
    const balance = BigInt(String(ctx.params.balance));
    const cost = BigInt(String(ctx.params.costPerTx));
    const expected = (balance / cost).toString();
    const got = String((decrypted.value as Record<string, unknown>).energyMaxCount);
    return [got === expected ? pass(`energyMaxCount ${got} = floor(${balance} / ${cost})`) : fail(`energyMaxCount is ${got}, expected floor(${balance} / ${cost}) = ${expected}`)];
  },
};
