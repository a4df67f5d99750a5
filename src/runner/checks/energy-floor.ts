import { fail, isFinding, lastExchange, pass, undecryptable, type Check } from './check.js';

/** `energy-floor`: energyMaxCount = floor(balance / costPerTx), with the balance the case set. */
export const energyFloorCheck: Check = {
  id: 'energy-floor',
  title: 'energyMaxCount from the live balance',
  rules: ['ENERGY-FLOOR'],
  needs: 'exchange',
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const { decrypted, decryptError } = exchange.response!;
    if (decryptError) return [undecryptable(decryptError)];
    if (!decrypted) return [fail(`no decrypted result: ${exchange.response!.body.slice(0, 160)}`, ['ENERGY-RES'])];
    // `balance` may list every balance a legal reading allows (e.g. before and after a lease is debited, U-STATES).
    const balances = (Array.isArray(ctx.params.balance) ? ctx.params.balance : [ctx.params.balance]).map((value) => BigInt(String(value)));
    const cost = BigInt(String(ctx.params.costPerTx));
    const expected = balances.map((balance) => (balance / cost).toString());
    const got = String((decrypted.value as Record<string, unknown>).energyMaxCount);
    const shown = balances.map((balance, i) => `floor(${balance} / ${cost}) = ${expected[i]}`).join(' or ');
    return [expected.includes(got) ? pass(`energyMaxCount ${got}, expected ${shown}`) : fail(`energyMaxCount is ${got}, expected ${shown}`)];
  },
};
