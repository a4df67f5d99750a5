import { describe, expect, it } from 'vitest';
import { leniencyOf } from './leniency.js';
import type { SentRequest } from './observation.js';
import { GOOD_ORDER, ORDER_URL } from '../../test/support/order-request.js';

const BASE = 'http://127.0.0.1:9/api/v1/api';
const ORDER = ORDER_URL;
const ENERGY = `${BASE}/energy/getEnergyMaxCount`;
const FORM = 'application/x-www-form-urlencoded';
const good = GOOD_ORDER;
const UNPADDED =
  'data is Base64 with missing-padding: the pattern of ENERGY-DATA/ORDER-DATA allows it and common decoders read it (U-CRYPTO)';
const open = (...why: string[]) => `${why.join('; ')}: no rule obliges a service to refuse it`;

/** A request as the runner sent it: a form body with `data`, and the plain JSON it encrypted. */
function sent(url: string, data: string | undefined, plain?: unknown, contentType = FORM): SentRequest {
  return {
    method: 'POST',
    url,
    headers: { 'content-type': contentType },
    body: data === undefined ? 'other=1' : new URLSearchParams({ data }).toString(),
    ...(plain === undefined ? {} : { plain: typeof plain === 'string' ? plain : JSON.stringify(plain) }),
  };
}

describe('leniencyOf: an acceptance no rule forbids, and why', () => {
  it('reads the energy query by its own schema: a number for a string field is a binder coercion (U-CODES)', () => {
    expect(leniencyOf(sent(ENERGY, 'AQID', { symbol: 42, chainName: 'TRON' }))).toEqual({
      rules: ['U-CODES'],
      why: open(
        'symbol 42: a JSON binder reads it as the type the interface names; how a service answers a mistyped field is open (U-CODES)',
      ),
    });
    expect(leniencyOf(sent(ENERGY, 'AQI', { symbol: 'ENERGY', chainName: 'TRON' }))).toEqual({
      rules: ['U-CRYPTO'],
      why: open(UNPADDED),
    });
    // A missing field is no coercion: the service must refuse the query.
    expect(leniencyOf(sent(ENERGY, 'AQI', { symbol: 'ENERGY' }))).toBeUndefined();
  });

  it('coerces only whole numbers written as text, with or without a sign', () => {
    const order = (userId: unknown) => leniencyOf(sent(ORDER, 'AQID', { ...good, userId }));
    expect(order('42')?.rules).toEqual(['U-CODES']);
    expect(order('42')?.why).toMatch(/^userId "42": a JSON binder reads it/);
    expect(order('-42')?.rules).toEqual(['U-CODES']);
    for (const text of ['4.2', '42x', 'x42', '', '--4']) expect(order(text), text).toBeUndefined();
  });

  it('judges the Base64 alone when the plain request is unknown: no plain text, or another endpoint', () => {
    expect(leniencyOf(sent(ORDER, 'AQI'))).toEqual({ rules: ['U-CRYPTO'], why: open(UNPADDED) });
    expect(leniencyOf(sent(ORDER, 'AQID'))).toBeUndefined();
    expect(leniencyOf(sent(`${BASE}/card/close`, 'AQI', 'not JSON'))).toEqual({
      rules: ['U-CRYPTO'],
      why: open(UNPADDED),
    });
  });

  it('finds the endpoint by its last path segment, whatever the query string', () => {
    expect(leniencyOf(sent(`${ORDER}?trace=1`, 'AQID', { ...good, tenantType: '1' }))?.rules).toEqual(['U-CODES']);
    expect(leniencyOf(sent(`${ORDER}?trace=1`, 'AQI', 'not JSON'))).toBeUndefined();
  });

  it('refuses leniency to a plain request that is not a JSON object', () => {
    for (const plain of ['[1]', '7', 'null', '"text"', '{'])
      expect(leniencyOf(sent(ORDER, 'AQI', plain)), plain).toBeUndefined();
  });

  it('has nothing to excuse without a lenient Base64 form in data', () => {
    expect(leniencyOf(sent(ORDER, undefined, good))).toBeUndefined();
    expect(leniencyOf(sent(ORDER, 'AQID', good))).toBeUndefined();
    expect(leniencyOf(sent(ORDER, 'AQ=D', good))).toBeUndefined();
    expect(leniencyOf(sent(ORDER, 'A', good))).toBeUndefined();
  });

  it('reads the Content-Type by its media type: parameters and case do not matter, another type does', () => {
    expect(leniencyOf(sent(ORDER, 'AQI', good, `${FORM}; charset=UTF-8`))?.rules).toEqual(['U-CRYPTO']);
    expect(leniencyOf(sent(ORDER, 'AQI', good, 'Application/X-WWW-Form-Urlencoded'))?.rules).toEqual(['U-CRYPTO']);
    expect(leniencyOf(sent(ORDER, 'AQI', good, 'multipart/form-data'))).toBeUndefined();
    expect(leniencyOf({ ...sent(ORDER, 'AQI', good), headers: {} })).toBeUndefined();
  });
});
