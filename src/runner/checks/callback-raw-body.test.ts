import { describe, expect, it } from 'vitest';
import { callback, checkContext } from '../../../test/support/check-context.js';
import type { ReceivedCallback } from '../observation.js';
import type { Finding } from '../types.js';
import { callbackRawBodyCheck } from './callback-raw-body.js';

const run = (callbacks: ReceivedCallback[]): Finding[] =>
  callbackRawBodyCheck.run(checkContext({ outcome: { callbacks } }));

describe('callback-raw-body: each callback body is the Base64 text itself (CB-RAW-BODY)', () => {
  it('is registered as callback-raw-body under CB-RAW-BODY', () => {
    expect([callbackRawBodyCheck.id, callbackRawBodyCheck.rules, callbackRawBodyCheck.needs]).toEqual([
      'callback-raw-body',
      ['CB-RAW-BODY'],
      'callbacks',
    ]);
  });

  it.each([
    [
      'raw Base64 bodies',
      [callback('+/+/AQI='), callback('AQID')],
      [{ status: 'passed', message: '2 deliveries, raw Base64 bodies' }],
    ],
    [
      'a form field data=',
      [callback('data=AQID')],
      [
        {
          status: 'failed',
          message: 'delivery 1 sends a form field data=… instead of the raw body: data=AQID',
          rules: ['CB-RAW-BODY'],
          cause: 'undecryptable-callback',
        },
      ],
    ],
    [
      'a percent-encoded second body',
      [callback('AQID'), callback('%2B%2FAQ%3D%3D')],
      [
        {
          status: 'failed',
          message: 'delivery 2 body is not strict Base64 text: %2B%2FAQ%3D%3D',
          rules: ['CB-RAW-BODY'],
          cause: 'undecryptable-callback',
        },
      ],
    ],
    [
      'line breaks',
      [callback('AQID\r\nAQID')],
      [
        {
          status: 'failed',
          message: 'delivery 1 body is not strict Base64 text: AQID\r\nAQID',
          rules: ['CB-RAW-BODY'],
          cause: 'undecryptable-callback',
        },
      ],
    ],
    [
      'an empty body',
      [callback('')],
      [
        {
          status: 'failed',
          message: 'delivery 1 body is not strict Base64 text: ',
          rules: ['CB-RAW-BODY'],
          cause: 'undecryptable-callback',
        },
      ],
    ],
    ['no callback', [], [{ status: 'failed', message: 'no callback arrived at the receiver', cause: 'no-callback' }]],
  ])('judges %s', (_label, callbacks, findings) => {
    expect(run(callbacks)).toEqual(findings);
  });

  it('shows at most 60 characters of a bad body', () => {
    const body = `data=${'A'.repeat(100)}`;
    expect(run([callback(body)])).toEqual([
      {
        status: 'failed',
        message: `delivery 1 sends a form field data=… instead of the raw body: ${body.slice(0, 60)}…`,
        rules: ['CB-RAW-BODY'],
        cause: 'undecryptable-callback',
      },
    ]);
  });
});
