import type { StrangerKeys } from '../runner/context.js';
import type { MerchantTarget } from '../runner/types.js';
import type { Property } from './property.js';

/** The merchant properties, in the order they run. */
export function merchantProperties(_target: MerchantTarget, _stranger: StrangerKeys): Property<never>[] {
  return [];
}
