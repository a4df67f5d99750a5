import { openJson } from '../crypto/codec.js';
import { redact, type Exchange, type ReceivedCallback } from './context.js';
import { sendJsonRequest } from './http-client.js';
import type { Receiver } from './receiver.js';
import { joinUrl } from './service-steps.js';
import type { EmitStep } from './suite.js';
import { fill, type TemplateScope } from './template.js';
import type { ServiceTarget } from './types.js';

/** The trackingId inside a callback body, when it decrypts. */
export function trackingIdOf(callback: ReceivedCallback, target: ServiceTarget): string | undefined {
  try {
    const value = openJson(callback.body.toString('latin1'), 'callback', target.publicKey, { profile: target.profile }).value as Record<string, unknown>;
    return typeof value.trackingId === 'string' ? value.trackingId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Asks the service (control API) to emit a callback to the runner's receiver, then collects the
 * deliveries of that event: those whose trackingId matches, and those that do not decrypt at all
 * (a service that mangles bodies mangles them all; they must still be judged).
 */
export async function runEmit(step: EmitStep, target: ServiceTarget, receiver: Receiver, scope: TemplateScope): Promise<{ exchanges: Exchange[]; callbacks: ReceivedCallback[] }> {
  const headers = { 'x-control-token': target.controlToken ?? '' };
  const shownHeaders = { 'x-control-token': redact(headers['x-control-token']) };
  const merchant = joinUrl(target.baseUrl, `/__control/merchants/${target.userId ?? 0}`);
  const started = Date.now();
  receiver.script(step.answers ?? ['ack']);
  const exchanges: Exchange[] = [];
  const pointed = await sendJsonRequest('PUT', `${merchant}/callback-url`, { url: receiver.url }, headers);
  exchanges.push({ request: { method: 'PUT', url: `${merchant}/callback-url`, headers: shownHeaders, body: JSON.stringify({ url: receiver.url }) }, response: { status: pointed.status, headers: {}, body: pointed.text } });
  if (pointed.status !== 200) return { exchanges: exchanges.map((e) => ({ ...e, error: `control API answered ${pointed.status}` })), callbacks: [] };
  const request = {
    type: step.type,
    fields: fill(step.fields ?? {}, scope),
    deliveries: step.deliveries ?? 1,
    concurrent: step.concurrent ?? false,
    ...(step.retryDelaysMs ? { retryDelaysMs: step.retryDelaysMs } : {}),
  };
  const emitted = await sendJsonRequest('POST', `${merchant}/callbacks`, request, headers);
  const emitExchange: Exchange = { request: { method: 'POST', url: `${merchant}/callbacks`, headers: shownHeaders, body: JSON.stringify(request) }, response: { status: emitted.status, headers: {}, body: emitted.text } };
  exchanges.push(emitExchange);
  const trackingId = (emitted.json as { trackingId?: unknown } | undefined)?.trackingId;
  if (emitted.status !== 200 || typeof trackingId !== 'string') {
    emitExchange.error = `control API answered ${emitted.status} without a trackingId: ${emitted.text.slice(0, 200)}`;
    return { exchanges, callbacks: [] };
  }
  const ours = (callback: ReceivedCallback) => callback.at >= started && [trackingId, undefined].includes(trackingIdOf(callback, target));
  const expected = step.expectDeliveries ?? step.deliveries ?? 1;
  const budget = 10_000 + (step.retryDelaysMs ?? []).reduce((a, b) => a + b, 0) * 2;
  await receiver.waitFor(expected, ours, budget);
  if (step.settleMs) await new Promise((resolve) => setTimeout(resolve, step.settleMs));
  const callbacks = receiver.received.filter(ours);
  for (const callback of callbacks) {
    let plain: string | undefined;
    try {
      plain = openJson(callback.body.toString('latin1'), 'callback', target.publicKey, { profile: target.profile }).text;
    } catch {
      plain = undefined;
    }
    const shown = { ...callback.headers, ...(callback.headers['x-api-key'] ? { 'x-api-key': redact(callback.headers['x-api-key']) } : {}) };
    exchanges.push({
      request: { method: callback.method, url: callback.url, headers: shown, body: callback.body.toString('utf8'), ...(plain === undefined ? {} : { plain }) },
      response: { status: callback.answeredStatus, headers: {}, body: '' },
    });
  }
  return { exchanges, callbacks };
}
