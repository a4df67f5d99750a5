import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../core/errors.js';

/** A merchant credential and, optionally, the window in which it is valid (CB-KEY-401). */
export interface ApiKeyEntry {
  key: string;
  /** First instant the key is valid (inclusive); a Date or an ISO 8601 text. */
  notBefore?: Date | string;
  /** Last instant the key is valid (inclusive); a Date or an ISO 8601 text. */
  notAfter?: Date | string;
}

/** A bare key (always valid) or a key with a validity window. */
export type ApiKeySpec = string | ApiKeyEntry;

/** The verdict on a request's `X-API-KEY`; `why` is for the log only, never the answer. */
export type ApiKeyVerdict = { ok: true } | { ok: false; why: string };

interface CompiledKey {
  digest: Buffer;
  notBefore: number;
  notAfter: number;
}

/** Checks `X-API-KEY` values against the merchant's keys and their validity windows. */
export type ApiKeyCheck = (value: string | string[] | undefined, now: number) => ApiKeyVerdict;

/**
 * Compiles the merchant's keys once. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, every key every time, so the answer time says nothing about a key's prefix.
 *
 * @example compileApiKeys(['k-1', { key: 'k-0', notAfter: '2020-01-01T00:00:00Z' }])('k-0', Date.now()) // { ok: false, ... }
 */
export function compileApiKeys(specs: readonly ApiKeySpec[]): ApiKeyCheck {
  if (specs.length === 0) throw new ConfigError('no-api-key', 'the merchant receiver needs at least one API key');
  const keys = specs.map(compile);
  return (value, now) => {
    const text = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
    if (text === undefined || text === '') return { ok: false, why: 'no X-API-KEY header' };
    const digest = sha256(text);
    let match: CompiledKey | undefined;
    for (const key of keys) if (timingSafeEqual(key.digest, digest) && !match) match = key;
    if (!match) return { ok: false, why: 'unknown X-API-KEY' };
    if (now < match.notBefore) return { ok: false, why: `X-API-KEY not valid before ${new Date(match.notBefore).toISOString()}` };
    if (now > match.notAfter) return { ok: false, why: `X-API-KEY expired at ${new Date(match.notAfter).toISOString()}` };
    return { ok: true };
  };
}

function compile(spec: ApiKeySpec, index: number): CompiledKey {
  const entry = typeof spec === 'string' ? { key: spec } : spec;
  if (typeof entry.key !== 'string' || entry.key.length === 0) {
    throw new ConfigError('bad-api-key', `API key #${index + 1} is not a non-empty string`);
  }
  return {
    digest: sha256(entry.key),
    notBefore: instant(entry.notBefore, -Infinity, `API key #${index + 1} notBefore`),
    notAfter: instant(entry.notAfter, Infinity, `API key #${index + 1} notAfter`),
  };
}

function instant(value: Date | string | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(ms)) throw new ConfigError('bad-api-key', `${what} is not a date-time: ${JSON.stringify(String(value))} (use ISO 8601, e.g. 2030-01-01T00:00:00Z)`);
  return ms;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
