import type { ServiceContext, ServiceRandom } from '../service/service-context.js';
import { MemoryServiceState } from '../service/memory-state.js';
import { DEFAULT_POLICIES } from '../service/policies.js';
import type { ResolvedMerchant } from './merchants.js';

/**
 * What one set of handlers remembers between requests: the service's state in memory
 * (src/service/memory-state.ts) and the numbering of requestIds and bizIds. Every card of a known
 * merchant counts as open until it is closed here (`unknownCards: 'open'`): a merchant's unit test
 * closes cards it never registered.
 */
interface MockState {
  readonly service: MemoryServiceState;
  /** Numbers requestId, bizId and the service's ids, so answers are deterministic. */
  sequence: number;
}

/** A fresh state for the merchants of one set of handlers (their energy objects are the live balances). */
export function createMockState(merchants: readonly ResolvedMerchant[]): MockState {
  return { service: new MemoryServiceState({ merchants, unknownCards: 'open' }), sequence: 0 };
}

/** The next id of the handlers: `<prefix>-msw-000001`. */
export function nextId(state: MockState, prefix: string): string {
  state.sequence += 1;
  return `${prefix}-msw-${String(state.sequence).padStart(6, '0')}`;
}

/** Deterministic ids for the service (txids, trackingIds of withdrawal callbacks, which MSW never sends). */
function sequenceRandom(state: MockState): ServiceRandom {
  const next = () => (state.sequence += 1);
  return {
    hex: (bytes) =>
      next()
        .toString(16)
        .padStart(bytes * 2, '0'),
    uuid: () => `00000000-0000-4000-8000-${next().toString(16).padStart(12, '0')}`,
  };
}

/** The service (src/service) as one set of handlers runs it: in memory, default policies, no callbacks sent. */
export function mockServiceContext(state: MockState): ServiceContext {
  return {
    state: state.service,
    callbacks: { queued: () => undefined },
    policies: DEFAULT_POLICIES,
    now: () => Date.now(),
    random: sequenceRandom(state),
    withdrawalDelayMs: 0,
    bizId: () => nextId(state, 'biz'),
  };
}
