// The control requests the runner sends, byte for byte, and what it records of them: built by the
// generated client (src/generated/control-client.ts), sent through the target's transport.
import { describe, expect, it } from 'vitest';
import { serviceTarget } from '../../test/support/check-context.js';
import { LosslessNumber } from '../core/exact-json.js';
import { fingerprint } from '../secrets/scrub.js';
import { pointCallbacks } from './callback-steps.js';
import { probeCapabilities } from './capabilities.js';
import type { WireRequest } from './http-client.js';
import type { Receiver } from './receiver.js';
import { restoreControlState } from './restore.js';
import { runControl } from './service-steps.js';
import type { ServiceTarget } from './types.js';

/** A target whose transport records each request and answers `status` with `body`. */
function recorded(status = 200, body = '{}'): { target: ServiceTarget; sent: WireRequest[] } {
  const sent: WireRequest[] = [];
  const transport = {
    send: async (request: WireRequest) => (
      sent.push(request),
      { status, headers: {}, body: Buffer.from(body), durationMs: 0 }
    ),
  };
  return {
    sent,
    target: {
      ...serviceTarget,
      baseUrl: 'http://127.0.0.1:4010/wallet/',
      controlToken: 'ct-secret',
      userId: 10086,
      transport,
    },
  };
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json', 'x-control-token': 'ct-secret' };
const shownToken = { 'x-control-token': fingerprint('ct-secret', 'ct') };

describe('control requests', () => {
  it('a control step sets energy with exact numbers and records the request with the token redacted', async () => {
    const { target, sent } = recorded(200, '{"balance":1,"costPerTx":1}');
    const exchange = await runControl(
      { energy: { balance: new LosslessNumber('100000000000000000000000000001') as unknown as number, costPerTx: 3 } },
      target,
    );
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: 'http://127.0.0.1:4010/wallet/__control/merchants/10086/energy',
        headers: JSON_HEADERS,
        body: '{"balance":100000000000000000000000000001,"costPerTx":3}',
      },
    ]);
    expect(exchange).toEqual({
      request: {
        method: 'PUT',
        url: 'http://127.0.0.1:4010/wallet/__control/merchants/10086/energy',
        headers: shownToken,
        body: '{"balance":100000000000000000000000000001,"costPerTx":3}',
      },
      response: { status: 200, headers: {}, body: '{"balance":1,"costPerTx":1}' },
    });
  });

  it('a card setup that the service refuses is an exchange with the answer as its error', async () => {
    const { target, sent } = recorded(404, 'no merchant');
    const exchange = await runControl({ card: { powerCardId: 'pc-1', merchantUserId: 'u-1' } }, target);
    expect(sent.map((request) => [request.method, request.url, request.body])).toEqual([
      [
        'POST',
        'http://127.0.0.1:4010/wallet/__control/merchants/10086/cards',
        '{"powerCardId":"pc-1","merchantUserId":"u-1"}',
      ],
    ]);
    expect(exchange.error).toBe('control API answered 404: no merchant');
  });

  it('points callbacks at the receiver', async () => {
    const { target, sent } = recorded();
    const exchange = await pointCallbacks(target, { url: 'http://127.0.0.1:9400/cb' } as Receiver);
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: 'http://127.0.0.1:4010/wallet/__control/merchants/10086/callback-url',
        headers: JSON_HEADERS,
        body: '{"url":"http://127.0.0.1:9400/cb"}',
      },
    ]);
    expect(exchange.request).toEqual({
      method: 'PUT',
      url: sent[0]!.url,
      headers: shownToken,
      body: '{"url":"http://127.0.0.1:9400/cb"}',
    });
  });

  it('probes each route without changing anything: reads are read, writes get a body that is not JSON', async () => {
    const { target, sent } = recorded(404);
    const capabilities = await probeCapabilities(target);
    expect(
      sent.map(
        (request) =>
          `${request.method} ${request.url.replace('http://127.0.0.1:4010/wallet', '')} ${request.body ?? '-'}`,
      ),
    ).toEqual([
      'GET /__control/merchants/10086/energy -',
      'PUT /__control/merchants/10086/energy {not json',
      'GET /__control/merchants/10086/callback-url -',
      'PUT /__control/merchants/10086/callback-url {not json',
      'POST /__control/merchants/10086/callbacks {not json',
      'POST /__control/merchants/10086/cards {not json',
      'GET /__control/deliveries?trackingId=wc-capability-probe -',
    ]);
    expect(
      Object.values(capabilities.routes).every((route) => !route!.present && route!.detail === 'answered 404'),
    ).toBe(true);
  });

  it('puts back what the run changed, as it was read', async () => {
    const { target, sent } = recorded();
    const notes = await restoreControlState(
      { energy: { balance: new LosslessNumber('640000'), costPerTx: 64000 }, callbackUrl: 'http://127.0.0.1:9/old' },
      new Set(['PUT energy', 'PUT callback-url']),
      target,
    );
    expect(sent.map((request) => request.body)).toEqual([
      '{"balance":640000,"costPerTx":64000}',
      '{"url":"http://127.0.0.1:9/old"}',
    ]);
    expect(notes).toEqual([
      'energy restored to its value before the run',
      'callback URL restored to its value before the run',
    ]);
  });
});
