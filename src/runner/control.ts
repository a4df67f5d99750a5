import type { ControlClient, ControlId } from '../generated/control-client.js';
import { transportOf } from './transport.js';
import type { ServiceTarget } from './types.js';

/**
 * The generated control-API client (src/generated/control-client.ts) over the target's transport:
 * the run's, so a control request goes where every other request of the run goes (an injected
 * transport, or HTTP(S) over the run's network).
 */
export function controlClientOf(target: ServiceTarget): ControlClient {
  return {
    baseUrl: target.baseUrl,
    token: target.controlToken ?? '',
    send: (request) => transportOf(target).send(request),
  };
}

/** The merchant the control API is asked about: --user-id, else 0 (a target without one answers as it does). */
export function merchantOf(target: Pick<ServiceTarget, 'userId'>): { userId: ControlId } {
  return { userId: target.userId ?? 0 };
}
