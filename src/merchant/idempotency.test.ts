import { describe, expect, it } from 'vitest';
import { parseExactJson } from '../core/exact-json.js';
import { idempotencyKey, type CallbackPayload } from './idempotency.js';

const parse = (text: string) => parseExactJson(text) as CallbackPayload;

describe('idempotencyKey', () => {
  const deposit = {
    type: 1,
    requestUUID: 'r-1',
    trackingId: 't-1',
    txid: 'ab12',
    chain: 'TRON',
    symbol: 'USDT',
    toAddress: 'TQn9',
  };

  it('hashes (txid, chain, symbol, toAddress) for a deposit and ignores requestUUID and trackingId (CB-ID-DEPOSIT, CB-UUID)', () => {
    const key = idempotencyKey(deposit);
    expect(key).toMatch(/^deposit:[0-9a-f]{64}$/);
    expect(idempotencyKey({ ...deposit, requestUUID: 'r-2', trackingId: 't-2', amount: '1' })).toBe(key);
  });

  it('keeps wrapped-contract twins apart: same txid, another toAddress or symbol', () => {
    const keys = [
      deposit,
      { ...deposit, toAddress: 'TJRa' },
      { ...deposit, symbol: 'USDC' },
      { ...deposit, chain: 'ETH' },
    ].map(idempotencyKey);
    expect(new Set(keys).size).toBe(4);
  });

  it('cannot be fooled by moving text across field boundaries', () => {
    const a = idempotencyKey({ ...deposit, txid: 'ab', chain: 'cTRON' });
    const b = idempotencyKey({ ...deposit, txid: 'abc', chain: 'TRON' });
    const c = idempotencyKey({ ...deposit, txid: 'ab","c', chain: 'TRON' });
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it('reads txId and chainName (the provider documentation spelling) as txid and chain: one event, one key (U-CB-FIELDS)', () => {
    const provider = {
      type: 1,
      requestUUID: 'r-3',
      trackingId: 't-1',
      txId: 'ab12',
      chainName: 'TRON',
      symbol: 'USDT',
      toAddress: 'TQn9',
    };
    expect(idempotencyKey(provider)).toBe(idempotencyKey(deposit));
    expect(idempotencyKey({ type: 3, requestUUID: 'r', trackingId: 't', txId: '4e8a0c' })).toBe('withdrawal:4e8a0c');
    expect(idempotencyKey({ ...provider, txId: 'cd34' })).not.toBe(idempotencyKey(deposit));
  });

  it('is the txid for a withdrawal (CB-ID-WITHDRAW)', () => {
    expect(
      idempotencyKey(parse('{"type":3,"requestUUID":"r-9","trackingId":"t","txid":"4e8a0c","callBackId":"cb-1"}')),
    ).toBe('withdrawal:4e8a0c');
  });

  it('combines type, trackingId and callBackId for every other type (CB-ID-OTHER)', () => {
    expect(idempotencyKey(parse('{"type":2,"requestUUID":"r","trackingId":"wrq-1","callBackId":"cb-1"}'))).toBe(
      'event:2:["wrq-1","cb-1"]',
    );
    expect(idempotencyKey({ type: 4, requestUUID: 'r', trackingId: 'adr-1' })).toBe('event:4:["adr-1",null]');
    expect(idempotencyKey({ type: 7, requestUUID: 'r', trackingId: 'adr-1' })).not.toBe(
      idempotencyKey({ type: 6, requestUUID: 'r', trackingId: 'adr-1' }),
    );
  });

  it('refuses a payload that lacks what its key needs', () => {
    expect(() => idempotencyKey({ ...deposit, txid: undefined })).toThrow(/deposit .* needs txid/);
    expect(() => idempotencyKey({ type: 3, trackingId: 't' })).toThrow(/needs txid/);
    expect(() => idempotencyKey({ type: 2, callBackId: 'cb' })).toThrow(/needs trackingId/);
    expect(() => idempotencyKey({ type: '1', txid: 'x' })).toThrow(/no integer type/);
  });
});
