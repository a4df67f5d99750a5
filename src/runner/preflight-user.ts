import { randomInt } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import { controlProbeRequest, sendControlRequest, type ControlRequest } from '../generated/control-client.js';
import { controlClientOf } from './control.js';
import { joinUrl } from './service-steps.js';
import type { PreflightStep, ServiceTarget } from './types.js';

interface Answer {
  status: number;
  text: string;
}

/** One answer with the merchant id taken out, so the answers for two ids compare. */
function shape(answer: Answer | undefined, id: string): string {
  return answer ? `${answer.status} ${answer.text.split(id).join('{userId}').trim()}` : 'no answer';
}

function shown(answer: Answer | undefined): string {
  if (!answer) return 'no answer';
  const flat = answer.text.replace(/\s+/g, ' ').trim();
  return `HTTP ${answer.status}${flat ? ` ${flat.length > 100 ? `${flat.slice(0, 100)}…` : flat}` : ''}`;
}

/**
 * Is `--user-id` a merchant the service knows? Asked of the control API (`PUT
 * /__control/merchants/{userId}/energy`, with a body that is not JSON so nothing changes) for the
 * given id and for an id no merchant has; a route that does not exist is asked too. The id is proven
 * unknown (exit 2, one line with the answers) only when it is answered exactly like the id no
 * merchant has, and a missing route is answered differently (so the 404 is about the merchant, not
 * the route). An answer that cannot tell them apart is a warning step; a known id is an ok step.
 * Without --user-id or --control-token there is nothing to ask: no step.
 */
export async function checkUserId(target: ServiceTarget): Promise<PreflightStep | undefined> {
  if (target.userId === undefined || !target.controlToken) return undefined;
  const given = String(target.userId);
  // 16 digits (the longest id the emulator reads as a number), none handed out: 9 and 15 random digits.
  const nobody = `9${String(randomInt(0, 10 ** 9)).padStart(9, '0')}${String(randomInt(0, 10 ** 6)).padStart(6, '0')}`;
  const client = controlClientOf(target);
  const ask = async (request: ControlRequest): Promise<Answer | undefined> => {
    try {
      const answer = await sendControlRequest(client, request);
      return { status: answer.status, text: answer.text };
    } catch {
      return undefined;
    }
  };
  // Deliberate probes, which the typed functions cannot write: PUT energy with a body that is not JSON
  // (so nothing changes), and a route the control API does not have, which no operation of the spec
  // names, so its request is built by hand from the same base URL and token header.
  const energyProbe = (userId: string) => controlProbeRequest(client, 'controlSetEnergy', { userId }, '{not json');
  const mine = await ask(energyProbe(given));
  const stranger = await ask(energyProbe(nobody));
  const what = `PUT /__control/merchants/${given}/energy (a body that is not JSON: nothing changes), and the same for ${nobody}, an id no merchant has`;
  const observed = `--user-id ${given}: ${shown(mine)}; ${nobody}: ${shown(stranger)}`;
  if (!mine || !stranger || mine.status === 401 || stranger.status === 401) {
    return {
      what,
      observed,
      conclusion: 'the control API cannot tell whether --user-id is a merchant it knows; the suites run',
      level: 'warning',
    };
  }
  if (shape(mine, given) !== shape(stranger, nobody)) {
    return {
      what,
      observed,
      conclusion: `the control API answers --user-id ${given} otherwise than an id no merchant has: the service knows it`,
      level: 'ok',
    };
  }
  const missing = await ask({
    ...energyProbe(given),
    url: joinUrl(target.baseUrl, `/__control/merchants/${given}/wc-no-such-route`),
  });
  if (mine.status === 404 && missing && shape(missing, given) !== shape(mine, given)) {
    throw new ConfigError(
      'preflight',
      `pre-flight: --user-id ${given} is not a merchant the service knows: its control API answers it exactly as ${nobody}, an id no merchant has (${observed}), while a route that does not exist answers ${shown(missing)}`,
    );
  }
  return {
    what,
    observed: `${observed}; a route that does not exist: ${shown(missing)}`,
    conclusion: `the control API answers --user-id ${given} as it answers an id no merchant has, and cannot tell a missing route apart: --user-id is unproven; cases that need it may be skipped`,
    level: 'warning',
  };
}
