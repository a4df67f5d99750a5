import { PERMISSIONS, type EmulatorMerchant, type Permission } from './config.js';

interface KeyEntry {
  merchant: EmulatorMerchant;
  permissions: ReadonlySet<Permission>;
  notBefore: number;
  notAfter: number;
}

/** The verdict on an `X-API-KEY` for one operation; `why` goes to the log only. */
export type KeyVerdict =
  | { ok: true; merchant: EmulatorMerchant }
  | { ok: false; status: 401; why: string }
  | { ok: false; status: 403; why: string; merchant: EmulatorMerchant };

/** Options of a key check: which deviations to commit. */
export interface KeyCheckOptions {
  /** Accept keys outside their window (fault err401-expired-ok). */
  ignoreWindow?: boolean;
  /** Accept keys without the permission (fault no-403). */
  ignorePermissions?: boolean;
}

/**
 * Every merchant's keys in one map: the key alone says whose request it is (keys are unique across
 * merchants, config.ts checks). A lookup is a hash-map probe; the emulator is a test double, so a
 * key's timing is no secret worth `timingSafeEqual` here.
 */
export class ApiKeyIndex {
  readonly #keys = new Map<string, KeyEntry>();

  constructor(merchants: readonly EmulatorMerchant[]) {
    const at = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Date.parse(value));
    for (const merchant of merchants) {
      this.#keys.set(merchant.apiKey, {
        merchant,
        permissions: new Set(PERMISSIONS),
        notBefore: at(merchant.apiKeyValidFrom, -Infinity),
        notAfter: at(merchant.apiKeyValidUntil, Infinity),
      });
      for (const key of merchant.apiKeys) {
        this.#keys.set(key.key, { merchant, permissions: new Set(key.permissions), notBefore: at(key.notBefore, -Infinity), notAfter: at(key.notAfter, Infinity) });
      }
    }
  }

  /**
   * ERR-401 for a missing, unknown or expired key; ERR-403 for a key without `permission`.
   *
   * @example index.check(req.headers['x-api-key'], 'getEnergyMaxCount', Date.now())
   */
  check(header: string | string[] | undefined, permission: Permission, now: number, options: KeyCheckOptions = {}): KeyVerdict {
    const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
    if (value === undefined || value === '') return { ok: false, status: 401, why: Array.isArray(header) ? 'several X-API-KEY headers' : 'no X-API-KEY header' };
    const entry = this.#keys.get(value);
    if (!entry) return { ok: false, status: 401, why: 'unknown X-API-KEY' };
    if (!options.ignoreWindow) {
      if (now < entry.notBefore) return { ok: false, status: 401, why: `X-API-KEY not valid before ${new Date(entry.notBefore).toISOString()}` };
      if (now > entry.notAfter) return { ok: false, status: 401, why: `X-API-KEY expired at ${new Date(entry.notAfter).toISOString()}` };
    }
    if (!options.ignorePermissions && !entry.permissions.has(permission)) {
      return { ok: false, status: 403, why: `X-API-KEY lacks the ${permission} permission`, merchant: entry.merchant };
    }
    return { ok: true, merchant: entry.merchant };
  }
}
