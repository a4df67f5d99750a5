import { fail, isFinding, lastExchange, pass, undecryptable, type Check } from './check.js';

/** A whole number of energy, as a YAML integer or (for digits a float would round) a string of digits. */
type Amount = number | string;

/** `balance` the case set (or each balance a legal reading allows), `costPerTx` per transaction. */
type EnergyFloorParams = { balance: Amount | Amount[]; costPerTx: Amount };

const AMOUNT = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^[0-9]+$' },
  ],
};

/** `energy-floor`: energyMaxCount = floor(balance / costPerTx), with the balance the case set. */
export const energyFloorCheck: Check<EnergyFloorParams> = {
  id: 'energy-floor',
  title: 'energyMaxCount from the live balance',
  rules: ['ENERGY-FLOOR'],
  needs: 'exchange',
  params: {
    type: 'object',
    properties: {
      balance: {
        anyOf: [AMOUNT, { type: 'array', items: AMOUNT, minItems: 1 }],
        description: 'the balance the case set, or every balance a legal reading allows',
      },
      costPerTx: {
        anyOf: [
          { type: 'integer', minimum: 1 },
          { type: 'string', pattern: '^[0-9]*[1-9][0-9]*$' },
        ],
        description: 'the energy cost per transaction the case set',
      },
    },
    required: ['balance', 'costPerTx'],
    additionalProperties: false,
  },
  run(ctx) {
    const exchange = lastExchange(ctx);
    if (isFinding(exchange)) return [exchange];
    const { decrypted, decryptError } = exchange.response!;
    if (decryptError) return [undecryptable(decryptError)];
    if (!decrypted) return [fail(`no decrypted result: ${exchange.response!.body.slice(0, 160)}`, ['ENERGY-RES'])];
    // `balance` may list every balance a legal reading allows (e.g. before and after a lease is debited, U-STATES).
    const balances = (Array.isArray(ctx.params.balance) ? ctx.params.balance : [ctx.params.balance]).map((value) =>
      BigInt(String(value)),
    );
    const cost = BigInt(String(ctx.params.costPerTx));
    const expected = balances.map((balance) => (balance / cost).toString());
    const got = String((decrypted.value as Record<string, unknown>).energyMaxCount);
    const shown = balances.map((balance, i) => `floor(${balance} / ${cost}) = ${expected[i]}`).join(' or ');
    return [
      expected.includes(got)
        ? pass(`energyMaxCount ${got}, expected ${shown}`)
        : fail(`energyMaxCount is ${got}, expected ${shown}`),
    ];
  },
};
