import { inKeyWindow } from '../platform/api-keys.js';
import { PERMISSIONS, type EmulatorMerchant } from './config.js';

/** The keys a test runner needs for ERR-401 and ERR-403 cases, found in a merchant's config. */
interface MerchantKeyDescription {
  /** The main key: every permission. */
  apiKey: string;
  /** A key valid now that lacks a permission (ERR-403). */
  forbiddenKey?: string;
  /** A key outside its validity window now (ERR-401). */
  expiredKey?: string;
  /** A key whose validity window begins later (ERR-401). */
  futureKey?: string;
}

/**
 * Picks the main key, a valid key without every permission, an expired key and a not-yet-valid key
 * from a merchant.
 *
 * @example describeMerchantKeys(config.merchants[0]!).forbiddenKey // 'forbidden-3f9a...'
 */
export function describeMerchantKeys(merchant: EmulatorMerchant, now = Date.now()): MerchantKeyDescription {
  const description: MerchantKeyDescription = { apiKey: merchant.apiKey };
  const forbidden = merchant.apiKeys.find(
    (k) => inKeyWindow(k, now) && PERMISSIONS.some((p) => !k.permissions.includes(p)),
  );
  if (forbidden) description.forbiddenKey = forbidden.key;
  const expired = merchant.apiKeys.find((k) => k.notAfter !== undefined && Date.parse(k.notAfter) < now);
  if (expired) description.expiredKey = expired.key;
  else if (merchant.apiKeyValidUntil !== undefined && Date.parse(merchant.apiKeyValidUntil) < now)
    description.expiredKey = merchant.apiKey;
  const future = merchant.apiKeys.find((k) => k.notBefore !== undefined && Date.parse(k.notBefore) > now);
  if (future) description.futureKey = future.key;
  return description;
}
