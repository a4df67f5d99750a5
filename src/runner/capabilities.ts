import {
  CONTROL_OPERATIONS,
  controlGetCallbackUrlRequest,
  controlGetEnergyRequest,
  controlListDeliveriesRequest,
  controlProbeRequest,
  type ControlOperationId,
  type ControlRequest,
} from '../generated/control-client.js';
import { controlClientOf, merchantOf } from './control.js';
import { transportOf } from './transport.js';
import type { ServiceTarget } from './types.js';

/**
 * A route of a service's control API. The manual fixes four (docs/service-guide.md, Control API) (`PUT energy`, `PUT callback-url`,
 * `POST callbacks`, `GET deliveries`); the rest are extensions some test doubles offer
 * (the toolkit's emulator offers `GET energy`, `GET callback-url` and `POST cards`).
 */
export type ControlRoute =
  | 'PUT energy'
  | 'GET energy'
  | 'PUT callback-url'
  | 'GET callback-url'
  | 'POST callbacks'
  | 'GET deliveries'
  | 'POST cards';

/** What one route answered when probed: whether it is there, and one line on why we think so. */
interface RouteProbe {
  present: boolean;
  detail: string;
  /** The answer's text, for read routes (the state to restore at the end). */
  text?: string;
}

/** What the target offers beyond the interface itself, found out before the suites run. */
export interface Capabilities {
  routes: Partial<Record<ControlRoute, RouteProbe>>;
}

/** The control operation (spec/wallet-api.yaml, tag control) behind each route. */
const OPERATION_OF: Readonly<Record<ControlRoute, ControlOperationId>> = {
  'GET energy': 'controlGetEnergy',
  'PUT energy': 'controlSetEnergy',
  'GET callback-url': 'controlGetCallbackUrl',
  'PUT callback-url': 'controlSetCallbackUrl',
  'POST callbacks': 'controlEmitCallback',
  'POST cards': 'controlOpenCard',
  'GET deliveries': 'controlListDeliveries',
};

/** The path of a control route for this target, as the user reads it in a skip reason. */
export function routePath(route: ControlRoute, target: Pick<ServiceTarget, 'userId'>): string {
  const { method, path } = CONTROL_OPERATIONS[OPERATION_OF[route]];
  return `${method} ${path.replace('{userId}', String(target.userId ?? '{userId}'))}`;
}

/** A control API call's answer means "no such route" (as opposed to "bad input" or "done"). */
function absent(status: number): boolean {
  return status === 404 || status === 405 || status === 501;
}

/**
 * Probes each control route without changing anything: read routes are read, write routes get a
 * body that is not JSON (every implementation refuses it before acting). 404, 405 and 501 mean the
 * route is not offered. A 401 is a route we cannot use (a wrong --control-token, or a token check
 * of the target's own: no rule binds the control API): the cases that need it are skipped, and
 * pre-flight warns when every route answered 401.
 */
export async function probeCapabilities(target: ServiceTarget): Promise<Capabilities> {
  const routes: Capabilities['routes'] = {};
  if (!target.controlToken) return { routes };
  const client = controlClientOf(target);
  const merchant = merchantOf(target);
  // Read routes are read (typed); write routes get a body that is not JSON, which no typed function
  // writes: the probe must change nothing, so it goes through controlProbeRequest.
  const write = (route: ControlRoute) => controlProbeRequest(client, OPERATION_OF[route], merchant, '{not json');
  const probes: Array<{ route: ControlRoute; request: ControlRequest }> = [
    { route: 'GET energy', request: controlGetEnergyRequest(client, merchant) },
    { route: 'PUT energy', request: write('PUT energy') },
    { route: 'GET callback-url', request: controlGetCallbackUrlRequest(client, merchant) },
    { route: 'PUT callback-url', request: write('PUT callback-url') },
    { route: 'POST callbacks', request: write('POST callbacks') },
    { route: 'POST cards', request: write('POST cards') },
    { route: 'GET deliveries', request: controlListDeliveriesRequest(client, { trackingId: 'wc-capability-probe' }) },
  ];
  await Promise.all(
    probes.map(async ({ route, request }) => {
      const { method } = request;
      const ask = () => transportOf(target).send(request);
      try {
        // One retry: a connection lost once must not skip every case that needs the route.
        const answer = await ask().catch(ask);
        const text = answer.body.toString('utf8');
        routes[route] =
          absent(answer.status) || answer.status === 401
            ? {
                present: false,
                detail: answer.status === 401 ? 'answered 401 to --control-token' : `answered ${answer.status}`,
              }
            : {
                present: true,
                detail: `answered ${answer.status}`,
                ...(method === 'GET' && answer.status === 200 ? { text } : {}),
              };
      } catch (error) {
        routes[route] = { present: false, detail: `no answer: ${(error as Error).message}` };
      }
    }),
  );
  return { routes };
}
