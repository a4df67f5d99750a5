import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from './errors.js';

/**
 * One `X-API-KEY`: its owner, the window in which it is valid (ERR-401, CB-KEY-401 outside it) and,
 * when it is limited, the permissions it carries (ERR-403 without one). The same shape serves the
 * emulator (`notBefore`/`notAfter` of `apiKeys`, `apiKeyNotBefore`/`apiKeyNotAfter` of the main key)
 * and the reference merchant (`apiKey: [{ key, notBefore, notAfter }]`).
 */
export interface ApiKeyEntry<O = undefined, P extends string = string> {
  key: string;
  /** First instant the key is valid (inclusive); a Date or an ISO 8601 text; none: always was. */
  notBefore?: Date | string;
  /** Last instant the key is valid (inclusive); a Date or an ISO 8601 text; none: never ends. */
  notAfter?: Date | string;
  /** What the key may call; none: everything. */
  permissions?: readonly P[];
  /** Whose key it is (the emulator's merchant); what an accepted verdict carries. */
  owner?: O;
}

/**
 * The verdict on a request's `X-API-KEY`: 401 for a missing, unknown or out-of-window key, 403 for a
 * known key without the permission. `why` is for the log only, never the answer (which part of the
 * check failed is no business of the caller's).
 */
type ApiKeyVerdict<O = undefined> =
  { ok: true; owner: O } | { ok: false; status: 401; why: string } | { ok: false; status: 403; why: string; owner: O };

interface CompiledKey<O, P extends string> {
  digest: Buffer;
  notBefore: number;
  notAfter: number;
  permissions: ReadonlySet<P> | undefined;
  owner: O;
}

/**
 * A set of API keys compiled once and checked per request. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, every key every time, so the answer time says nothing about a key's prefix.
 *
 * @example new ApiKeyRing([{ key: 'k-0', notAfter: '2020-01-01T00:00:00Z' }]).check('k-0', undefined, Date.now()) // { ok: false, status: 401, why: 'X-API-KEY expired at 2020-01-01T00:00:00.000Z' }
 */
export class ApiKeyRing<O = undefined, P extends string = string> {
  readonly #keys: CompiledKey<O, P>[];

  /** Compiles the keys; a key that is not a non-empty string or a bound that is no date-time is a ConfigError. */
  constructor(entries: ReadonlyArray<ApiKeyEntry<O, P>>) {
    this.#keys = entries.map((entry, index) => compile(entry, index));
  }

  /** How many keys the ring holds. */
  get size(): number {
    return this.#keys.length;
  }

  /**
   * Judges one `X-API-KEY` header (several headers are refused) at `now` for `permission`
   * (undefined: any key in its window will do).
   *
   * @example ring.check(req.headers['x-api-key'], 'getEnergyMaxCount', Date.now())
   */
  check(header: string | readonly string[] | undefined, permission: P | undefined, now: number): ApiKeyVerdict<O> {
    const several = Array.isArray(header) && header.length > 1;
    const value = Array.isArray(header)
      ? header.length === 1
        ? (header[0] as string)
        : undefined
      : (header as string | undefined);
    if (value === undefined || value === '')
      return { ok: false, status: 401, why: several ? 'several X-API-KEY headers' : 'no X-API-KEY header' };
    const digest = sha256(value);
    let match: CompiledKey<O, P> | undefined;
    for (const key of this.#keys) if (timingSafeEqual(key.digest, digest) && !match) match = key;
    if (!match) return { ok: false, status: 401, why: 'unknown X-API-KEY' };
    if (now < match.notBefore)
      return { ok: false, status: 401, why: `X-API-KEY not valid before ${new Date(match.notBefore).toISOString()}` };
    if (now > match.notAfter)
      return { ok: false, status: 401, why: `X-API-KEY expired at ${new Date(match.notAfter).toISOString()}` };
    if (permission !== undefined && match.permissions && !match.permissions.has(permission)) {
      return { ok: false, status: 403, why: `X-API-KEY lacks the ${permission} permission`, owner: match.owner };
    }
    return { ok: true, owner: match.owner };
  }
}

/**
 * The instant of a window bound in ms, `fallback` when there is none; `what` names it in the error.
 *
 * @example keyInstant('2030-01-01T00:00:00Z', Infinity, 'notAfter') // 1893456000000
 */
export function keyInstant(value: Date | string | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(ms))
    throw new ConfigError(
      'bad-api-key',
      `${what} is not a date-time: ${JSON.stringify(String(value))} (use ISO 8601, e.g. 2030-01-01T00:00:00Z)`,
    );
  return ms;
}

/**
 * Is the key in its window at `now` (bounds inclusive)?
 *
 * @example inKeyWindow({ key: 'k', notAfter: '2020-01-01T00:00:00Z' }, Date.now()) // false
 */
export function inKeyWindow(entry: Pick<ApiKeyEntry, 'notBefore' | 'notAfter'>, now: number): boolean {
  return (
    keyInstant(entry.notBefore, -Infinity, 'notBefore') <= now &&
    now <= keyInstant(entry.notAfter, Infinity, 'notAfter')
  );
}

function compile<O, P extends string>(entry: ApiKeyEntry<O, P>, index: number): CompiledKey<O, P> {
  if (typeof entry.key !== 'string' || entry.key.length === 0)
    throw new ConfigError('bad-api-key', `API key #${index + 1} is not a non-empty string`);
  return {
    digest: sha256(entry.key),
    notBefore: keyInstant(entry.notBefore, -Infinity, `API key #${index + 1} notBefore`),
    notAfter: keyInstant(entry.notAfter, Infinity, `API key #${index + 1} notAfter`),
    permissions: entry.permissions ? new Set(entry.permissions) : undefined,
    owner: entry.owner as O,
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
