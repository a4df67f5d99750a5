import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../platform/http-io.js';
import { createWebServer } from '../net/server-tls.js';
import type { ServiceContext } from '../service/service-context.js';
import { SERVICE_OPERATIONS } from '../service/operations.js';
import { ApiKeyIndex } from './api-keys.js';
import { CARD_CLOSE_PATH, sendCardFailure } from './card-close.js';
import type { EmulatorConfig, EmulatorMerchant } from './config.js';
import {
  cryptoRandom,
  type EmulatorClock,
  type EmulatorContext,
  type EmulatorLog,
  type EmulatorRandom,
} from './emulator-context.js';
import { CONTROL_PREFIX, serveControl } from './control-api.js';
import { CallbackDispatcher } from './dispatcher.js';
import { sendFailure, sendNotFound, whyOf } from './envelope.js';
import { ORDER_PATHS, serveEndpoint, type OrderEndpoint } from './order-endpoints.js';
import { requestCryptoOf, type CallbackSealer } from './seal-pool.js';
import { openEmulatorStore, storeServiceState } from './store.js';
import type { EmulatorVariant } from './variant.js';
import { EMULATOR_HEADER } from './header.js';

/** Options of {@link startEmulator}; everything but the config is optional. */
interface StartEmulatorOptions {
  /** Port to listen on (default: the config's `port`, else 0 = any free port). */
  port?: number;
  /** Address to listen on (default: the config's `host`, 127.0.0.1). */
  host?: string;
  clock?: EmulatorClock;
  random?: EmulatorRandom;
  /** A deliberately different emulator for the toolkit's own tests (variant.ts); never from the YAML. */
  variant?: EmulatorVariant;
  /** One line per request and per callback attempt; quiet when absent. */
  log?: EmulatorLog;
  /**
   * Where callbacks are sealed (default: the emulator's own pool of sealing threads, loaded at start
   * and stopped by `close`). A sealer passed in is the caller's to close: emulators started one after
   * another in one process (a test's table of variants) share its threads instead of loading new ones.
   */
  sealer?: CallbackSealer;
}

/** A running service emulator. */
export interface RunningEmulator {
  /** {base_url}, e.g. http://127.0.0.1:PORT (order endpoints and /__control). */
  url: string;
  /** {card_base_url}: the same server. */
  cardUrl: string;
  port: number;
  config: EmulatorConfig;
  /** Stops accepting requests and callbacks; pending callbacks stay queued in the store. */
  close(): Promise<void>;
}

const ROUTES = new Map<string, OrderEndpoint | 'closeCard'>([
  [ORDER_PATHS.getEnergyMaxCount, 'getEnergyMaxCount'],
  [ORDER_PATHS.withdrawWithoutVerify, 'withdrawWithoutVerify'],
  [CARD_CLOSE_PATH, 'closeCard'],
]);

/**
 * Starts the service emulator: the order endpoints, card close and the control API on one
 * loopback server, state in SQLite, callbacks from a durable queue.
 *
 * @example const emulator = await startEmulator(loadEmulatorConfig('emu/emulator.yaml'), { port: 0 }); await emulator.close()
 */
export async function startEmulator(
  config: EmulatorConfig,
  options: StartEmulatorOptions = {},
): Promise<RunningEmulator> {
  const { ctx, dispatcher } = openContext(config, options);
  const { store } = ctx;
  const server = createServer(ctx);
  const host = options.host ?? config.host;
  try {
    await listen(server, options.port ?? config.port ?? 0, host);
  } catch (error) {
    await dispatcher.close();
    store.close();
    throw error;
  }
  // The sealing threads loaded, so the first callback does not wait for one.
  await dispatcher.ready();
  // Resume the durable queue: deliveries left by an earlier run are due now (or when their lease ends).
  dispatcher.wake();
  const { port } = server.address() as AddressInfo;
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    cardUrl: url,
    port,
    config,
    close() {
      closing ??= closeEmulator(server, dispatcher, store);
      return closing;
    },
  };
}

/** The emulator's context with its dispatcher: the store seeded, the service over it; the store is closed again if any of it fails. */
function openContext(
  config: EmulatorConfig,
  options: StartEmulatorOptions,
): { ctx: EmulatorContext; dispatcher: CallbackDispatcher } {
  const variant = options.variant ?? {};
  const store = openEmulatorStore(config.store);
  const now = options.clock ?? Date.now;
  const random = options.random ?? cryptoRandom;
  const merchants = new Map<number, EmulatorMerchant>(config.merchants.map((merchant) => [merchant.userId, merchant]));
  let dispatcher: CallbackDispatcher;
  let service: ServiceContext;
  let operations = SERVICE_OPERATIONS;
  try {
    for (const merchant of config.merchants)
      store.seedMerchant(merchant.userId, merchant.energy, merchant.callbackUrl, merchant.cards);
    dispatcher = new CallbackDispatcher({
      store,
      merchants,
      callbacks: config.callbacks,
      variant: variant.delivery,
      now,
      random,
      log: options.log,
      sealer: options.sealer,
    });
    const state = storeServiceState(store, merchants.keys());
    service = {
      state,
      callbacks: { queued: (callback) => dispatcher.wake(callback.dueAt) },
      // Read on every request: a test may change the config of a running emulator.
      get policies() {
        return variant.policies ? variant.policies(config.policies) : config.policies;
      },
      get withdrawalDelayMs() {
        return config.callbacks.withdrawalDelayMs;
      },
      now,
      random,
      bizId: () => `biz-${random.hex(8)}`,
    };
    if (variant.operations)
      operations = variant.operations(SERVICE_OPERATIONS, {
        state,
        merchants: config.merchants.map((merchant) => BigInt(merchant.userId)),
      });
  } catch (error) {
    store.close();
    throw error;
  }
  const ctx: EmulatorContext = {
    config,
    store,
    service,
    operations,
    variant,
    keys: new ApiKeyIndex(config.merchants, variant.keyEntries),
    merchants,
    now,
    random,
    requestCrypto: requestCryptoOf(dispatcher.sealer),
    wakeDispatcher: () => dispatcher.wake(),
    log: options.log,
  };
  return { ctx, dispatcher };
}

/** The HTTP(S) server with the emulator's limits on slow and malformed clients. */
function createServer(ctx: EmulatorContext): Server {
  const { config } = ctx;
  const server: Server = createWebServer(
    config.tls,
    {
      // Slow clients (slowloris) must not hold the emulator: bound the headers and the whole request.
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.headersTimeoutMs / 4))),
      keepAliveTimeout: 5_000,
    },
    (req, res) => handle(ctx, req, res),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // Malformed or too slow: answer the status Node would, then drop the connection (never a crash).
    const status =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : '400 Bad Request';
    if (error.code !== 'ECONNRESET' && socket.writable && !socket.writableEnded)
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });
  return server;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops the server (connections still open after a second are closed), then the dispatcher, then the store. */
async function closeEmulator(
  server: Server,
  dispatcher: CallbackDispatcher,
  store: EmulatorContext['store'],
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const forceClose = setTimeout(() => server.closeAllConnections(), 1_000);
  forceClose.unref();
  await dispatcher.close();
  await closed;
  clearTimeout(forceClose);
  store.close();
}

function handle(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  res.setHeader(EMULATOR_HEADER, '1');
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  if (ctx.log) {
    const log = ctx.log;
    res.on('finish', () => {
      const why = whyOf(res);
      log(
        `${req.method ?? '?'} ${path} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms${why ? ` ${why}` : ''}`,
      );
    });
  }
  const route = ROUTES.get(ctx.variant.route ? ctx.variant.route(path) : path);
  let work: Promise<void>;
  if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
    work = serveControl(ctx, req, res, path, new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1)));
  } else if (route !== undefined && req.method === 'POST') {
    work = serveEndpoint(ctx, route, req, res);
  } else {
    // ERR-404: any other path, or another method on an endpoint's path.
    req.resume();
    sendNotFound(ctx, res);
    return;
  }
  work.catch((error: unknown) => {
    // A bug of ours: answer in the endpoint's shape rather than crash or hang (bad input never crashes).
    ctx.log?.(`internal error on ${req.method ?? '?'} ${path}: ${(error as Error)?.stack ?? String(error)}`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (route === 'closeCard') sendCardFailure(ctx, res, `req-${ctx.random.uuid()}`, 'internal', 'internal error');
    else if (route !== undefined) sendFailure(ctx, res, 'internal', 'internal error');
    else sendJson(res, 500, { error: 'internal error' });
  });
}
