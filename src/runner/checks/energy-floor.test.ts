import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange } from '../../../test/support/check-context.js';
import type { ReceivedResponse } from '../observation.js';
import type { Finding } from '../types.js';
import { energyFloorCheck } from './energy-floor.js';

const ok = '{"code":0,"message":"","data":"AQID"}';
const withCount = (count: string): ReceivedResponse =>
  decryptedAnswer(200, ok, `{"energyMaxCount":${count},"chainName":"TRON","symbol":"TRX"}`);
const run = (params: Record<string, unknown>, response: ReceivedResponse | undefined): Finding[] =>
  energyFloorCheck.run(checkContext({ params, outcome: { exchanges: response ? [exchange(response)] : [] } }));

describe('energy-floor: energyMaxCount is floor(balance / costPerTx) of the live balance (ENERGY-FLOOR)', () => {
  it('is registered as energy-floor under ENERGY-FLOOR', () => {
    expect([energyFloorCheck.id, energyFloorCheck.rules]).toEqual(['energy-floor', ['ENERGY-FLOOR']]);
  });

  it.each([
    [
      'the floor of an uneven division',
      { balance: 1000, costPerTx: 300 },
      withCount('3'),
      [{ status: 'passed', message: 'energyMaxCount 3, expected floor(1000 / 300) = 3' }],
    ],
    [
      'the rounded value instead of the floor',
      { balance: 1000, costPerTx: 400 },
      withCount('3'),
      [{ status: 'failed', message: 'energyMaxCount is 3, expected floor(1000 / 400) = 2' }],
    ],
    [
      'an exact division',
      { balance: '900', costPerTx: '300' },
      withCount('3'),
      [{ status: 'passed', message: 'energyMaxCount 3, expected floor(900 / 300) = 3' }],
    ],
    [
      'a balance below the cost',
      { balance: 299, costPerTx: 300 },
      withCount('0'),
      [{ status: 'passed', message: 'energyMaxCount 0, expected floor(299 / 300) = 0' }],
    ],
    [
      'digits beyond a float, exact',
      { balance: '123456789012345678901234567890', costPerTx: 7 },
      withCount('17636684144620811271604938270'),
      [
        {
          status: 'passed',
          message:
            'energyMaxCount 17636684144620811271604938270, expected floor(123456789012345678901234567890 / 7) = 17636684144620811271604938270',
        },
      ],
    ],
    [
      'a count from a float division',
      { balance: '123456789012345678901234567890', costPerTx: 7 },
      withCount('17636684144620812000000000000'),
      [
        {
          status: 'failed',
          message:
            'energyMaxCount is 17636684144620812000000000000, expected floor(123456789012345678901234567890 / 7) = 17636684144620811271604938270',
        },
      ],
    ],
    [
      'either balance a legal reading allows: the first',
      { balance: [1000, 700], costPerTx: 300 },
      withCount('3'),
      [{ status: 'passed', message: 'energyMaxCount 3, expected floor(1000 / 300) = 3 or floor(700 / 300) = 2' }],
    ],
    [
      'either balance a legal reading allows: the second',
      { balance: [1000, 700], costPerTx: 300 },
      withCount('2'),
      [{ status: 'passed', message: 'energyMaxCount 2, expected floor(1000 / 300) = 3 or floor(700 / 300) = 2' }],
    ],
    [
      'neither balance',
      { balance: [1000, 700], costPerTx: 300 },
      withCount('1'),
      [{ status: 'failed', message: 'energyMaxCount is 1, expected floor(1000 / 300) = 3 or floor(700 / 300) = 2' }],
    ],
    [
      'an absent count',
      { balance: 1000, costPerTx: 300 },
      decryptedAnswer(200, ok, '{"chainName":"TRON"}'),
      [{ status: 'failed', message: 'energyMaxCount is undefined, expected floor(1000 / 300) = 3' }],
    ],
    [
      'data that does not decrypt',
      { balance: 1000, costPerTx: 300 },
      answer(200, ok, { decryptError: 'block 1 of 1: no known padding [wrong-key]' }),
      [
        {
          status: 'failed',
          message: "data does not decrypt with the merchant's key: block 1 of 1: no known padding [wrong-key]",
          rules: ['CRYPTO-SAME'],
          cause: 'undecryptable-answer',
        },
      ],
    ],
    [
      'an answer without data',
      { balance: 1000, costPerTx: 300 },
      answer(401, '{"code":"UNAUTHORIZED"}'),
      [{ status: 'failed', message: 'no decrypted result: {"code":"UNAUTHORIZED"}', rules: ['ENERGY-RES'] }],
    ],
    [
      'no request',
      { balance: 1000, costPerTx: 300 },
      undefined,
      [{ status: 'failed', message: 'the step made no request' }],
    ],
  ])('judges %s', (_label, params, response, findings) => {
    expect(run(params, response)).toEqual(findings);
  });

  it('shows at most 160 characters of an answer without data', () => {
    const body = 'b'.repeat(200);
    expect(run({ balance: 1, costPerTx: 1 }, answer(500, body))).toEqual([
      { status: 'failed', message: `no decrypted result: ${'b'.repeat(160)}`, rules: ['ENERGY-RES'] },
    ]);
  });
});
