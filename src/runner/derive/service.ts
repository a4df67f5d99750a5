/**
 * The service side's derived cases (spec/dimensions.yaml): near misses of the merchant's key on the
 * order endpoints, value classes of the callBackId the result must echo, energy balances around the
 * edges of the floor, and plaintexts at the RSA block edges judged by one verdict.
 */
import type { Dimension } from '../../spec/dimensions.js';
import type { Case, KeyNearMiss, Need, RequestStep } from '../model.js';
import { expect, type Generators } from './common.js';

const ENERGY_QUERY = { symbol: 'ENERGY', chainName: 'TRON' };

/** A valid withdrawal order (suites/service/orders.yaml) with the given callBackId. */
function withdrawal(callBackId: string): Record<string, unknown> {
  return {
    userId: '{{userId}}',
    tenantUserId: '20931',
    tenantType: 1,
    callBackId,
    symbol: 'USDT',
    chainName: 'TRON',
    toAddr: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE',
    amount: '#decimal:123456789012.123456',
  };
}

const CASED: readonly string[] = ['upper-case', 'lower-case', 'one-letter-case'];

/** The key a variant sends: the expired key, or a near miss of the valid one. */
function keyOf(variant: string): Pick<RequestStep, 'apiKey' | 'keyVariant'> {
  return variant === 'expired' ? { apiKey: 'expired' } : { keyVariant: variant as KeyNearMiss };
}

/** What a variant needs beyond the endpoint's own needs. */
function keyNeeds(variant: string): Need[] {
  return variant === 'expired' ? ['expiredKey'] : CASED.includes(variant) ? ['casedKey'] : [];
}

/**
 * Near misses of the merchant's key, on the energy query (ERR-401: 401 with its body) and on order
 * submission (AUTH-KEY: refused; the status and body there are open, U-CODES, as
 * suites/service/errors.yaml judges a missing key). The order is a valid one, so a service that
 * forgives the near miss accepts it: it needs --allow-orders.
 */
function keyNearMisses(dimension: Dimension): Case[] {
  return dimension.variants.flatMap((variant): Case[] => [
    {
      id: `energy-key-${variant}`,
      title: `An energy query with ${variant === 'expired' ? 'an expired key' : `a near miss of the key (${variant})`} gets 401 UNAUTHORIZED`,
      rules: [dimension.rule, ...dimension.also],
      needs: keyNeeds(variant),
      steps: [
        {
          request: { endpoint: 'energy', ...keyOf(variant), plain: ENERGY_QUERY },
          expect: [
            expect(dimension, variant, 'status', { equals: 401 }, [dimension.rule]),
            expect(dimension, variant, 'error-body', { schema: 'UnauthorizedError' }, [dimension.rule]),
          ],
        },
      ],
    },
    {
      id: `order-key-${variant}`,
      title: `An order with ${variant === 'expired' ? 'an expired key' : `a near miss of the key (${variant})`} is refused (401 as the energy query answers; the order endpoint's error bodies are open, U-CODES)`,
      rules: ['AUTH-KEY', 'U-CODES'],
      needs: ['userId', 'orders', ...keyNeeds(variant)],
      steps: [
        {
          request: { endpoint: 'order', ...keyOf(variant), plain: withdrawal('{{id}}') },
          expect: [
            expect(dimension, variant, 'refused', {}, ['AUTH-KEY']),
            { check: 'status', equals: 401, rules: ['U-CODES'] },
            { check: 'error-body', schema: 'UnauthorizedError', rules: ['U-CODES'] },
          ],
        },
      ],
    },
  ]);
}

export const SERVICE_GENERATORS: Generators = {
  'exact-comparison': keyNearMisses,
};
