import type { NetworkConfig } from '../net/network-config.js';
import { closeNetwork, send } from './http-client.js';
import type { Transport } from './transport.js';

/**
 * What one run passes down to its steps, the probe reader and the HTTP client: its network (TLS,
 * proxies, limits, and the session that knows which origins answered and whether the run was cut)
 * and the transport every request of the run goes through.
 */
export interface RunContext {
  network: NetworkConfig;
  transport: Transport;
}

/** A run's context while it runs; `close` ends what its requests opened. */
interface OpenRun extends RunContext {
  close(): void;
}

/**
 * Opens a run over `base`: the same settings and the same session (the CLI's `--timeout` clock and
 * its report of a cut read it), with connections of its own, which `close` ends (kept-alive
 * sockets, CONNECT tunnels). The transport is `injected` when given (in-process tests), else
 * HTTP(S) over the run's network.
 */
export function openRun(base: NetworkConfig, injected?: Transport): OpenRun {
  const network: NetworkConfig = { ...base };
  return {
    network,
    transport: injected ?? { send: (request) => send({ ...request, network: request.network ?? network }) },
    close: () => closeNetwork(network),
  };
}
