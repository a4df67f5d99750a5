import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../../core/exact-json.js';
import { sealJson } from '../../crypto/codec.js';
import { callback, checkContext, testKeys } from '../../../test/support/check-context.js';
import type { ReceivedCallback } from '../observation.js';
import type { Step } from '../suite.js';
import type { Finding } from '../types.js';
import { callbackDecryptsCheck, withInterfaceNames } from './callback-decrypts.js';

const sealed = (text: string): ReceivedCallback => callback(sealJson(text, 'callback', testKeys));
const address =
  '{"type":4,"requestUUID":"u-1","trackingId":"t-1","chainName":"TRON","txId":"ab","amount":12345678901234567000}';
const run = (texts: (string | ReceivedCallback)[], params: Record<string, unknown> = {}, step: Step = {}): Finding[] =>
  callbackDecryptsCheck.run(
    checkContext({
      params,
      step,
      outcome: { callbacks: texts.map((text) => (typeof text === 'string' ? sealed(text) : text)) },
    }),
  );
const passed = (count: number): Finding[] => [
  { status: 'passed', message: `${count} deliveries decrypt to valid payloads` },
];

describe('callback-decrypts: each callback opens with the merchant public key to a payload of the emitted event (CB-DECRYPT)', () => {
  it.each([
    ['one valid payload', [address], {}, {}, passed(1)],
    ['two valid payloads', [address, address], {}, {}, passed(2)],
    [
      'a second delivery sealed with the public key',
      [address, callback(sealJson(address, 'request', testKeys.publicKey))],
      {},
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 2 does not decrypt with the public key: block 1 of 1: no known padding after decryption: the data was encrypted under another key pair, with the other half of this pair, or altered [wrong-key]',
          rules: ['CB-DECRYPT'],
          cause: 'undecryptable-callback',
        },
      ],
    ],
    [
      'a payload without requestUUID (a field the interface names)',
      ['{"type":4,"trackingId":"t"}'],
      {},
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 1 payload {"type":4,"trackingId":"t"}: (root) must have required property \'requestUUID\' [CB-UUID]; (root) must have required property \'requestUUID\' [CB-UUID]',
          rules: ['CB-UUID'],
        },
      ],
    ],
    [
      'a type the interface does not know',
      ['{"type":9,"requestUUID":"u","trackingId":"t"}'],
      {},
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 1 payload {"type":9,"requestUUID":"u","trackingId":"t"}: /type must be equal to one of the allowed values [CB-ID-OTHER]',
          rules: ['CB-ID-OTHER'],
        },
      ],
    ],
    [
      'a field of the toolkit model typed otherwise: an open point (U-CB-FIELDS), once for the step',
      [
        '{"type":4,"requestUUID":"u-1","trackingId":"t","tenantUserId":5}',
        '{"type":4,"requestUUID":"u-2","trackingId":"t","tenantUserId":6}',
      ],
      {},
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 1 payload {"type":4,"requestUUID":"u-1","trackingId":"t","tenantUserId":5} differs from the toolkit\'s payload model (fields the interface does not name): /tenantUserId must be string [CB-UUID]; /tenantUserId must be string [CB-UUID]',
          rules: ['U-CB-FIELDS'],
        },
      ],
    ],
    [
      'a field of the toolkit model typed otherwise when the case compares fields',
      ['{"type":4,"requestUUID":"u-1","trackingId":"t","tenantUserId":5}'],
      { fields: { trackingId: 't' } },
      {},
      passed(1),
    ],
    [
      'an open point in one delivery and a broken named field in the next',
      ['{"type":4,"requestUUID":"u-1","trackingId":"t","tenantUserId":5}', '{"type":4,"trackingId":"t"}'],
      {},
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 2 payload {"type":4,"trackingId":"t"}: (root) must have required property \'requestUUID\' [CB-UUID]; (root) must have required property \'requestUUID\' [CB-UUID]',
          rules: ['CB-UUID'],
        },
      ],
    ],
    [
      'another type than the event emitted',
      [address],
      {},
      { emit: { type: 3 } },
      [{ status: 'failed', message: 'delivery 1 has type 4, the event emitted was type 3' }],
    ],
    ['the type emitted', [address], {}, { emit: { type: 4 } }, passed(1)],
    [
      'each field compared as sent, in either spelling',
      [address],
      { fields: { txid: 'ab', chainName: 'TRON', trackingId: 't-1' } },
      {},
      passed(1),
    ],
    [
      'a field the payload lacks',
      [address],
      { fields: { callBackId: 'cb-1' } },
      {},
      [{ status: 'failed', message: 'delivery 1: callBackId is absent, expected cb-1 exactly' }],
    ],
    [
      'another value',
      [address],
      { fields: { txId: 'cd' } },
      {},
      [{ status: 'failed', message: 'delivery 1: txId is ab, expected cd exactly' }],
    ],
    [
      'another number',
      [address],
      { fields: { amount: new LosslessNumber('7') } },
      {},
      [{ status: 'failed', message: 'delivery 1: amount is 12345678901234567000, expected 7 exactly' }],
    ],
    [
      'an amount a float rounded',
      [address],
      { fields: { amount: '12345678901234567890.123' } },
      {},
      [
        {
          status: 'failed',
          message:
            'delivery 1: amount is 12345678901234567000, expected 12345678901234567890.123 exactly (the digits were rounded: parsed as a binary float?)',
        },
      ],
    ],
    [
      'a number equal to the decimal string expected',
      [address],
      { fields: { amount: '12345678901234567000' } },
      {},
      passed(1),
    ],
    [
      'a decimal string equal to the number expected',
      ['{"type":4,"requestUUID":"u","trackingId":"t","amount":"0.10"}'],
      { fields: { amount: new LosslessNumber('0.10') } },
      {},
      passed(1),
    ],
    [
      'a plain number expected',
      ['{"type":4,"requestUUID":"u","trackingId":"t","business":0}'],
      { fields: { business: 0 } },
      {},
      passed(1),
    ],
    [
      'a structured value expected',
      ['{"type":4,"requestUUID":"u","trackingId":"t","meta":{"a":"x"}}'],
      { fields: { meta: { a: 'x' } } },
      {},
      passed(1),
    ],
    [
      'another structured value',
      ['{"type":4,"requestUUID":"u","trackingId":"t","meta":{"a":"x"}}'],
      { fields: { meta: { a: 'y' } } },
      {},
      [{ status: 'failed', message: 'delivery 1: meta is {"a":"x"}, expected {"a":"y"} exactly' }],
    ],
    [
      'no callback',
      [],
      {},
      {},
      [{ status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' }],
    ],
  ])('judges %s', (_label, texts, params, step, findings) => {
    expect(run(texts, params, step)).toEqual(findings);
  });

  it('cuts a long payload at 160 characters', () => {
    const text = `{"type":4,"trackingId":"t","memo":"${'m'.repeat(200)}"}`;
    expect(run([text])).toEqual([
      {
        status: 'failed',
        message: `delivery 1 payload ${text.slice(0, 160)}…: (root) must have required property 'requestUUID' [CB-UUID]; (root) must have required property 'requestUUID' [CB-UUID]`,
        rules: ['CB-UUID'],
      },
    ]);
  });
});

describe('withInterfaceNames: the payload under the interface names (U-CB-FIELDS)', () => {
  it.each([
    ['txId and chainName', { txId: 'ab', chainName: 'TRON', type: '1' }, { txid: 'ab', chain: 'TRON', type: '1' }],
    ['the interface spellings', { txid: 'ab', chain: 'TRON' }, { txid: 'ab', chain: 'TRON' }],
    ['both spellings: the interface one wins, the alias stays', { txId: 'cd', txid: 'ab' }, { txid: 'ab', txId: 'cd' }],
    ['other fields', { amount: '1', trackingId: 't' }, { amount: '1', trackingId: 't' }],
  ])('renames %s', (_label, payload: Record<string, string>, renamed) => {
    expect(withInterfaceNames(payload)).toEqual(renamed);
  });
});
