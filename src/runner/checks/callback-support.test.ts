import { describe, expect, it } from 'vitest';
import { resolveProfile } from '../../core/profile.js';
import { sealJson } from '../../crypto/codec.js';
import {
  callback,
  checkContext,
  exchange,
  merchantTarget,
  serviceTarget,
  testKeys,
} from '../../../test/support/check-context.js';
import { callbacksOf, openCallback } from './callback-support.js';

const payload = '{"type":1,"amount":12345678901234567890.123,"requestUUID":"u-1"}';

describe('callbacksOf: the deliveries a step collected, or why there are none', () => {
  it('hands back the callbacks and the service that sent them', () => {
    const received = [callback('AQID')];
    expect(callbacksOf(checkContext({ outcome: { callbacks: received } }))).toEqual({
      callbacks: received,
      target: serviceTarget,
    });
  });

  it.each([
    [
      'a callback check on a merchant case',
      checkContext({ target: merchantTarget, outcome: { callbacks: [callback('AQID')] } }),
      { status: 'failed', message: 'suite error: callback checks judge a service' },
    ],
    [
      'a control request that failed',
      checkContext({
        outcome: {
          callbacks: [callback('AQID')],
          exchanges: [exchange(undefined, { error: 'HTTP 404 from /__control/callbacks' })],
        },
      }),
      { status: 'failed', message: 'could not make the service emit: HTTP 404 from /__control/callbacks' },
    ],
    [
      'no callback',
      checkContext({ outcome: { callbacks: [] } }),
      { status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' },
    ],
    [
      'a step that collected no callback list',
      checkContext(),
      { status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' },
    ],
    [
      'an optional wait that saw none',
      checkContext({ outcome: { callbacks: [] }, step: { await: { timeoutMs: 1500, optional: true } } }),
      { status: 'passed', message: 'no callback arrived within 1500 ms; none is required' },
    ],
  ])('explains %s', (_label, ctx, finding) => {
    expect(callbacksOf(ctx)).toEqual(finding);
  });
});

describe('openCallback: a callback body opened with the merchant public key (CB-DECRYPT)', () => {
  it('opens the body to its exact text and exact JSON', () => {
    const opened = openCallback(callback(sealJson(payload, 'callback', testKeys)), serviceTarget);
    expect('text' in opened && opened.text).toBe(payload);
    expect('value' in opened && String(opened.value.amount)).toBe('12345678901234567890.123');
  });

  it('opens with the target profile', () => {
    const profile = resolveProfile({ padding: 'oaep-sha256' });
    const body = sealJson(payload, 'callback', testKeys, { profile });
    expect(openCallback(callback(body), { ...serviceTarget, profile })).toMatchObject({ text: payload });
    expect(openCallback(callback(body), serviceTarget)).toEqual({
      error:
        'block 1 of 2: the block carries OAEP with SHA-256 (profile padding: oaep-sha256), but the profile expects pkcs1 (PKCS#1 v1.5 block type 1, private-key encryption) [padding-mismatch]',
    });
  });

  it.each([
    ['a form field', `data=${sealJson(payload, 'callback', testKeys)}`, 'data-prefix'],
    ['text that is not JSON', sealJson('{"type":', 'callback', testKeys), 'not-json'],
  ])('names the reason %s does not open', (_label, body, reason) => {
    const opened = openCallback(callback(body), serviceTarget);
    expect('error' in opened && opened.error.endsWith(` [${reason}]`)).toBe(true);
  });

  it('reports a failure that is no CryptoError by its message', () => {
    expect(
      openCallback(callback(sealJson(payload, 'callback', testKeys)), {
        ...serviceTarget,
        publicKey: testKeys as never,
      }),
    ).toEqual({
      error:
        'the profile encrypts callback data with the private key, so decrypting it needs the public key; a private key was given',
    });
  });
});
