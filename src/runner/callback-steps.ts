import { randomUUID } from 'node:crypto';
import { openJson } from '../crypto/codec.js';
import {
  controlEmitCallback,
  controlSetCallbackUrl,
  type ControlCallbackRequest,
} from '../generated/control-client.js';
import { callbackField } from '../spec/callback-types.js';
import { redact } from './redact.js';
import { type Exchange, type ReceivedCallback } from './observation.js';
import { controlClientOf, merchantOf } from './control.js';
import type { Receiver } from './receiver.js';
import type { AwaitStep, EmitStep } from './model.js';
import { fill, type TemplateScope } from './template.js';
import type { ServiceTarget } from './types.js';

/** The payload field the runner adds to every event it asks a service to emit. */
const EVENT_MARK = 'wcEventMark';

/** A callback's decrypted payload, or undefined when it does not decrypt. */
function payloadOf(callback: ReceivedCallback, target: ServiceTarget): Record<string, unknown> | undefined {
  try {
    return openJson(callback.body.toString('latin1'), 'callback', target.publicKey, { profile: target.profile })
      .value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Asks the service (control API) to emit a callback to the runner's receiver, then collects the
 * deliveries of that event: those whose trackingId matches, and those that do not decrypt at all
 * (a service that mangles bodies mangles them all; they must still be judged).
 */
export async function runEmit(
  step: EmitStep,
  target: ServiceTarget,
  receiver: Receiver,
  scope: TemplateScope,
): Promise<{ exchanges: Exchange[]; callbacks: ReceivedCallback[] }> {
  const client = controlClientOf(target);
  const started = Date.now();
  receiver.script(step.answers ?? ['ack']);
  const exchanges: Exchange[] = [];
  const pointed = await pointCallbacks(target, receiver);
  exchanges.push(pointed);
  if (pointed.error) return { exchanges, callbacks: [] };
  // A mark of our own in the payload (U-CB-FIELDS allows extra fields) tells this event's deliveries
  // apart from other callbacks, even when a faulty service changes trackingId between deliveries.
  const mark = randomUUID();
  const request: ControlCallbackRequest = {
    type: step.type,
    fields: { ...(fill(step.fields ?? {}, scope) as Record<string, unknown>), [EVENT_MARK]: mark },
    deliveries: step.deliveries ?? 1,
    concurrent: step.concurrent ?? false,
    ...(step.retryDelaysMs ? { retryDelaysMs: step.retryDelaysMs } : {}),
  };
  const emitted = await controlEmitCallback(client, merchantOf(target), request);
  const sent = emitted.request;
  const emitExchange: Exchange = {
    request: {
      method: sent.method,
      url: sent.url,
      headers: { 'x-control-token': redact(client.token, 'ct') },
      body: sent.body ?? '',
    },
    response: { status: emitted.status, headers: {}, body: emitted.text },
  };
  exchanges.push(emitExchange);
  const trackingId = (emitted.json as { trackingId?: unknown } | undefined)?.trackingId;
  // The control API (docs/service-guide.md) fixes the answer's body ({"trackingId"}), not its status: any 2xx with one will do.
  if (emitted.status < 200 || emitted.status > 299 || typeof trackingId !== 'string') {
    emitExchange.error = `control API answered ${emitted.status} without a trackingId: ${emitted.text.slice(0, 200)}`;
    return { exchanges, callbacks: [] };
  }
  const ours = (callback: ReceivedCallback) => {
    if (callback.at < started) return false;
    const payload = payloadOf(callback, target);
    return payload === undefined || payload[EVENT_MARK] === mark || payload.trackingId === trackingId;
  };
  const expected = step.expectDeliveries ?? step.deliveries ?? 1;
  const budget = 10_000 + (step.retryDelaysMs ?? []).reduce((a, b) => a + b, 0) * 2;
  await receiver.waitFor(expected, ours, budget);
  if (step.settleMs) await new Promise((resolve) => setTimeout(resolve, step.settleMs));
  const callbacks = receiver.received.filter(ours);
  exchanges.push(...callbacks.map((callback) => exchangeOf(callback, target)));
  return { exchanges, callbacks };
}

/** Points the merchant's callbacks at the receiver (control API). */
export async function pointCallbacks(target: ServiceTarget, receiver: Receiver): Promise<Exchange> {
  const client = controlClientOf(target);
  const answer = await controlSetCallbackUrl(client, merchantOf(target), { url: receiver.url });
  const { method, url, body = '' } = answer.request;
  return {
    request: { method, url, headers: { 'x-control-token': redact(client.token, 'ct') }, body },
    response: { status: answer.status, headers: {}, body: answer.text },
    ...(answer.status >= 200 && answer.status < 300
      ? {}
      : { error: `control API answered ${answer.status}: ${answer.text.slice(0, 200)}` }),
  };
}

/** Waits for a callback of `type` whose payload carries the `match` fields (e.g. the order's callBackId). */
export async function runAwait(
  step: AwaitStep,
  target: ServiceTarget,
  receiver: Receiver,
  scope: TemplateScope,
): Promise<{ exchanges: Exchange[]; callbacks: ReceivedCallback[] }> {
  const match = fill(step.match ?? {}, scope) as Record<string, unknown>;
  const started = Date.now();
  const count = step.count ?? 1;
  if (step.answers) receiver.script(step.answers);
  // A hand-triggered callback (no type, no match) may be anything the service sends, even a body
  // that does not decrypt: that is exactly what the checks must then judge.
  const open = step.type === undefined && Object.keys(match).length === 0;
  let first: Record<string, unknown> | undefined;
  const wanted = (callback: ReceivedCallback) => {
    if (callback.at < started) return false;
    const value = payloadOf(callback, target);
    if (value === undefined) return open;
    // A hand-triggered event is not one the runner asked for (those carry its mark), and once its
    // first delivery arrived, later ones must be deliveries of the same event, not of another.
    if (open) {
      if (value[EVENT_MARK] !== undefined) return false;
      first ??= value;
      return sameEvent(first, value);
    }
    return (
      (step.type === undefined || String(value.type) === String(step.type)) &&
      Object.entries(match).every(([field, want]) => String(value[field]) === String(want))
    );
  };
  const callbacks = (await receiver.waitFor(count, wanted, step.timeoutMs ?? 10_000)).slice(0, count);
  return { exchanges: callbacks.map((callback) => exchangeOf(callback, target)), callbacks };
}

/** Two payloads are deliveries of one event: the same trackingId, or without one, the same type and ids. */
function sameEvent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  if (a.trackingId !== undefined || b.trackingId !== undefined) return a.trackingId === b.trackingId;
  return ['type', 'txid', 'callBackId'].every(
    (field) => String(callbackField(a, field)) === String(callbackField(b, field)),
  );
}

/** A received callback as report evidence: wire body beside its decryption, key redacted. */
function exchangeOf(callback: ReceivedCallback, target: ServiceTarget): Exchange {
  let plain: string | undefined;
  try {
    plain = openJson(callback.body.toString('latin1'), 'callback', target.publicKey, { profile: target.profile }).text;
  } catch {
    plain = undefined;
  }
  const shown = {
    ...callback.headers,
    ...(callback.headers['x-api-key'] ? { 'x-api-key': redact(callback.headers['x-api-key']) } : {}),
  };
  return {
    request: {
      method: callback.method,
      url: callback.url,
      headers: shown,
      body: callback.body.toString('utf8'),
      ...(plain === undefined ? {} : { plain }),
      receivedAt: callback.at,
    },
    response: { status: callback.answeredStatus, headers: {}, body: callback.answeredBody ?? '' },
  };
}
