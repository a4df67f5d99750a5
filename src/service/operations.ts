import { closeCard } from './card-close.js';
import type { CardOutcome, EnvelopeOutcome, Plain, ServiceContext } from './service-context.js';
import { getEnergyMaxCount } from './energy.js';
import { withdrawWithoutVerify } from './order.js';
import type { MerchantId } from './state.js';

/**
 * The service's operations by operationId, as one record: the adapters (src/emulator, src/msw) call
 * them after the transport's part (key, Content-Type, form field, decryption, JSON), and a test may
 * hand an adapter decorated ones (a deliberately faulty service) without a branch in this code.
 */
export interface ServiceOperations {
  getEnergyMaxCount(ctx: ServiceContext, merchant: MerchantId, plain: Plain): EnvelopeOutcome;
  withdrawWithoutVerify(ctx: ServiceContext, merchant: MerchantId, plain: Plain): EnvelopeOutcome;
  /** `keyMerchant`: the merchant whose X-API-KEY came with the request, if one did (U-CARD-AUTH). */
  closeCard(ctx: ServiceContext, plain: Plain, keyMerchant?: MerchantId): CardOutcome;
}

/** The operations as the interface describes them. */
export const SERVICE_OPERATIONS: Readonly<ServiceOperations> = Object.freeze({
  getEnergyMaxCount,
  withdrawWithoutVerify,
  closeCard,
});
