import { describe, expect, it } from 'vitest';
import { callback, checkContext, serviceTarget } from '../../../test/support/check-context.js';
import type { ReceivedCallback } from '../observation.js';
import type { Finding } from '../types.js';
import { callbackHeadersCheck } from './callback-headers.js';

const form = 'application/x-www-form-urlencoded';
const good = { 'content-type': form, 'x-api-key': serviceTarget.apiKey };
const run = (callbacks: ReceivedCallback[]): Finding[] =>
  callbackHeadersCheck.run(checkContext({ outcome: { callbacks } }));

describe('callback-headers: form Content-Type and the merchant own X-API-KEY (CB-HEADERS, CB-KEY-SAME)', () => {
  it('is registered as callback-headers under CB-HEADERS and CB-KEY-SAME', () => {
    expect([callbackHeadersCheck.id, callbackHeadersCheck.rules]).toEqual([
      'callback-headers',
      ['CB-HEADERS', 'CB-KEY-SAME'],
    ]);
  });

  it.each([
    [
      'both headers on every delivery',
      [callback('AQID', good), callback('AQID', good)],
      [{ status: 'passed', message: '2 deliveries with both headers' }],
    ],
    [
      'a charset parameter and capitals in the media type',
      [callback('AQID', { ...good, 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8' })],
      [{ status: 'passed', message: '1 deliveries with both headers' }],
    ],
    [
      'a JSON Content-Type',
      [callback('AQID', { ...good, 'content-type': 'application/json' })],
      [
        {
          status: 'failed',
          message: 'delivery 1: Content-Type is "application/json", expected application/x-www-form-urlencoded',
          rules: ['CB-HEADERS'],
        },
      ],
    ],
    [
      'no Content-Type on the second delivery',
      [callback('AQID', good), callback('AQID', { 'x-api-key': serviceTarget.apiKey })],
      [
        {
          status: 'failed',
          message: 'delivery 2: Content-Type is null, expected application/x-www-form-urlencoded',
          rules: ['CB-HEADERS'],
        },
      ],
    ],
    [
      'no X-API-KEY',
      [callback('AQID', { 'content-type': form })],
      [{ status: 'failed', message: 'delivery 1: no X-API-KEY header', rules: ['CB-HEADERS', 'AUTH-KEY'] }],
    ],
    [
      'another key (not shown in the message: it is a credential)',
      [callback('AQID', { ...good, 'x-api-key': 'someone-else' })],
      [
        {
          status: 'failed',
          message: "delivery 1: X-API-KEY is not the merchant's own credential",
          rules: ['CB-KEY-SAME', 'AUTH-KEY'],
        },
      ],
    ],
    [
      'an empty key',
      [callback('AQID', { ...good, 'x-api-key': '' })],
      [
        {
          status: 'failed',
          message: "delivery 1: X-API-KEY is not the merchant's own credential",
          rules: ['CB-KEY-SAME', 'AUTH-KEY'],
        },
      ],
    ],
    ['no callback', [], [{ status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' }]],
  ])('judges %s', (_label, callbacks, findings) => {
    expect(run(callbacks)).toEqual(findings);
  });
});
