import { describe, expect, it } from 'vitest';
import { sealJson } from '../../crypto/codec.js';
import { callback, checkContext, testKeys } from '../../../test/support/check-context.js';
import type { ReceivedCallback } from '../observation.js';
import type { Finding } from '../types.js';
import {
  callbackAttemptsCheck,
  callbackRequestUuidCheck,
  callbackSameEventCheck,
  callbackTrackingIdCheck,
} from './callback-identity.js';

const delivery = (requestUUID: string, trackingId: string, answeredStatus = 200): ReceivedCallback =>
  callback(
    sealJson(`{"type":4,"requestUUID":"${requestUUID}","trackingId":"${trackingId}"}`, 'callback', testKeys),
    {},
    answeredStatus,
  );
const untracked = (requestUUID: string): ReceivedCallback =>
  callback(sealJson(`{"type":4,"requestUUID":"${requestUUID}"}`, 'callback', testKeys));
// Sealed with the public key: the merchant's public key cannot open it (another half of the pair).
const wrongHalf = callback(sealJson('{"type":4}', 'request', testKeys.publicKey));
const undecryptable: Finding = {
  status: 'failed',
  message:
    'delivery 2 does not decrypt with the public key: block 1 of 1: no known padding after decryption: the data was encrypted under another key pair, with the other half of this pair, or altered [wrong-key]',
  rules: ['CB-DECRYPT'],
  cause: 'undecryptable-callback',
};
const none: Finding = { status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' };

describe('callback-request-uuid: every delivery, retries included, has a fresh requestUUID (CB-UUID)', () => {
  const run = (callbacks: ReceivedCallback[]): Finding[] =>
    callbackRequestUuidCheck.run(checkContext({ outcome: { callbacks } }));

  it('is registered as callback-request-uuid under CB-UUID', () => {
    expect([callbackRequestUuidCheck.id, callbackRequestUuidCheck.rules]).toEqual([
      'callback-request-uuid',
      ['CB-UUID'],
    ]);
  });

  it.each([
    [
      'three distinct requestUUIDs',
      [delivery('u-1', 't'), delivery('u-2', 't'), delivery('u-3', 't')],
      [{ status: 'passed', message: '3 deliveries, 3 distinct requestUUIDs' }],
    ],
    [
      'a requestUUID reused by the third delivery',
      [delivery('u-1', 't'), delivery('u-2', 't'), delivery('u-1', 't')],
      [{ status: 'failed', message: 'requestUUID u-1 was sent on more than one delivery' }],
    ],
    [
      'one delivery: nothing to compare',
      [delivery('u-1', 't')],
      [{ status: 'skipped', message: 'only 1 delivery arrived; at least two are needed to judge' }],
    ],
    ['a delivery that does not decrypt', [delivery('u-1', 't'), wrongHalf], [undecryptable]],
    ['no callback', [], [none]],
  ])('judges %s', (_label, callbacks, findings) => {
    expect(run(callbacks)).toEqual(findings);
  });
});

describe('callback-tracking-id: every delivery of an event keeps its trackingId (CB-ID-OTHER)', () => {
  const run = (callbacks: ReceivedCallback[]): Finding[] =>
    callbackTrackingIdCheck.run(checkContext({ outcome: { callbacks } }));

  it('is registered as callback-tracking-id under CB-ID-OTHER', () => {
    expect([callbackTrackingIdCheck.id, callbackTrackingIdCheck.rules]).toEqual([
      'callback-tracking-id',
      ['CB-ID-OTHER'],
    ]);
  });

  it.each([
    [
      'one trackingId on every delivery',
      [delivery('u-1', 'dep-7'), delivery('u-2', 'dep-7')],
      [{ status: 'passed', message: '2 deliveries share trackingId dep-7' }],
    ],
    [
      'a single delivery',
      [delivery('u-1', 'dep-7')],
      [{ status: 'passed', message: '1 deliveries share trackingId dep-7' }],
    ],
    [
      'a new trackingId per delivery',
      [delivery('u-1', 'dep-7'), delivery('u-2', 'dep-8'), delivery('u-3', 'dep-7')],
      [{ status: 'failed', message: 'the deliveries of one event carry 2 trackingIds: dep-7, dep-8' }],
    ],
    ['a delivery that does not decrypt', [delivery('u-1', 't'), wrongHalf], [undecryptable]],
    ['no callback', [], [none]],
    [
      'deliveries without any trackingId (the field is the toolkit model, not the interface)',
      [untracked('u-1'), untracked('u-2')],
      [
        {
          status: 'skipped',
          message:
            "the 2 deliveries carry no trackingId (a field of the toolkit's payload model, U-CB-FIELDS): nothing to compare",
        },
      ],
    ],
    [
      'a trackingId on some deliveries only',
      [delivery('u-1', 'dep-7'), untracked('u-2')],
      [{ status: 'failed', message: '1 of 2 deliveries of one event carry no trackingId' }],
    ],
  ])('judges %s', (_label, callbacks, findings) => {
    expect(run(callbacks)).toEqual(findings);
  });
});

describe('callback-attempts: retries until errCode 0 and none after (CB-ERRCODE)', () => {
  const run = (equals: unknown, callbacks: ReceivedCallback[]): Finding[] =>
    callbackAttemptsCheck.run(checkContext({ params: { equals }, outcome: { callbacks } }));

  it('is registered as callback-attempts under CB-ERRCODE', () => {
    expect([callbackAttemptsCheck.id, callbackAttemptsCheck.rules]).toEqual(['callback-attempts', ['CB-ERRCODE']]);
  });

  it.each([
    [
      'the expected number of deliveries',
      3,
      [delivery('u-1', 't', 500), delivery('u-2', 't', 200), delivery('u-3', 't', 200)],
      [{ status: 'passed', message: '3 deliveries (answers HTTP 500, 200, 200)' }],
    ],
    [
      'a retry after the acknowledgement',
      1,
      [delivery('u-1', 't'), delivery('u-2', 't')],
      [{ status: 'failed', message: 'expected 1 deliveries, got 2 (answers HTTP 200, 200)' }],
    ],
    [
      'no retry after a failure',
      2,
      [delivery('u-1', 't', 500)],
      [{ status: 'failed', message: 'expected 2 deliveries, got 1 (answers HTTP 500)' }],
    ],
    [
      'deliveries that cannot be told apart (one does not decrypt)',
      2,
      [delivery('u-1', 't'), wrongHalf],
      [undecryptable],
    ],
    ['no callback', 1, [], [none]],
  ])('judges %s', (_label, equals, callbacks, findings) => {
    expect(run(equals, callbacks)).toEqual(findings);
  });
});

describe('callback-same-event: every delivery of an event carries the same identity fields (CB-ONCE)', () => {
  const deposit = (requestUUID: string, fields: string): ReceivedCallback =>
    callback(
      sealJson(`{"type":1,"requestUUID":"${requestUUID}","trackingId":"dep-7",${fields}}`, 'callback', testKeys),
    );
  const same = '"txid":"ab","chain":"TRON","symbol":"USDT","toAddress":"T1","amount":1.5';
  const run = (callbacks: ReceivedCallback[]): Finding[] =>
    callbackSameEventCheck.run(checkContext({ outcome: { callbacks } }));

  it('is registered as callback-same-event under CB-ONCE', () => {
    expect([callbackSameEventCheck.id, callbackSameEventCheck.rules]).toEqual(['callback-same-event', ['CB-ONCE']]);
  });

  it.each([
    [
      'identical resends (requestUUIDs differ)',
      [deposit('u-1', same), deposit('u-2', same)],
      [{ status: 'passed', message: '2 deliveries carry the same type, txid, chain, symbol, toAddress' }],
    ],
    [
      'the provider spelling on one resend (txId, chainName: the same values)',
      [deposit('u-1', same), deposit('u-2', '"txId":"ab","chainName":"TRON","symbol":"USDT","toAddress":"T1"')],
      [{ status: 'passed', message: '2 deliveries carry the same type, txid, chain, symbol, toAddress' }],
    ],
    [
      'another toAddress on a retry',
      [deposit('u-1', same), deposit('u-2', '"txid":"ab","chain":"TRON","symbol":"USDT","toAddress":"T2"')],
      [{ status: 'failed', message: 'the 2 deliveries of one event differ in toAddress: T1, T2' }],
    ],
    [
      'the symbol in another letter case and a txid missing on a resend',
      [deposit('u-1', same), deposit('u-2', '"chain":"TRON","symbol":"usdt","toAddress":"T1"')],
      [{ status: 'failed', message: 'the 2 deliveries of one event differ in txid: ab, (absent); symbol: USDT, usdt' }],
    ],
    [
      'one delivery: nothing to compare',
      [deposit('u-1', same)],
      [{ status: 'skipped', message: 'only 1 delivery arrived; at least two are needed to judge' }],
    ],
    ['a delivery that does not decrypt', [delivery('u-1', 't'), wrongHalf], [undecryptable]],
    ['no callback', [], [none]],
  ])('judges %s', (_label, callbacks, findings) => {
    expect(run(callbacks)).toEqual(findings);
  });
});
