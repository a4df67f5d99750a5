// wallet-conformance/msw/browser (and `wallet-conformance/msw` under the `browser` condition): the
// generated handlers with the node-forge codec as default, for setupWorker in a page. Nothing here
// reaches node:crypto; the package's `browser` field maps the lazy node:crypto codec to the forge one.
import type { HttpHandler } from 'msw';
import { createWalletHandlers as createNodeHandlers, type WalletHandlersOptions } from '../generated/msw-handlers.js';
import { forgeCodec } from './forge-codec.js';

export { forgeCodec } from './forge-codec.js';
export {
  SPEC_SHA256,
  WALLET_ENDPOINTS,
  WALLET_SCENARIOS,
  createWalletMock,
  type MerchantCrypto,
  type OpenOutcome,
  type WalletCall,
  type WalletCodec,
  type WalletEndpoint,
  type WalletHandlersOptions,
  type WalletMerchant,
  type WalletMock,
  type WalletOperationId,
  type WalletScenario,
} from '../generated/msw-handlers.js';

/**
 * The wallet service as msw handlers for `setupWorker`, crypto on node-forge unless `codec` is given.
 *
 * @example setupWorker(...createWalletHandlers({ baseUrl: 'https://wallet.test', merchants: [{ userId: 10086, apiKey: 'ak_test', privateKey: pem }] })).start()
 */
export function createWalletHandlers(options: WalletHandlersOptions): HttpHandler[] {
  return createNodeHandlers({ ...options, codec: options.codec ?? forgeCodec });
}
