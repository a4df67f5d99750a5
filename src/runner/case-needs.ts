/**
 * The capability check: whether a case can run against this target, given the flags the user set
 * and the control routes the target offers. A case that cannot run is skipped with what it needs.
 */
import { routePath, type Capabilities } from './capabilities.js';
import { hasCasedLetter } from './merchant-steps.js';
import type { Case, Need } from './model.js';
import { routesOfStep } from './step-kinds.js';
import type { Target } from './types.js';

/** Which needs this target meets. */
function metNeeds(target: Target, capabilities: Capabilities): Record<Need, boolean> {
  if (target.side === 'service')
    return {
      userId: target.userId !== undefined,
      orders: target.allowOrders,
      control: Boolean(target.controlToken),
      forbiddenKey: Boolean(target.forbiddenKey),
      expiredKey: Boolean(target.expiredKey),
      futureKey: Boolean(target.futureKey),
      probe: false,
      receiver: Boolean(target.controlToken),
      listen: target.listenPort !== undefined,
      cards: Boolean(capabilities.routes['POST cards']?.present),
      restart: false,
      casedKey: hasCasedLetter(target.apiKey),
    };
  return {
    userId: true,
    orders: true,
    control: false,
    forbiddenKey: false,
    expiredKey: Boolean(target.expiredKey),
    futureKey: Boolean(target.futureKey),
    probe: Boolean(target.probeUrl ?? target.probeCmd),
    receiver: false,
    listen: false,
    cards: false,
    restart: Boolean(target.restartCmd ?? target.restartHook),
    casedKey: hasCasedLetter(target.apiKey),
  };
}

/** What the user gives to meet each need, as a skipped check says it. */
function needWords(target: Target): Record<Need, string> {
  return {
    userId: '--user-id',
    orders: '--allow-orders (order cases move money on a real service)',
    control: '--control-token',
    forbiddenKey: '--forbidden-key',
    expiredKey: '--expired-key',
    futureKey: '--future-key',
    probe: '--probe-url or --probe-cmd',
    receiver: '--control-token (to point callbacks at the runner)',
    listen: '--listen PORT (callbacks triggered by hand)',
    cards: `${routePath('POST cards', target.side === 'service' ? target : {})} (a control API extension that creates a card)`,
    restart: '--restart CMD (a command that takes the receiver down and lets it come back)',
    casedKey: 'an API key with letters (the one given has none, so no other letter case of it exists)',
  };
}

/** Why a case cannot run against this target, or undefined when it can. */
export function missingNeed(
  testCase: Case,
  target: Target,
  capabilities: Capabilities = { routes: {} },
): string | undefined {
  const met = metNeeds(target, capabilities);
  const missing = (testCase.needs ?? []).filter((need) => !met[need]);
  if (missing.length) {
    const words = needWords(target);
    const cards =
      missing.includes('cards') && target.side === 'service' && target.controlToken
        ? capabilities.routes['POST cards']
        : undefined;
    return `needs ${missing.map((need) => words[need]).join(', ')}${cards ? `: answered ${cards.detail.replace(/^answered /, '')}` : ''}`;
  }
  // Only the documented control API (docs/service-guide.md) is assumed of a target: a route it lacks skips the cases using it.
  if (target.side === 'service' && target.controlToken) {
    for (const step of testCase.steps) {
      for (const route of routesOfStep(step)) {
        const probe = capabilities.routes[route];
        if (probe && !probe.present) return `needs ${routePath(route, target)}: ${probe.detail}`;
      }
    }
  }
  return undefined;
}
