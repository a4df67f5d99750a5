import { ConfigError } from '../core/errors.js';
import { resolveProfile, type CryptoProfile } from '../core/profile.js';
import type { RsaPrivateKey } from '../crypto/keys.js';
import type { WalletMockMerchant } from './types.js';

/** Where option errors say they come from. */
export const OPTIONS_SOURCE = 'createWalletHandlers';

/**
 * Default energy: the emulator's sample merchant and the spec's examples (20000000 / 64000 = 312
 * transactions), so a mock without `energy` answers a plausible energyMaxCount and leases succeed.
 */
const DEFAULT_ENERGY = Object.freeze({ balance: 20_000_000n, costPerTx: 64_000n });

/** A merchant with its options checked: exact integers, a resolved profile. */
export interface ResolvedMerchant {
  readonly index: number;
  readonly userId: bigint;
  readonly apiKey: string;
  /** Operations the key may call; undefined: all. */
  readonly permissions: ReadonlySet<string> | undefined;
  readonly privateKey: string | RsaPrivateKey;
  readonly profile: CryptoProfile;
  /** The live balance: leases spend it, getEnergyMaxCount reads it (ENERGY-FLOOR). */
  readonly energy: { balance: bigint; costPerTx: bigint };
}

/**
 * Checks the merchants of the options once, at creation, so a typo fails the test setup with a
 * clear ConfigError rather than as a strange answer later.
 */
export function resolveMerchants(
  merchants: readonly WalletMockMerchant[],
  operationIds: readonly string[],
  profile: Partial<CryptoProfile> | undefined,
): ResolvedMerchant[] {
  if (!Array.isArray(merchants) || merchants.length === 0) {
    throw new ConfigError(
      'bad-options',
      `${OPTIONS_SOURCE}: merchants must list at least one merchant ({ userId, apiKey, privateKey })`,
    );
  }
  const keys = new Set<string>();
  return merchants.map((merchant, index) => {
    const where = `${OPTIONS_SOURCE}: merchants[${index}]`;
    const apiKey = merchant.apiKey;
    if (typeof apiKey !== 'string' || apiKey.length === 0)
      throw new ConfigError('bad-options', `${where}.apiKey must be a non-empty string`);
    if (keys.has(apiKey))
      throw new ConfigError(
        'bad-options',
        `${where}.apiKey is used by another merchant: the key alone must say whose request it is`,
      );
    keys.add(apiKey);
    if (
      typeof merchant.privateKey !== 'string' &&
      (typeof merchant.privateKey !== 'object' || merchant.privateKey === null)
    ) {
      throw new ConfigError(
        'bad-options',
        `${where}.privateKey must be a PEM or Base64 DER string, or a key from parseKey`,
      );
    }
    for (const permission of merchant.permissions ?? []) {
      if (!operationIds.includes(permission)) {
        throw new ConfigError(
          'bad-options',
          `${where}.permissions: unknown operation ${JSON.stringify(permission)} (known: ${operationIds.join(', ')})`,
        );
      }
    }
    const energy = merchant.energy ?? DEFAULT_ENERGY;
    return {
      index,
      userId: integerOption(merchant.userId, `${where}.userId`, 0n),
      apiKey,
      permissions: merchant.permissions ? new Set(merchant.permissions) : undefined,
      privateKey: merchant.privateKey,
      profile: resolveProfile({ ...profile, ...merchant.profile }, `${where}.profile`),
      energy: {
        balance: integerOption(energy.balance, `${where}.energy.balance`, 0n),
        costPerTx: integerOption(energy.costPerTx, `${where}.energy.costPerTx`, 1n),
      },
    };
  });
}

/** An exact integer from a bigint, a safe integer number or decimal digits. */
function integerOption(value: unknown, where: string, min: bigint): bigint {
  let result: bigint | undefined;
  if (typeof value === 'bigint') result = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) result = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) result = BigInt(value);
  if (result === undefined)
    throw new ConfigError(
      'bad-options',
      `${where} must be an integer (a bigint, a safe integer or decimal digits), not ${String(value)}`,
    );
  if (result < min) throw new ConfigError('bad-options', `${where} must be at least ${min}, not ${result}`);
  return result;
}
