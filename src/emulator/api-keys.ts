import { ApiKeyRing, type ApiKeyCheckOptions } from '../core/api-keys.js';
import type { EmulatorMerchant, Permission } from './config.js';

/** The verdict on an `X-API-KEY` for one operation; `why` goes to the log only. */
type KeyVerdict =
  | { ok: true; merchant: EmulatorMerchant }
  | { ok: false; status: 401; why: string }
  | { ok: false; status: 403; why: string; merchant: EmulatorMerchant };

/** Options of a key check: the deviations a test variant may ask for (`EmulatorVariant.keyCheck`). */
type KeyCheckOptions = ApiKeyCheckOptions;

/**
 * Every merchant's keys in one ring (core/api-keys.ts): the key alone says whose request it is (keys
 * are unique across merchants, config.ts checks). The main key carries every permission within
 * apiKeyNotBefore..apiKeyNotAfter (alias apiKeyValidFrom..apiKeyValidUntil); the extra keys theirs.
 */
export class ApiKeyIndex {
  readonly #ring: ApiKeyRing<EmulatorMerchant, Permission>;

  constructor(merchants: readonly EmulatorMerchant[]) {
    this.#ring = new ApiKeyRing(merchants.flatMap((merchant) => [
      { key: merchant.apiKey, notBefore: merchant.apiKeyValidFrom, notAfter: merchant.apiKeyValidUntil, owner: merchant },
      ...merchant.apiKeys.map((key) => ({ key: key.key, permissions: key.permissions, notBefore: key.notBefore, notAfter: key.notAfter, owner: merchant })),
    ]));
  }

  /**
   * ERR-401 for a missing, unknown or expired key; ERR-403 for a key without `permission`.
   *
   * @example index.check(req.headers['x-api-key'], 'getEnergyMaxCount', Date.now())
   */
  check(header: string | string[] | undefined, permission: Permission, now: number, options: KeyCheckOptions = {}): KeyVerdict {
    const verdict = this.#ring.check(header, permission, now, options);
    if (verdict.ok) return { ok: true, merchant: verdict.owner };
    return verdict.status === 403 ? { ok: false, status: 403, why: verdict.why, merchant: verdict.owner } : verdict;
  }
}
