import type { ExactJson } from '../../core/exact-json.js';
import { openJson } from '../../crypto/codec.js';
import type { CheckContext, ReceivedCallback } from '../observation.js';
import type { ServiceTarget } from '../types.js';
import type { Finding } from '../types.js';
import { describeCryptoFailure } from '../../wire/crypto-wording.js';
import { fail, pass } from './check.js';

/**
 * The callbacks an emit step collected and the service that sent them, or a finding: none arrived,
 * the service could not be made to emit, or a suite put a callback check on a merchant case.
 */
export function callbacksOf(
  ctx: CheckContext<unknown>,
): { callbacks: ReceivedCallback[]; target: ServiceTarget } | Finding {
  if (ctx.target.side !== 'service') return fail('suite error: callback checks judge a service');
  const callbacks = ctx.outcome.callbacks ?? [];
  const broken = ctx.outcome.exchanges.find((exchange) => exchange.error);
  if (broken) return fail(`could not make the service emit: ${broken.error}`);
  if (callbacks.length === 0) {
    // An optional await asks only that whatever arrives be right: whether the service sends anything is open.
    if (ctx.step.await?.optional)
      return pass(`no callback arrived within ${ctx.step.await.timeoutMs ?? 10_000} ms; none is required`);
    return { ...fail('no callback arrived at the receiver'), cause: 'no-callback' };
  }
  return { callbacks, target: ctx.target };
}

/** Decrypts one callback body with the merchant's public key (CB-DECRYPT). */
export function openCallback(
  callback: ReceivedCallback,
  target: ServiceTarget,
): { value: Record<string, ExactJson>; text: string } | { error: string } {
  try {
    const opened = openJson(callback.body.toString('latin1'), 'callback', target.publicKey, {
      profile: target.profile,
    });
    return { value: opened.value as Record<string, ExactJson>, text: opened.text };
  } catch (error) {
    return { error: describeCryptoFailure(error) };
  }
}
