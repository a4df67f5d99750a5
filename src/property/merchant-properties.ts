import type { MerchantTarget, StrangerKeys } from '../runner/api.js';
import { callbacksMangled } from './callbacks-mangled.js';
import { callbacksOnce } from './callbacks-once.js';
import { merchantEnv } from './merchant-exchange.js';
import type { Property } from './property.js';

/** The merchant properties, in the order they run (an explicit list). */
export function merchantProperties(target: MerchantTarget, stranger: StrangerKeys): Property<never>[] {
  const env = merchantEnv(target, stranger);
  return [callbacksOnce(env), callbacksMangled(env)] as Property<never>[];
}
