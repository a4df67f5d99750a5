// The service pipeline alone: fake keys, a fake codec and fake operations, so the order of its
// checks, its wording and its bodies are under test without a transport or RSA.
import { describe, expect, it } from 'vitest';
import { WALLET_ENDPOINTS } from '../generated/msw-handlers.js';
import { CARD_ERROR_CODES, ENVELOPE_CODES } from './codes.js';
import { refuse } from './service-context.js';
import { createPipeline, SERVICE_ENDPOINTS, type PipelineRequest, type PipelineSetup } from './pipeline.js';
import { DEFAULT_POLICIES, type ServicePolicies } from './policies.js';

interface Merchant {
  userId: bigint;
}
const M: Merchant = { userId: 10086n };
const FORM = 'application/x-www-form-urlencoded';

/** A codec whose ciphertext is `enc:` + Base64 of the text (standard alphabet, so the pattern holds). */
const b64 = (text: string) => btoa(text);

function setup(more: Partial<PipelineSetup<Merchant>> = {}, policies: ServicePolicies = DEFAULT_POLICIES) {
  const seen: string[] = [];
  const base: PipelineSetup<Merchant> = {
    keys: {
      check(header, operation) {
        seen.push('key');
        if (header === 'ak') return { ok: true, merchant: M };
        if (header === 'energy-only')
          return operation === 'getEnergyMaxCount'
            ? { ok: true, merchant: M }
            : { ok: false, status: 403, why: 'no permission' };
        return { ok: false, status: 401, why: 'unknown' };
      },
    },
    codec: () => ({
      open(data) {
        try {
          const text = atob(data);
          return text.startsWith('enc:')
            ? { ok: true, text: text.slice(4) }
            : { ok: false, kind: 'decrypt', message: 'not ours [wrong-key]' };
        } catch {
          return { ok: false, kind: 'base64', message: 'not Base64' };
        }
      },
      seal: (json) => `sealed(${json})`,
    }),
    operations: (operation) =>
      ({
        getEnergyMaxCount: () => ({ ok: true, result: { energyMaxCount: 312 } }) as never,
        withdrawWithoutVerify: () => refuse('duplicateCallBackId', 'used before', ['ORDER-CALLBACK-ID']),
        closeCard: (merchant: Merchant | undefined) =>
          merchant
            ? { ...refuse('forbidden', 'other merchant'), merchant: 1n }
            : { ok: true, merchant: 10086n, result: { bizId: 'b', status: 'CLOSED' } },
      })[operation] as never,
    policies: () => policies,
    acceptedBase64: () => new Set(),
    now: () => 0,
    requestId: () => 'req-1',
  };
  return { serve: createPipeline({ ...base, ...more }), seen };
}

const request = (
  apiKey: string | undefined,
  contentType: string | undefined,
  body: string,
  seen?: string[],
): PipelineRequest => ({
  apiKey,
  contentType,
  body: async () => {
    seen?.push('body');
    return body;
  },
});
const data = (plain: string) => `data=${encodeURIComponent(b64(`enc:${plain}`))}`;

describe('the service pipeline', () => {
  it("holds the service's endpoints to the spec's table (media type, encrypted field, key, rules)", () => {
    for (const endpoint of WALLET_ENDPOINTS) {
      const own = SERVICE_ENDPOINTS[endpoint.operationId];
      expect(own, endpoint.operationId).toEqual({
        operation: endpoint.operationId,
        key: endpoint.apiKeyHeader === null ? 'when-sent' : 'required',
        mediaType: endpoint.request.mediaType,
        encrypted: endpoint.request.encrypted
          ? { field: endpoint.request.encrypted.field, pattern: endpoint.request.encrypted.pattern }
          : null,
        rules: { contentType: endpoint.rules.contentType, data: endpoint.rules.data, request: endpoint.rules.request },
      });
    }
  });

  it('judges the key first, before the body is read (ERR-401 whatever the body)', async () => {
    const { serve, seen } = setup();
    const answer = await serve(SERVICE_ENDPOINTS.getEnergyMaxCount, request(undefined, 'text/plain', 'garbage', seen));
    expect([answer?.status, answer?.body, seen]).toEqual([
      401,
      { code: 'UNAUTHORIZED', message: 'unauthorized' },
      ['key'],
    ]);
    expect(
      (await serve(SERVICE_ENDPOINTS.withdrawWithoutVerify, request('energy-only', FORM, data('{}'))))?.status,
    ).toBe(403);
  });

  it.each([
    [
      'a wrong Content-Type',
      'text/plain',
      data('{}'),
      ENVELOPE_CODES.badContentType,
      'Content-Type must be application/x-www-form-urlencoded, not "text/plain" [ENERGY-CT]',
    ],
    ['no data', FORM, 'x=1', ENVELOPE_CODES.missingData, 'form field data is required [ENERGY-DATA]'],
    [
      'data twice',
      FORM,
      'data=a&data=b',
      ENVELOPE_CODES.missingData,
      'form field data appears 2 times; send it once [ENERGY-DATA]',
    ],
    [
      'data off the pattern',
      FORM,
      'data=a-b',
      ENVELOPE_CODES.badBase64,
      'data does not match ^[A-Za-z0-9+/]+={0,2}$: not Base64 [ENERGY-DATA]',
    ],
    [
      'data of another key',
      FORM,
      `data=${encodeURIComponent(b64('xyz'))}`,
      ENVELOPE_CODES.cannotDecrypt,
      'cannot read data: not ours [wrong-key] [ENERGY-DATA]',
    ],
    [
      'plain text that is no JSON',
      FORM,
      data('nope'),
      ENVELOPE_CODES.badJson,
      "the decrypted data is not JSON: JSON value expected but got 'n' at position 0 [ENERGY-DATA]",
    ],
    [
      'JSON that is no object',
      FORM,
      data('[1]'),
      ENVELOPE_CODES.badJson,
      'the decrypted data is JSON but not an object [ENERGY-DATA]',
    ],
    [
      'JSON nested too deep',
      FORM,
      data(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`),
      ENVELOPE_CODES.invalidRequest,
      'the decrypted data is nested deeper than 64 levels [ENERGY-REQ]',
    ],
  ])('refuses %s with one wording, naming the rule', async (_label, type, body, code, message) => {
    const { serve } = setup();
    expect((await serve(SERVICE_ENDPOINTS.getEnergyMaxCount, request('ak', type, body)))?.body).toEqual({
      code,
      message,
    });
  });

  it("names the rules of an operation's refusal it does not name already; HTTP 4xx under refusals: http (U-CODES)", async () => {
    expect(
      (await setup().serve(SERVICE_ENDPOINTS.withdrawWithoutVerify, request('ak', FORM, data('{}'))))?.body,
    ).toEqual({
      code: ENVELOPE_CODES.duplicateCallBackId,
      message: 'used before [ORDER-CALLBACK-ID]',
    });
    const http = await setup({}, { ...DEFAULT_POLICIES, refusals: 'http' }).serve(
      SERVICE_ENDPOINTS.withdrawWithoutVerify,
      request('ak', FORM, data('{}')),
    );
    expect([http?.status, http?.body]).toEqual([
      409,
      { code: String(ENVELOPE_CODES.duplicateCallBackId), message: 'used before [ORDER-CALLBACK-ID]' },
    ]);
  });

  it('seals a result into the success envelope and reports its text', async () => {
    const answer = await setup().serve(
      SERVICE_ENDPOINTS.getEnergyMaxCount,
      request('ak', `${FORM}; charset=utf-8`, data('{"symbol":"ENERGY"}')),
    );
    expect(answer).toMatchObject({
      status: 200,
      body: { code: 0, message: '', data: 'sealed({"energyMaxCount":312})' },
      merchant: 10086n,
      plainText: '{"symbol":"ENERGY"}',
      resultText: '{"energyMaxCount":312}',
    });
  });

  it("card close: a key only when sent, failures in the card shape, 403 for another merchant's key", async () => {
    const { serve } = setup();
    const card = SERVICE_ENDPOINTS.closeCard;
    expect((await serve(card, request(undefined, 'application/json', '{"merchantId":"10086"}')))?.body).toMatchObject({
      success: true,
      requestId: 'req-1',
      data: { status: 'CLOSED' },
    });
    expect((await serve(card, request('wrong', 'application/json', '{}')))?.status).toBe(401);
    expect((await serve(card, request('ak', 'application/json', '{}')))?.status).toBe(403);
    expect((await serve(card, request(undefined, FORM, '{}')))?.body).toMatchObject({
      success: false,
      errorCode: CARD_ERROR_CODES.badContentType,
      detailMessage: 'Content-Type must be application/json, not "application/x-www-form-urlencoded" [CARD-PATH]',
      data: null,
    });
    expect((await serve(card, request(undefined, 'application/json', '[]')))?.body).toMatchObject({
      errorCode: CARD_ERROR_CODES.badRequest,
      detailMessage: 'the body is JSON but not an object [CARD-REQ]',
    });
  });

  it('answers nothing when the adapter answered the body itself (over its limit)', async () => {
    const answer = await setup().serve(SERVICE_ENDPOINTS.getEnergyMaxCount, {
      apiKey: 'ak',
      contentType: FORM,
      body: async () => undefined,
    });
    expect(answer).toBeUndefined();
  });

  it('runs the checks in the order a seam gives, the rest after', async () => {
    const { serve, seen } = setup({ shapes: { requestChecks: () => ['form'] } });
    const answer = await serve(SERVICE_ENDPOINTS.getEnergyMaxCount, request(undefined, FORM, 'x=1', seen));
    expect([answer?.body, seen]).toEqual([
      { code: ENVELOPE_CODES.missingData, message: 'form field data is required [ENERGY-DATA]' },
      ['body'],
    ]);
  });
});
