import type { ExchangeKind, ObservedExchange } from './exchange.js';

/** The interface's order and card paths (spec/wallet-api.yaml), each under its server's base path. */
const PATH_KINDS: ReadonlyArray<readonly [suffix: string, kind: ExchangeKind]> = [
  ['/api/v1/api/order/getEnergyMaxCount', 'energy'],
  ['/api/v1/api/order/withdrawWithoutVerify', 'withdraw'],
  ['/card/close', 'card-close'],
];

/** Methods that carry no callback: health checks and probes on the callback listener. */
const NOT_A_DELIVERY = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Which leg of the interface an exchange is, from its direction, method and path alone (never its
 * body, which may not open). Orders and card close are recognised by their path in
 * spec/wallet-api.yaml, under any base path a gateway puts in front (`/wallet/card/close`), with
 * the query ignored; a path that merely contains them (`/card/close/x`) is `other`. Everything the
 * service sends to the merchant's callback listener is a delivery, whatever its path (the callback
 * URL is the merchant's choice), except GET/HEAD/OPTIONS, which no rule makes a callback.
 *
 * @example classify('merchant→service', 'POST', '/api/v1/api/order/getEnergyMaxCount?x=1') // 'energy'
 */
export function classify(direction: ObservedExchange['direction'], method: string, path: string): ExchangeKind {
  if (direction === 'service→merchant') return NOT_A_DELIVERY.has(method.toUpperCase()) ? 'other' : 'callback';
  const pathname = path.split(/[?#]/, 1)[0]!;
  for (const [suffix, kind] of PATH_KINDS) if (pathname.endsWith(suffix)) return kind;
  return 'other';
}
