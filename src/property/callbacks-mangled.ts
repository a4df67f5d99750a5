import fc, { type Arbitrary } from 'fast-check';
import { stringifyExact, type ExactJson } from '../core/exact-json.js';
import { encodeBase64 } from '../crypto/base64.js';
import { sealBytes } from '../crypto/codec.js';
import { defaultPayload, type Exchange } from '../runner/api.js';
import { callbackArbitrary } from './callbacks-once.js';
import type { Property, Verdict } from './property.js';
import {
  acknowledgementOf,
  deliverBody,
  deliverEvent,
  probeSince,
  sealCallback,
  uniqueEvent,
  type MerchantEnv,
} from './merchant-exchange.js';

/** How a callback body is mangled. */
type BodyMangle =
  | { op: 'bit-flip'; byte: number; bit: number }
  | { op: 'truncate'; bytes: number }
  | { op: 'wrong-key' }
  | { op: 'form-field' }
  | { op: 'url-safe' }
  | { op: 'line-breaks' }
  | { op: 'plus-as-space' }
  | { op: 'not-json'; cut: number };

const BODY_MANGLES: Arbitrary<BodyMangle> = fc.oneof(
  fc.record({ op: fc.constant('bit-flip' as const), byte: fc.nat(1023), bit: fc.nat(7) }),
  fc.record({ op: fc.constant('truncate' as const), bytes: fc.integer({ min: 1, max: 127 }) }),
  fc.constant({ op: 'wrong-key' as const }),
  fc.constant({ op: 'form-field' as const }),
  fc.constant({ op: 'url-safe' as const }),
  fc.constant({ op: 'line-breaks' as const }),
  fc.constant({ op: 'plus-as-space' as const }),
  fc.record({ op: fc.constant('not-json' as const), cut: fc.integer({ min: 1, max: 40 }) }),
);

/** A valid event and how its delivery is mangled. */
interface MangledCallback {
  payload: Record<string, ExactJson>;
  mangle: BodyMangle;
}

/** The body `mangle` makes of the sealed `text`, or undefined when the variant does not apply to it. */
function mangledBody(env: MerchantEnv, text: string, mangle: BodyMangle): string | undefined {
  const sealed = sealCallback(env, text);
  const bytes = Buffer.from(sealed, 'base64');
  switch (mangle.op) {
    case 'bit-flip':
      bytes[mangle.byte % bytes.length]! ^= 1 << mangle.bit;
      return encodeBase64(bytes);
    case 'truncate':
      return encodeBase64(bytes.subarray(0, Math.max(1, bytes.length - mangle.bytes)));
    case 'wrong-key':
      return sealBytes(Buffer.from(text, 'utf8'), 'callback', env.stranger.privateKey, { profile: env.target.profile });
    case 'form-field':
      return `data=${encodeURIComponent(sealed)}`;
    case 'url-safe':
      return /[+/]/.test(sealed) ? sealed.replaceAll('+', '-').replaceAll('/', '_') : undefined;
    case 'line-breaks':
      return sealed.replace(/(.{76})/g, '$1\r\n');
    case 'plus-as-space':
      return sealed.includes('+') ? sealed.replaceAll('+', ' ') : undefined;
    case 'not-json':
      return sealCallback(env, text.slice(0, Math.max(1, text.length - mangle.cut)));
  }
}

/** Delivers a mangled body, then the same event valid, and judges both answers and the processing. */
async function judgeMangled(env: MerchantEnv, { payload, mangle }: MangledCallback): Promise<Verdict> {
  const event = uniqueEvent(env, payload).payload;
  const text = stringifyExact({ ...event, requestUUID: 'mangled' });
  const mangled = mangledBody(env, text, mangle);
  if (mangled === undefined) return { ok: true, tag: 'variant not applicable' };
  if (env.probeSeen === undefined) await probeSince(env);
  const exchange = await deliverBody(env, mangled, text);
  const mangledAck = acknowledgementOf(exchange);
  if (mangledAck.verdict === 'acknowledged') {
    await probeSince(env);
    return {
      ok: false,
      message: `a callback body mangled by ${mangle.op} was acknowledged with errCode 0`,
      rules: ['CB-NO-FALSE-ACK'],
      evidence: { exchanges: [exchange] },
    };
  }
  const next = await deliverEvent(env, event);
  const nextAck = acknowledgementOf(next);
  if (nextAck.verdict === 'not-acknowledged')
    return judgeNextRefused(env, { payload, mangle }, [exchange, next], nextAck.reason);
  // One probe read for both deliveries: exactly the valid one was processed, the mangled one not.
  const added = await probeSince(env);
  if (added && added.length !== 1)
    return {
      ok: false,
      message: `a callback body mangled by ${mangle.op}, then the same event valid: the probe shows ${added.length} processings, not 1`,
      rules: ['CB-NO-FALSE-ACK', 'CB-AVAILABLE'],
      evidence: { exchanges: [exchange, next], processed: added },
    };
  // U-CB-RESPONSE: an answer that some readings count as an acknowledgement and some do not.
  if (mangledAck.verdict === 'ambiguous')
    return {
      ok: true,
      tag: 'refused ambiguously (U-CB-RESPONSE)',
      warning: {
        message: `a callback body mangled by ${mangle.op} was answered ${mangledAck.reason}: a service that reads it as errCode 0 loses the event`,
        rules: ['CB-NO-FALSE-ACK', 'U-CB-RESPONSE'],
        evidence: { exchanges: [exchange] },
      },
    };
  if (nextAck.verdict === 'ambiguous')
    return {
      ok: true,
      tag: 'next acknowledged ambiguously (U-CB-RESPONSE)',
      warning: {
        message: `the valid callback after a mangled one was answered ${nextAck.reason}: a service may not count it as acknowledged`,
        rules: ['U-CB-RESPONSE'],
        evidence: { exchanges: [next] },
      },
    };
  return { ok: true, tag: 'refused' };
}

/**
 * The valid callback after the mangled one was refused. CB-AVAILABLE is about the endpoint, not
 * this event: a plain valid callback tells them apart. Acknowledged, the endpoint is up and the
 * receiver refused this generated event itself, which callbacks-once judges (CB-ERRCODE, CB-ONCE;
 * U-CB-FIELDS for a field reading). A fresh copy of the event (new ids) refused too, with the plain
 * one acknowledged: the refusal is of the event's content. Acknowledged: the mangled body left the
 * endpoint unable for a while.
 */
async function judgeNextRefused(
  env: MerchantEnv,
  { payload, mangle }: MangledCallback,
  sent: [Exchange, Exchange],
  reason: string,
): Promise<Verdict> {
  const plain = await deliverEvent(env, uniqueEvent(env, defaultPayload(4)).payload);
  const fresh =
    acknowledgementOf(plain).verdict === 'not-acknowledged'
      ? undefined
      : await deliverEvent(env, uniqueEvent(env, payload).payload);
  await probeSince(env);
  if (fresh && acknowledgementOf(fresh).verdict === 'not-acknowledged')
    return { ok: true, tag: 'the endpoint stays up (this event itself is refused: judged by callbacks-once)' };
  return {
    ok: false,
    message: `after a body mangled by ${mangle.op}, the valid callback was not acknowledged (${reason}); ${fresh ? 'a fresh copy of the same event later was' : `nor a plain valid callback after it (${acknowledgementOf(plain).reason})`}`,
    rules: ['CB-AVAILABLE'],
    evidence: { exchanges: [...sent, plain, ...(fresh ? [fresh] : [])] },
  };
}

/**
 * Merchant property: a mangled callback body (a bit flipped, truncated, another key, a form field,
 * Base64 variants, a plaintext that is not JSON) is never acknowledged and never processed; the
 * next valid callback still is (CB-NO-FALSE-ACK, CB-AVAILABLE: SHOULD rules, warnings unless --strict).
 */
export function callbacksMangled(env: MerchantEnv): Property<MangledCallback> {
  return {
    id: 'callbacks-mangled',
    title: 'A mangled callback body is never acknowledged nor processed, and the next valid one is',
    rules: ['CB-NO-FALSE-ACK', 'CB-AVAILABLE'],
    arbitrary: fc.record({ payload: callbackArbitrary(), mangle: BODY_MANGLES }),
    judge: (value) => judgeMangled(env, value),
  };
}
