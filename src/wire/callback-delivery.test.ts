import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LosslessNumber, stringifyExact } from '../core/exact-json.js';
import { DEFAULT_PROFILE } from '../core/profile.js';
import { openBytes } from '../crypto/codec.js';
import { parseKey, publicHalf, type RsaPrivateKey } from '../crypto/keys.js';
import {
  API_KEY_HEADER,
  CALLBACK_CONTENT_TYPE,
  callbackHeaders,
  callbackSealingKey,
  sealCallback,
  spelledHeaders,
  withRequestUUID,
} from './callback-delivery.js';

const pem = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const privateKey = parseKey(pem, { expect: 'private' }) as RsaPrivateKey;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('callbackHeaders (CB-HEADERS, AUTH-KEY)', () => {
  it('sends the form Content-Type and the key, or no key', () => {
    expect(callbackHeaders('ak-1')).toEqual({
      'content-type': 'application/x-www-form-urlencoded',
      'x-api-key': 'ak-1',
    });
    // No key header at all, not one without a value.
    expect(callbackHeaders(undefined)).toStrictEqual({ 'content-type': CALLBACK_CONTENT_TYPE });
  });
  it('names the key header on the wire as the interface spells it, or as asked', () => {
    expect(spelledHeaders(callbackHeaders('ak-1'))).toEqual({
      'content-type': CALLBACK_CONTENT_TYPE,
      [API_KEY_HEADER]: 'ak-1',
    });
    expect(Object.keys(spelledHeaders(callbackHeaders('ak-1')))).toContain('X-API-KEY');
    expect(spelledHeaders({ 'X-Api-Key': 'ak-1' }, 'x-api-key')).toEqual({ 'x-api-key': 'ak-1' });
    expect(spelledHeaders(callbackHeaders(undefined))).toEqual({ 'content-type': CALLBACK_CONTENT_TYPE });
  });
});

describe('withRequestUUID (CB-UUID)', () => {
  it('gives every delivery a fresh requestUUID without touching the event', () => {
    const event = {
      type: new LosslessNumber('1'),
      trackingId: 't-1',
      amount: new LosslessNumber('12345678901234567890.123'),
    };
    const first = withRequestUUID(event);
    const second = withRequestUUID(event);
    expect(first.requestUUID).toMatch(UUID);
    expect(second.requestUUID).not.toBe(first.requestUUID);
    expect(event).not.toHaveProperty('requestUUID');
    expect(stringifyExact(first)).toBe(
      `{"type":1,"requestUUID":"${first.requestUUID}","trackingId":"t-1","amount":12345678901234567890.123}`,
    );
  });

  it('replaces an existing requestUUID where it stands, follows type wherever it is, leads without one', () => {
    expect(
      Object.keys(withRequestUUID({ trackingId: 't', requestUUID: '', type: new LosslessNumber('1') }, 'u-2')),
    ).toEqual(['trackingId', 'requestUUID', 'type']);
    expect(withRequestUUID({ trackingId: 't', requestUUID: 'old' }, 'u-2').requestUUID).toBe('u-2');
    expect(Object.keys(withRequestUUID({ trackingId: 't' }, 'u-3'))).toEqual(['requestUUID', 'trackingId']);
    expect(
      Object.keys(
        withRequestUUID({ trackingId: 't', type: new LosslessNumber('2'), amount: new LosslessNumber('1') }, 'u-4'),
      ),
    ).toEqual(['trackingId', 'type', 'requestUUID', 'amount']);
  });
});

describe('sealCallback (CB-DECRYPT, CB-RAW-BODY)', () => {
  it('encrypts with the private key under the default profile; the public key opens the Base64 body', () => {
    const body = sealCallback(
      { type: new LosslessNumber('1'), requestUUID: 'u', amount: new LosslessNumber('0.10') },
      privateKey,
    );
    expect(body).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(openBytes(body, 'callback', publicHalf(privateKey)).toString('utf8')).toBe(
      '{"type":1,"requestUUID":"u","amount":0.10}',
    );
  });

  it('takes a JSON text or raw bytes as they are', () => {
    expect(openBytes(sealCallback('{"a":1.0}', privateKey), 'callback', publicHalf(privateKey)).toString('utf8')).toBe(
      '{"a":1.0}',
    );
    const bytes = Buffer.from([0xff, 0xfe, 0x41]);
    expect(openBytes(sealCallback(bytes, privateKey), 'callback', publicHalf(privateKey))).toEqual(bytes);
  });

  it('uses the half the profile names: the public half of the private key when callbacks are encrypted with the public key', () => {
    const profile = { ...DEFAULT_PROFILE, callback: 'public' as const, padding: 'oaep-sha256' as const };
    expect(callbackSealingKey(privateKey, profile).half).toBe('public');
    expect(callbackSealingKey(privateKey).half).toBe('private');
    const body = sealCallback('{"x":1}', privateKey, profile);
    expect(openBytes(body, 'callback', privateKey, { profile }).toString('utf8')).toBe('{"x":1}');
  });

  it('refuses a public key where the profile needs the private half', () => {
    expect(() => sealCallback('{}', publicHalf(privateKey))).toThrow(/wrong|private key/);
  });
});
