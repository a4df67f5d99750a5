import http from 'node:http';
import type { Socket } from 'node:net';
import { TransportError } from '../core/errors.js';
import { redactUserinfo } from './proxy.js';

/** The Proxy-Authorization header of a proxy URL with userinfo (Basic), else none. */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username && !proxy.password) return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/**
 * Opens a CONNECT tunnel through an HTTP proxy to `authority` (host:port), resolving with the raw
 * socket once the proxy answered 200. Any other answer or a dead proxy is a TransportError.
 */
export function openTunnel(
  proxy: URL,
  authority: string,
  onRequest: (req: http.ClientRequest) => void,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const shown = redactUserinfo(proxy.origin);
    const req = http.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: Number(proxy.port || 80),
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
      agent: false,
    });
    onRequest(req);
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) {
        resolve(socket);
        return;
      }
      socket.destroy();
      reject(
        new TransportError('proxy', `the proxy ${shown} answered ${res.statusCode ?? 0} to CONNECT ${authority}`, {
          cause: { status: res.statusCode },
        }),
      );
    });
    req.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new TransportError(
          'proxy',
          `the proxy ${shown} (for CONNECT ${authority}) failed: ${error.code ?? ''} ${error.message}`.replace(
            /\s+/g,
            ' ',
          ),
        ),
      );
    });
    req.end();
  });
}
