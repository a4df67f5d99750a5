import { ApiKeyRing, type ApiKeyEntry as CoreApiKeyEntry } from '../platform/api-keys.js';
import { ConfigError } from '../core/errors.js';

/** A merchant credential and, optionally, the window in which it is valid (CB-KEY-401). */
export type ApiKeyEntry = Pick<CoreApiKeyEntry, 'key' | 'notBefore' | 'notAfter'>;

/** A bare key (always valid) or a key with a validity window. */
export type ApiKeySpec = string | ApiKeyEntry;

/** The verdict on a request's `X-API-KEY`; `why` is for the log only, never the answer. */
type ApiKeyVerdict = { ok: true } | { ok: false; why: string };

/** Checks `X-API-KEY` values against the merchant's keys and their validity windows. */
type ApiKeyCheck = (value: string | string[] | undefined, now: number) => ApiKeyVerdict;

/**
 * Compiles the merchant's keys once (core/api-keys.ts: SHA-256 digests compared with
 * `timingSafeEqual`, every key every time, so the answer time says nothing about a key's prefix).
 *
 * @example compileApiKeys(['k-1', { key: 'k-0', notAfter: '2020-01-01T00:00:00Z' }])('k-0', Date.now()) // { ok: false, ... }
 */
export function compileApiKeys(specs: readonly ApiKeySpec[]): ApiKeyCheck {
  if (specs.length === 0) throw new ConfigError('no-api-key', 'the merchant receiver needs at least one API key');
  const ring = new ApiKeyRing(specs.map((spec) => (typeof spec === 'string' ? { key: spec } : spec)));
  return (value, now) => {
    const verdict = ring.check(value, undefined, now);
    return verdict.ok ? { ok: true } : { ok: false, why: verdict.why };
  };
}
