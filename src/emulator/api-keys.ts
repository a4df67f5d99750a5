import { ApiKeyRing, type ApiKeyEntry } from '../platform/api-keys.js';
import type { EmulatorMerchant, Permission } from './config.js';

/** The verdict on an `X-API-KEY` for one operation; `why` goes to the log only. */
type KeyVerdict =
  | { ok: true; merchant: EmulatorMerchant }
  | { ok: false; status: 401; why: string }
  | { ok: false; status: 403; why: string; merchant: EmulatorMerchant };

/** One key of the ring: its merchant, window and permissions. */
export type MerchantKeyEntry = ApiKeyEntry<EmulatorMerchant, Permission>;

/**
 * Every merchant's keys in one ring (platform/api-keys.ts): the key alone says whose request it is (keys
 * are unique across merchants, config.ts checks). The main key carries every permission within
 * apiKeyNotBefore..apiKeyNotAfter (alias apiKeyValidFrom..apiKeyValidUntil); the extra keys theirs.
 */
export class ApiKeyIndex {
  readonly #ring: ApiKeyRing<EmulatorMerchant, Permission>;

  /** `entries`: the keys the ring is built from, given the merchants' own (a variant's seam, `EmulatorVariant.keyEntries`). */
  constructor(merchants: readonly EmulatorMerchant[], entries?: (keys: MerchantKeyEntry[]) => MerchantKeyEntry[]) {
    const keys: MerchantKeyEntry[] = merchants.flatMap((merchant) => [
      {
        key: merchant.apiKey,
        notBefore: merchant.apiKeyValidFrom,
        notAfter: merchant.apiKeyValidUntil,
        owner: merchant,
      },
      ...merchant.apiKeys.map((key) => ({
        key: key.key,
        permissions: key.permissions,
        notBefore: key.notBefore,
        notAfter: key.notAfter,
        owner: merchant,
      })),
    ]);
    this.#ring = new ApiKeyRing(entries ? entries(keys) : keys);
  }

  /**
   * ERR-401 for a missing, unknown or expired key; ERR-403 for a key without `permission`.
   *
   * @example index.check(req.headers['x-api-key'], 'getEnergyMaxCount', Date.now())
   */
  check(header: string | string[] | undefined, permission: Permission, now: number): KeyVerdict {
    const verdict = this.#ring.check(header, permission, now);
    if (verdict.ok) return { ok: true, merchant: verdict.owner };
    return verdict.status === 403 ? { ok: false, status: 403, why: verdict.why, merchant: verdict.owner } : verdict;
  }
}
