import type { Exchange } from './observation.js';

/** How many exchanges a result shows in full; the rest are only counted. */
const SHOWN = 6;

/** Evidence for a report: request and answer, plain beside wire (keys already redacted). */
export function evidenceOf(exchanges: Exchange[]): Record<string, unknown> {
  return {
    exchanges: exchanges.slice(0, SHOWN).map((exchange) => ({
      request: exchange.request,
      response: exchange.response ?? null,
      ...(exchange.error ? { error: exchange.error } : {}),
    })),
    ...(exchanges.length > SHOWN ? { more: exchanges.length - SHOWN } : {}),
  };
}
