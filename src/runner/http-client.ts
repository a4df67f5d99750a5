import http from 'node:http';
import { TransportError } from '../core/errors.js';
import { stringifyExact } from '../core/exact-json.js';

/** A request exactly as it goes on the wire: no header is added that is not listed. */
export interface WireRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
}

/** The answer as received. */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  durationMs: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * Sends one HTTP request with node:http, so that a case can omit Content-Type or send bytes that
 * fetch would normalise. A refused connection or a time-out is a TransportError.
 */
export function send(request: WireRequest): Promise<WireResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      reject(new TransportError('bad-url', `not a URL: ${request.url}`));
      return;
    }
    if (url.protocol !== 'http:') {
      reject(new TransportError('bad-url', `only http:// targets are supported here, not ${url.protocol}`));
      return;
    }
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const headers: Record<string, string | number> = { ...request.headers };
    if (body !== undefined) headers['content-length'] = body.length;
    const req = http.request(url, { method: request.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks), durationMs: performance.now() - started });
      });
      res.on('error', (error) => reject(new TransportError('aborted', `${request.method} ${request.url}: ${error.message}`)));
    });
    req.setTimeout(request.timeoutMs ?? 15_000, () => req.destroy(new Error(`no answer within ${request.timeoutMs ?? 15_000} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ECONNREFUSED' ? 'unreachable' : 'transport';
      reject(new TransportError(reason, `${request.method} ${request.url}: ${error.code ?? ''} ${error.message}`.replace(/\s+/g, ' ')));
    });
    req.end(body);
  });
}

/** Sends JSON and parses a JSON answer (for control APIs and probes). */
export async function sendJsonRequest(method: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; text: string }> {
  const response = await send({
    method, url,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), accept: 'application/json', ...headers },
    ...(body === undefined ? {} : { body: stringifyExact(body) }),
  });
  const text = response.body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}
