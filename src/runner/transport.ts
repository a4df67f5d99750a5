import { send, type WireRequest, type WireResponse } from './http-client.js';

/**
 * How the runner reaches a target: one request exactly as it goes on the wire in, the answer as raw
 * bytes out; a failure is a rejected promise (a TransportError for the network's). The default
 * speaks HTTP(S) with node:http/https through src/net (TLS, proxies, answer cap, deadlines, the run
 * session); a test can inject one that answers in-process (test/support/msw-transport.ts).
 */
export interface Transport {
  send(request: WireRequest): Promise<WireResponse>;
}

/** HTTP(S) over the network, as every run did before transports could be injected. */
const nodeTransport: Transport = { send };

/**
 * The transport of a target: the one a run injected (`RunOptions.transport`), else HTTP(S).
 *
 * @example await transportOf(target).send({ method: 'GET', url: target.callbackUrl, headers: {} })
 */
export function transportOf(target: { transport?: Transport | undefined }): Transport {
  return target.transport ?? nodeTransport;
}
