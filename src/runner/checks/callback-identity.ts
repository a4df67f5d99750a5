import { NO_PARAMS, isFinding, pass, fail, undecryptableCallback, type Check } from './check.js';

/** `equals`: the deliveries expected. */
type CallbackAttemptsParams = { equals: number };
import type { CheckContext } from '../observation.js';
import { callbackField } from '../../spec/callback-types.js';
import { callbacksOf, openCallback } from './callback-support.js';

/** The payloads of the step's deliveries, or a finding when one does not decrypt. */
function payloads(ctx: CheckContext<unknown>) {
  const collected = callbacksOf(ctx);
  if (isFinding(collected)) return collected;
  const { callbacks, target } = collected;
  const values = [];
  for (const [i, callback] of callbacks.entries()) {
    const opened = openCallback(callback, target);
    if ('error' in opened) return undecryptableCallback(i + 1, opened.error);
    values.push(opened.value);
  }
  return values;
}

/** `callback-request-uuid`: requestUUID differs on every delivery, retries included. */
export const callbackRequestUuidCheck: Check = {
  id: 'callback-request-uuid',
  title: 'fresh requestUUID per delivery',
  rules: ['CB-UUID'],
  needs: 'callbacks',
  params: NO_PARAMS,
  run(ctx) {
    const values = payloads(ctx);
    if (isFinding(values)) return [values];
    const uuids = values.map((value) => String(value.requestUUID));
    const repeated = uuids.find((uuid, i) => uuids.indexOf(uuid) !== i);
    // Too few deliveries is callback-attempts' verdict (CB-ERRCODE); with one, requestUUIDs cannot be compared.
    if (values.length < 2)
      return [
        { status: 'skipped', message: `only ${values.length} delivery arrived; at least two are needed to judge` },
      ];
    return [
      repeated === undefined
        ? pass(`${uuids.length} deliveries, ${uuids.length} distinct requestUUIDs`)
        : fail(`requestUUID ${repeated} was sent on more than one delivery`),
    ];
  },
};

/** `callback-tracking-id`: trackingId is the same on every delivery of the event. */
export const callbackTrackingIdCheck: Check = {
  id: 'callback-tracking-id',
  title: 'stable trackingId across deliveries',
  rules: ['CB-ID-OTHER'],
  needs: 'callbacks',
  params: NO_PARAMS,
  run(ctx) {
    const values = payloads(ctx);
    if (isFinding(values)) return [values];
    // trackingId is the toolkit's payload model (spec/wallet-api.yaml), not named by the interface (U-CB-FIELDS):
    // a service without one cannot be judged here; one that sends it on some deliveries only, can.
    const missing = values.filter((value) => value.trackingId === undefined || value.trackingId === null).length;
    if (missing === values.length)
      return [
        {
          status: 'skipped',
          message: `the ${values.length} deliveries carry no trackingId (a field of the toolkit's payload model, U-CB-FIELDS): nothing to compare`,
        },
      ];
    if (missing > 0) return [fail(`${missing} of ${values.length} deliveries of one event carry no trackingId`)];
    const ids = new Set(values.map((value) => String(value.trackingId)));
    return [
      ids.size === 1
        ? pass(`${values.length} deliveries share trackingId ${[...ids][0]}`)
        : fail(`the deliveries of one event carry ${ids.size} trackingIds: ${[...ids].join(', ')}`),
    ];
  },
};

/**
 * The fields an event is known by (CB-ID-DEPOSIT, CB-ID-WITHDRAW, CB-ID-OTHER), in the interface's
 * spelling (the provider's `txId`, `chainName` are read too). trackingId has its own check.
 */
export const IDENTITY_FIELDS: readonly string[] = Object.freeze([
  'type',
  'txid',
  'chain',
  'symbol',
  'toAddress',
  'callBackId',
]);

/** The text of a JSON value for comparison (exact numbers keep their digits). */
const textOf = (value: unknown): string =>
  value === undefined ? '(absent)' : typeof value === 'string' ? value : String(value);

/**
 * `callback-same-event`: the deliveries of one event (resends and retries) are identical in the
 * fields the event is known by (CB-ONCE: the service resends an identical callback; a resend that
 * differs in one of them is another event to the merchant's idempotency key).
 */
export const callbackSameEventCheck: Check = {
  id: 'callback-same-event',
  title: 'identical identity fields on every delivery of an event',
  rules: ['CB-ONCE'],
  needs: 'callbacks',
  params: NO_PARAMS,
  run(ctx) {
    const values = payloads(ctx);
    if (isFinding(values)) return [values];
    if (values.length < 2)
      return [
        { status: 'skipped', message: `only ${values.length} delivery arrived; at least two are needed to judge` },
      ];
    const differing: string[] = [];
    const compared: string[] = [];
    for (const field of IDENTITY_FIELDS) {
      const seen = values.map((value) => callbackField(value as Record<string, unknown>, field));
      if (seen.every((value) => value === undefined)) continue;
      compared.push(field);
      const distinct = [...new Set(seen.map(textOf))];
      if (distinct.length > 1) differing.push(`${field}: ${distinct.join(', ')}`);
    }
    if (differing.length > 0)
      return [fail(`the ${values.length} deliveries of one event differ in ${differing.join('; ')}`)];
    return [pass(`${values.length} deliveries carry the same ${compared.join(', ')}`)];
  },
};

/** `callback-attempts`: exactly `equals` deliveries arrived: retries until errCode 0, none after. */
export const callbackAttemptsCheck: Check<CallbackAttemptsParams> = {
  id: 'callback-attempts',
  title: 'retries until errCode 0 and never after',
  rules: ['CB-ERRCODE'],
  needs: 'callbacks',
  params: {
    type: 'object',
    properties: {
      equals: {
        type: 'integer',
        minimum: 0,
        description: 'the deliveries of the event that must arrive: retries until errCode 0, none after',
      },
    },
    required: ['equals'],
    additionalProperties: false,
  },
  run(ctx) {
    const collected = callbacksOf(ctx);
    if (isFinding(collected)) return [collected];
    const { callbacks } = collected;
    // The runner tells events apart by their decrypted payload: undecryptable deliveries cannot be counted per event.
    const opened = payloads(ctx);
    if (isFinding(opened)) return [opened];
    const expected = ctx.params.equals;
    const answered = callbacks.map((callback) => callback.answeredStatus).join(', ');
    return [
      callbacks.length === expected
        ? pass(`${expected} deliveries (answers HTTP ${answered})`)
        : fail(`expected ${expected} deliveries, got ${callbacks.length} (answers HTTP ${answered})`),
    ];
  },
};
