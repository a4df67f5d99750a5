import type { StrangerKeys } from '../runner/context.js';
import type { MerchantTarget } from '../runner/types.js';
import { callbacksMangled } from './callbacks-mangled.js';
import { callbacksOnce } from './callbacks-once.js';
import { merchantEnv } from './merchant-exchange.js';
import type { Property } from './property.js';

/** The merchant properties, in the order they run (an explicit list). */
export function merchantProperties(target: MerchantTarget, stranger: StrangerKeys): Property<never>[] {
  const env = merchantEnv(target, stranger);
  return [callbacksOnce(env), callbacksMangled(env)] as Property<never>[];
}
