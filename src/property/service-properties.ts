import type { Capabilities, ServiceTarget, StrangerKeys } from '../runner/api.js';
import type { Property } from './property.js';
import { serviceEnv } from './service-exchange.js';
import { validRequests } from './valid-requests.js';
import { oneRuleBroken } from './one-rule-broken.js';
import { cryptoMangled } from './crypto-mangled.js';
import { edges } from './edges.js';
import { stateful } from './stateful.js';

/** The service properties, in the order they run (an explicit list, as checks/index.ts is). */
export function serviceProperties(
  target: ServiceTarget,
  stranger: StrangerKeys,
  capabilities?: Capabilities,
): Property<never>[] {
  const env = serviceEnv(target, stranger);
  return [
    validRequests(env),
    oneRuleBroken(env),
    cryptoMangled(env),
    edges(env),
    stateful(env, capabilities),
  ] as Property<never>[];
}
