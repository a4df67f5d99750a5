import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../platform/http-io.js';
import { send } from '../runner/http-client.js';
import type { NetworkConfig } from '../net/network-config.js';

/** A loopback HTTP endpoint that forwards every request to a target through the toolkit's network layer. */
interface Relay {
  /** http://127.0.0.1:PORT: use it in place of the target's base URL. */
  url: string;
  close(): Promise<void>;
}

/** Hop-by-hop headers and those the network layer sets itself. */
const DROPPED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'te',
  'trailer',
]);

/**
 * Starts a relay to `base` (http or https): a tool that can only speak plain HTTP to a provider
 * (the Pact verifier) then reaches an HTTPS target with --ca, --cert/--key, the proxy variables and
 * the answer cap, exactly as the runner does. Headers and body pass unchanged but for hop-by-hop ones.
 */
async function startRelay(base: string, network?: NetworkConfig): Promise<Relay> {
  const target = base.replace(/\/+$/, '');
  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req, network?.maxBodyBytes ?? 16 * 1024 * 1024);
      if (!body.ok) {
        res.writeHead(413).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined && !DROPPED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      try {
        const answer = await send({
          method: req.method ?? 'GET',
          url: `${target}${req.url ?? '/'}`,
          headers,
          ...(body.body.length || !['GET', 'HEAD'].includes(req.method ?? 'GET') ? { body: body.body } : {}),
          ...(network ? { network } : {}),
        });
        const out: Record<string, string> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!DROPPED.has(name)) out[name] = value;
        res.writeHead(answer.status, { ...out, 'content-length': String(answer.body.length) }).end(answer.body);
      } catch (error) {
        const text = JSON.stringify({ relayError: (error as Error).message });
        res
          .writeHead(502, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
          .end(text);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider URLs the Pact verifier is given, and how to stop the relays behind them. */
interface PactEndpoints {
  baseUrl: string;
  cardBaseUrl: string;
  close(): Promise<void>;
}

/**
 * For `pact verify`: the Pact verifier's own proxy cannot trust a --ca, present a client certificate
 * or honour NO_PROXY, and skips TLS verification by default. When the target is HTTPS or a proxy
 * applies, it is given loopback relays instead, and the proxy variables are moved out of its sight
 * (upper case to lower case, loopback added to no_proxy) so that only the relays reach the target.
 */
export async function pactEndpoints(
  baseUrl: string,
  cardBaseUrl: string,
  network: NetworkConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PactEndpoints> {
  const needsRelay = (url: string) =>
    url.startsWith('https:') || network.proxy.http !== undefined || network.proxy.https !== undefined;
  if (!needsRelay(baseUrl) && !needsRelay(cardBaseUrl)) return { baseUrl, cardBaseUrl, close: async () => undefined };
  for (const name of ['HTTPS_PROXY', 'HTTP_PROXY'] as const) {
    const lower = name.toLowerCase();
    if (env[name] !== undefined) env[lower] ??= env[name];
    delete env[name];
  }
  env.no_proxy = [env.no_proxy ?? env.NO_PROXY, '127.0.0.1', 'localhost'].filter(Boolean).join(',');
  const base = await startRelay(baseUrl, network);
  const card = cardBaseUrl === baseUrl ? base : await startRelay(cardBaseUrl, network);
  return {
    baseUrl: base.url,
    cardBaseUrl: card.url,
    close: async () => {
      await base.close();
      if (card !== base) await card.close();
    },
  };
}
