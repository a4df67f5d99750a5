import { getResponse, type RequestHandler } from 'msw';
import { TransportError } from '../../src/core/errors.js';
import type { Transport } from '../../src/runner/transport.js';

/**
 * A transport that answers in-process with MSW handlers (e.g. the generated wallet handlers): no
 * socket, no port, so a suite runs against `http://wallet.test` in milliseconds. A request no
 * handler takes is refused like an unreachable host.
 *
 * @example await runSuites({ target, suites, rules, transport: mswTransport(createWalletHandlers(options)) })
 */
export function mswTransport(handlers: RequestHandler[]): Transport {
  return {
    async send(request) {
      const started = performance.now();
      const body =
        request.body === undefined || request.method === 'GET' || request.method === 'HEAD'
          ? undefined
          : Buffer.from(request.body);
      const response = await getResponse(
        handlers,
        new Request(request.url, {
          method: request.method,
          headers: request.headers,
          ...(body === undefined ? {} : { body }),
        }),
      );
      if (!response)
        throw new TransportError('unreachable', `${request.method} ${request.url}: no in-process handler answers it`);
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: Buffer.from(await response.arrayBuffer()),
        durationMs: performance.now() - started,
      };
    },
  };
}
