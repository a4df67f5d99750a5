import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../platform/http-io.js';
import { createWebServer, type ServerTls } from '../net/server-tls.js';
import {
  createCallbackReceiver,
  serveCallback,
  ERR_CODES,
  type CallbackHandlerOptions,
  type ProcessCallback,
} from './callback-handler.js';
import { openStore } from './open-store.js';
import { serveProbe, type ProbeOptions } from './probe.js';
import type { IdempotencyStore } from './store.js';

/** What the reference merchant server runs with. */
export interface MerchantServerConfig extends Omit<CallbackHandlerOptions, 'store' | 'process'> {
  /**
   * A store instance (the caller closes it), or a `postgres://` URL, a SQLite path or `:memory:`
   * (opened here and closed with the server).
   */
  store: IdempotencyStore | string;
  /** Business processing; the reference merchant's default does nothing beyond recording the event for the probe. */
  process?: ProcessCallback;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the probe needs no token unless `probe.token` is set, so it is not exposed by default. */
  host?: string;
  /** The probe's token and answer deadline (src/merchant/probe.ts, docs/probe.md). */
  probe?: ProbeOptions;
  /** Whole-request deadline for slow senders, ms (default 10 s). */
  requestTimeoutMs?: number;
  /** Serve HTTPS with this certificate and key (merchant.yaml's `tls:`). */
  tls?: ServerTls;
}

/** A running reference merchant. */
export interface MerchantServer {
  /** Base URL, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  callbackUrl: string;
  probeUrl: string;
  port: number;
  store: IdempotencyStore;
  /** Stops accepting, ends open connections, and closes a store the server opened. */
  close(): Promise<void>;
}

/**
 * Starts the reference merchant receiver: `POST /callback` (the receiver), `GET /probe` (the
 * processing probe, paged: docs/probe.md), JSON 404 for anything else.
 *
 * @example const merchant = await startMerchantServer({ apiKeys: ['k'], publicKey, store: ':memory:' }); await merchant.close()
 */
export async function startMerchantServer(config: MerchantServerConfig): Promise<MerchantServer> {
  const ownsStore = typeof config.store === 'string';
  const store = typeof config.store === 'string' ? await openStore(config.store) : config.store;
  let receiver;
  try {
    receiver = createCallbackReceiver({ ...config, store, process: config.process ?? (() => undefined) });
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }

  const requestTimeout = config.requestTimeoutMs ?? 10_000;
  // Slow senders (slowloris) must not hold the receiver: bound headers and the whole request, and
  // check the bounds every second rather than Node's default 30 s.
  const server: Server = createWebServer(
    config.tls,
    { requestTimeout, headersTimeout: Math.min(5_000, requestTimeout), connectionsCheckingInterval: 1_000 },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const route = async () => {
        if (path === '/callback') return serveCallback(receiver, req, res);
        req.resume();
        if (path === '/probe' && (req.method === 'GET' || req.method === 'HEAD'))
          return serveProbe(req, res, store, config.probe);
        return sendJson(res, 404, {
          errCode: 404,
          message: `not found: ${req.method ?? ''} ${path ?? ''}; the merchant serves POST /callback and GET /probe`,
        });
      };
      route().catch(() => {
        if (!res.headersSent) sendJson(res, 500, { errCode: ERR_CODES.failed, message: 'internal error' });
        else res.destroy();
      });
    },
  );
  server.keepAliveTimeout = 5_000;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port ?? 0, config.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host ?? '127.0.0.1';
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    callbackUrl: `${url}/callback`,
    probeUrl: `${url}/probe`,
    port,
    store,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Deliveries in progress may finish (their answer tells the service the truth); idle
        // keep-alive connections go now, anything still open after a grace period is cut.
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1_000).unref();
      }).then(() => (ownsStore ? store.close() : undefined));
      return closing;
    },
  };
}
