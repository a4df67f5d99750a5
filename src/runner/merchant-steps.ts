import { randomBytes, randomUUID } from 'node:crypto';
import { LosslessNumber, parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import { encodeBase64 } from '../crypto/base64.js';
import { sealBytes } from '../crypto/codec.js';
import { redact, type Exchange, type StrangerKeys } from './context.js';
import { send, sendJsonRequest } from './http-client.js';
import type { DeliverStep } from './suite.js';
import { fill, type TemplateScope } from './template.js';
import type { MerchantTarget } from './types.js';

/** The callback payload model of design.md (U-CB-FIELDS): fields of each type, before overrides. */
export function defaultPayload(type: number, tenantUserId = 'u-20931'): Record<string, ExactJson> {
  const common: Record<string, ExactJson> = { type: new LosslessNumber(String(type)), requestUUID: '', trackingId: `wc-${randomUUID()}`, tenantUserId, business: new LosslessNumber('0') };
  const txid = randomBytes(32).toString('hex');
  const callBackId = `wc-${randomUUID()}`;
  const amount = new LosslessNumber('12345678901234567890.123');
  const order = { callBackId, chain: 'TRON', symbol: 'USDT', toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', amount };
  switch (type) {
    case 1: return { ...common, txid, chain: 'TRON', symbol: 'USDT', toAddress: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', fromAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', amount: '250.000001', txIndex: new LosslessNumber('0') };
    case 2: return { ...common, ...order };
    case 3: return { ...common, txid, ...order };
    case 4: return { ...common, chain: 'TRON', address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE' };
    case 5: return { ...common, callBackId, chain: 'TRON', address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLX' };
    default: return { ...common, callBackId, chain: 'TRON', symbol: 'USDT', amount: new LosslessNumber('99999.5') };
  }
}

/** Named events of a case, for redeliveries (`same`) and wrapped-contract twins (`twin`). */
export type EventBook = Map<string, Record<string, ExactJson>>;

/** The body of one delivery: encrypted, then mangled as the case asks. Bodies hold '+', '/' and '='. */
function deliveryBody(payload: Record<string, ExactJson>, step: DeliverStep, target: MerchantTarget, stranger: StrangerKeys): { body: string; contentType: string; text: string } {
  const mangle = step.mangle ?? 'none';
  const key = mangle === 'wrong-key' ? stranger.privateKey : target.privateKey;
  for (let attempt = 0; ; attempt++) {
    // A new requestUUID per delivery (CB-UUID) also varies the ciphertext until it shows all three characters.
    payload.requestUUID = randomUUID();
    const text = mangle === 'invalid-payload' ? stringifyExact({ ...payload, type: new LosslessNumber('99') }) : stringifyExact(payload);
    const bytes = mangle === 'not-json' ? Buffer.from(`not json: ${text.slice(0, 40)}`) : mangle === 'not-utf8' ? Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text)]) : Buffer.from(text, 'utf8');
    const sealed = sealBytes(bytes, 'callback', key, { profile: target.profile });
    if (attempt < 200 && !(sealed.includes('+') && sealed.includes('/') && sealed.includes('='))) continue;
    const body = (() => {
      switch (mangle) {
        case 'form-field': return `data=${encodeURIComponent(sealed)}`;
        case 'plus-as-space': return sealed.replaceAll('+', ' ');
        case 'url-safe': return sealed.replaceAll('+', '-').replaceAll('/', '_');
        case 'line-breaks': return sealed.replace(/(.{76})/g, '$1\r\n');
        case 'garbage': return 'this is not Base64 at all: {"errCode":0} %%%';
        case 'truncated': return encodeBase64(Buffer.from(sealed, 'base64').subarray(0, -16));
        default: return sealed;
      }
    })();
    return { body, contentType: 'application/x-www-form-urlencoded', text };
  }
}

/** The X-API-KEY of a delivery; undefined sends none. */
function apiKeyFor(choice: DeliverStep['apiKey'], target: MerchantTarget): string | undefined {
  switch (choice ?? 'valid') {
    case 'missing': return undefined;
    case 'unknown': return `wc-unknown-${randomUUID()}`;
    case 'expired': return target.expiredKey;
    default: return target.apiKey;
  }
}

/** Reads the probe's processed list (exact JSON texts); undefined without a probe. */
export async function readProbe(target: MerchantTarget): Promise<string[] | undefined> {
  if (!target.probeUrl) return undefined;
  const answer = await sendJsonRequest('GET', target.probeUrl, undefined);
  const parsed = parseExactJson(answer.text) as { processed?: ExactJson[] } | null;
  if (answer.status !== 200 || !Array.isArray(parsed?.processed)) throw new Error(`the probe ${target.probeUrl} answered ${answer.status} without a processed list`);
  return parsed.processed.map((entry) => stringifyExact(entry));
}

/**
 * Delivers a callback (or several identical ones, possibly at the same moment) to the merchant, as
 * the service would: raw Base64 body, form content type, the merchant's own key.
 */
export async function runDelivery(step: DeliverStep, target: MerchantTarget, scope: TemplateScope, events: EventBook, stranger: StrangerKeys): Promise<{ exchanges: Exchange[]; delivered: string[] }> {
  let payload: Record<string, ExactJson>;
  if (step.same) {
    const known = events.get(step.same);
    if (!known) throw new Error(`deliver.same names ${step.same}, which no earlier step defined`);
    payload = known;
  } else {
    const base = step.twin ? events.get(step.twin) : defaultPayload(step.type ?? 1);
    if (!base) throw new Error(`deliver.twin names ${step.twin}, which no earlier step defined`);
    payload = { ...base, ...(step.twin ? { trackingId: `wc-${randomUUID()}` } : {}), ...(fill(step.fields ?? {}, scope) as Record<string, ExactJson>) };
    if (step.event) events.set(step.event, payload);
  }
  const key = apiKeyFor(step.apiKey, target);
  const count = step.deliveries ?? 1;
  const one = async (): Promise<Exchange> => {
    const copy = { ...payload };
    const { body, contentType, text } = deliveryBody(copy, step, target, stranger);
    const headers: Record<string, string> = { 'content-type': contentType, ...(key === undefined ? {} : { 'x-api-key': key }) };
    const request = { method: 'POST', url: target.callbackUrl, headers: key ? { ...headers, 'x-api-key': redact(key) } : headers, body, plain: text };
    try {
      const wire = await send({ method: 'POST', url: target.callbackUrl, headers, body });
      const answer = wire.body.toString('utf8');
      let json: ExactJson | undefined;
      try {
        json = parseExactJson(answer);
      } catch {
        json = undefined;
      }
      return { request, payloadText: text, response: { status: wire.status, headers: wire.headers, body: answer, ...(json === undefined ? {} : { json }) } };
    } catch (error) {
      return { request, payloadText: text, error: (error as Error).message };
    }
  };
  const exchanges: Exchange[] = [];
  if (step.concurrent) exchanges.push(...(await Promise.all(Array.from({ length: count }, one))));
  else for (let i = 0; i < count; i++) exchanges.push(await one());
  return { exchanges, delivered: exchanges.map((exchange) => exchange.payloadText ?? '') };
}
