import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LosslessNumber } from '../../core/exact-json.js';
import { parseSpec } from '../../spec/document.js';
import { packagedSpec } from '../../spec/packaged.js';
import { specModel } from '../../spec/model.js';
import * as client from '../../generated/control-client.js';
import { CONTROL_CLIENT_PATH, generateControlClient, readControlOperations } from './control-client.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A client whose sender records each request and answers with `answer`. */
function recording(answer: { status: number; body: string | Uint8Array } = { status: 200, body: '{}' }) {
  const sent: client.ControlRequest[] = [];
  return {
    sent,
    client: {
      baseUrl: 'http://127.0.0.1:4010/wallet-api/',
      token: 'tok',
      send: async (request: client.ControlRequest) => (sent.push(request), answer),
    },
  };
}

describe('the control-API client generator', () => {
  it('reads every operation tagged control, with its method, path, parameters and token header', () => {
    const views = readControlOperations(specModel(packagedSpec()));
    expect(views.map((view) => `${view.operationId} ${view.method} ${view.path} ${view.tokenHeader}`)).toEqual([
      'controlGetEnergy GET /__control/merchants/{userId}/energy X-Control-Token',
      'controlSetEnergy PUT /__control/merchants/{userId}/energy X-Control-Token',
      'controlGetCallbackUrl GET /__control/merchants/{userId}/callback-url X-Control-Token',
      'controlSetCallbackUrl PUT /__control/merchants/{userId}/callback-url X-Control-Token',
      'controlEmitCallback POST /__control/merchants/{userId}/callbacks X-Control-Token',
      'controlOpenCard POST /__control/merchants/{userId}/cards X-Control-Token',
      'controlListDeliveries GET /__control/deliveries X-Control-Token',
    ]);
    expect(views.find((view) => view.operationId === 'controlListDeliveries')?.query).toEqual([
      { name: 'trackingId', required: true },
    ]);
  });

  it('writes the committed src/generated/control-client.ts', () => {
    const [file] = generateControlClient(packagedSpec());
    expect(file!.path).toBe(CONTROL_CLIENT_PATH);
    expect(
      readFileSync(`${ROOT}${CONTROL_CLIENT_PATH}`, 'utf8') === file!.contents,
      'stale: run npm run generate',
    ).toBe(true);
  });

  it('refuses a control operation without an operationId, naming it', () => {
    const text = readFileSync(`${ROOT}spec/wallet-api.yaml`, 'utf8').replace(
      '      operationId: controlOpenCard\n',
      '',
    );
    expect(() => generateControlClient(parseSpec(text))).toThrow(
      /POST \/__control\/merchants\/\{userId\}\/cards: a control operation needs an operationId/,
    );
  });
  it("declares a component once, by its name, with its own description (not a $ref site's)", () => {
    const text = readFileSync(`${ROOT}spec/wallet-api.yaml`, 'utf8').replace(
      "          items:\n            $ref: '#/components/schemas/ControlDeliveryAttempt'\n",
      "          items:\n            $ref: '#/components/schemas/ControlDeliveryAttempt'\n            description: One attempt, as listed.\n",
    );
    expect(text).toContain('One attempt, as listed.');
    const contents = generateControlClient(parseSpec(text))[0]!.contents;
    expect(contents).not.toContain('One attempt, as listed.');
    expect(contents.match(/export interface ControlDeliveryAttempt \{/g)).toHaveLength(1);
    expect(contents).toContain('export interface ControlDeliveries {\n  attempts: Array<ControlDeliveryAttempt>;\n}');
  });
});

describe('the generated control-API client', () => {
  it('builds a write: method, URL under the base, JSON headers and token, exact numbers in the body', async () => {
    const { sent, client: c } = recording({
      status: 200,
      body: '{"balance":100000000000000000000000000001,"costPerTx":3}',
    });
    const answer = await client.controlSetEnergy(
      c,
      { userId: 10086 },
      { balance: new LosslessNumber('100000000000000000000000000001'), costPerTx: 3 },
    );
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: 'http://127.0.0.1:4010/wallet-api/__control/merchants/10086/energy',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-control-token': 'tok' },
        body: '{"balance":100000000000000000000000000001,"costPerTx":3}',
      },
    ]);
    expect(answer.status).toBe(200);
    expect(String((answer.json as { balance: LosslessNumber }).balance)).toBe('100000000000000000000000000001');
    expect(answer.request).toBe(sent[0]);
  });

  it('builds a read without a body or Content-Type, and encodes path and query parameters', async () => {
    const { sent, client: c } = recording({ status: 200, body: new TextEncoder().encode('{"attempts":[]}') });
    await client.controlGetEnergy(c, { userId: 'a/b c' });
    const answer = await client.controlListDeliveries(c, { trackingId: 'dep 1&x=2' });
    expect(sent.map((request) => [request.method, request.url, request.headers, request.body])).toEqual([
      [
        'GET',
        'http://127.0.0.1:4010/wallet-api/__control/merchants/a%2Fb%20c/energy',
        { accept: 'application/json', 'x-control-token': 'tok' },
        undefined,
      ],
      [
        'GET',
        'http://127.0.0.1:4010/wallet-api/__control/deliveries?trackingId=dep%201%26x%3D2',
        { accept: 'application/json', 'x-control-token': 'tok' },
        undefined,
      ],
    ]);
    expect(answer.json).toEqual({ attempts: [] });
  });

  it("builds a deliberate probe: the operation's method, URL and headers with a body no typed function writes", () => {
    const { client: c } = recording();
    expect(client.controlProbeRequest(c, 'controlSetEnergy', { userId: 7 }, '{not json')).toEqual({
      method: 'PUT',
      url: 'http://127.0.0.1:4010/wallet-api/__control/merchants/7/energy',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-control-token': 'tok' },
      body: '{not json',
    });
    expect(client.controlProbeRequest(c, 'controlGetEnergy', { userId: 7 })).toEqual(
      client.controlGetEnergyRequest(c, { userId: 7 }),
    );
    expect(() => client.controlProbeRequest(c, 'controlOpenCard', {}, '{not json')).toThrow(
      'controlOpenCard: no value for the path parameter userId',
    );
  });

  it('keeps an answer that is not JSON as text, with no json', async () => {
    const { client: c } = recording({ status: 404, body: 'no such merchant' });
    const answer = await client.controlEmitCallback(c, { userId: 1 }, { type: 1 });
    expect([answer.status, answer.text, answer.json]).toEqual([404, 'no such merchant', undefined]);
  });

  it('passes a sender failure on as a rejection', async () => {
    const failing = {
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      send: () => Promise.reject(new Error('ECONNREFUSED')),
    };
    await expect(
      client.controlOpenCard(failing, { userId: 1 }, { powerCardId: 'p', merchantUserId: 'u' }),
    ).rejects.toThrow('ECONNREFUSED');
  });
});
