import type { Capabilities, ControlRoute } from './capabilities.js';
import { routePath } from './capabilities.js';
import { parseExactJson } from '../core/exact-json.js';
import {
  controlSetCallbackUrl,
  controlSetEnergy,
  type ControlAnswer,
  type ControlEnergy,
} from '../generated/control-client.js';
import { controlClientOf, merchantOf } from './control.js';
import type { ServiceTarget } from './types.js';

/** The control state a run may change, as read before the run (undefined: the target offers no read route). */
interface ControlSnapshot {
  /** As the target answered it (exact numbers; written back as read). */
  energy?: ControlEnergy;
  /** null: none was set before the run (there is nothing to put back). */
  callbackUrl?: string | null;
}

function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return parseExactJson(text);
  } catch {
    return undefined;
  }
}

/** What the capability probe already read: GET energy and GET callback-url, when offered. */
export function snapshotControlState(capabilities: Capabilities): ControlSnapshot {
  const energy = parsed(capabilities.routes['GET energy']?.text) as
    { balance?: unknown; costPerTx?: unknown } | undefined;
  const callback = parsed(capabilities.routes['GET callback-url']?.text) as { url?: unknown } | undefined;
  return {
    ...(energy && energy.balance !== undefined && energy.costPerTx !== undefined
      ? { energy: { balance: energy.balance, costPerTx: energy.costPerTx } as ControlEnergy }
      : {}),
    ...(typeof callback?.url === 'string' || callback?.url === null ? { callbackUrl: callback.url } : {}),
  };
}

/**
 * Puts back what the run changed through the control API (energy, callback URL), so `verify`
 * leaves a target as it found it. Returns one note per thing restored or not restorable.
 */
export async function restoreControlState(
  snapshot: ControlSnapshot,
  touched: Set<ControlRoute>,
  target: ServiceTarget,
): Promise<string[]> {
  const notes: string[] = [];
  const client = controlClientOf(target);
  const merchant = merchantOf(target);
  const restore = async <T>(
    what: string,
    route: ControlRoute,
    read: ControlRoute,
    value: T | undefined,
    put: (value: T) => Promise<ControlAnswer<unknown>>,
  ) => {
    if (!touched.has(route)) return;
    if (value === undefined) {
      notes.push(
        `${what} not restored: the run changed it, and the target offers no ${routePath(read, target)} to read it before the run`,
      );
      return;
    }
    try {
      const answer = await put(value);
      notes.push(
        answer.status >= 200 && answer.status < 300
          ? `${what} restored to its value before the run`
          : `${what} not restored: ${routePath(route, target)} answered ${answer.status}`,
      );
    } catch (error) {
      notes.push(`${what} not restored: ${(error as Error).message}`);
    }
  };
  // The values are the target's own answers as read before the run (exact numbers), put back as they were.
  await restore('energy', 'PUT energy', 'GET energy', snapshot.energy, (energy) =>
    controlSetEnergy(client, merchant, energy),
  );
  if (snapshot.callbackUrl === null && touched.has('PUT callback-url'))
    notes.push('callback URL not restored: none was set before the run, and the control API cannot unset it');
  else
    await restore(
      'callback URL',
      'PUT callback-url',
      'GET callback-url',
      snapshot.callbackUrl == null ? undefined : { url: snapshot.callbackUrl },
      (url) => controlSetCallbackUrl(client, merchant, url),
    );
  return notes;
}
