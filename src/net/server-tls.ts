import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';

/** The `tls:` block of emulator.yaml and merchant.yaml, loaded: certificate and key (PEM). */
export interface ServerTls {
  cert: string;
  key: string;
  /** CA bundle (PEM) that client certificates must chain to; when given, a client certificate is required (mTLS). */
  clientCa?: string;
}

/**
 * Reads a `tls: {cert, key, clientCa?}` block of a YAML config; paths resolve against `baseDir`.
 * Every problem is one ConfigError line naming the file and the field.
 */
export function loadServerTls(raw: unknown, baseDir: string, source: string, where = 'tls'): ServerTls | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError('bad-config', `${source}: ${where} must be a mapping {cert: FILE, key: FILE}`);
  const block = raw as Record<string, unknown>;
  for (const name of Object.keys(block))
    if (!['cert', 'key', 'clientCa'].includes(name))
      throw new ConfigError('bad-config', `${source}: ${where}.${name} is not a field (cert, key, clientCa)`);
  const read = (field: string, required: boolean): string | undefined => {
    const value = block[field];
    if (value === undefined || value === null) {
      if (required) throw new ConfigError('bad-config', `${source}: ${where}.${field} is required (a PEM file)`);
      return undefined;
    }
    if (typeof value !== 'string' || value === '')
      throw new ConfigError('bad-config', `${source}: ${where}.${field} must be a file path`);
    try {
      return readFileSync(resolve(baseDir, value), 'utf8');
    } catch (error) {
      throw new ConfigError(
        'unreadable-file',
        `${source}: cannot read ${where}.${field} ${value}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    }
  };
  const tls: ServerTls = { cert: read('cert', true)!, key: read('key', true)! };
  const clientCa = read('clientCa', false);
  return clientCa ? { ...tls, clientCa } : tls;
}

/** An HTTP server, or an HTTPS one with the same options when `tls` is given. */
export function createWebServer(
  tls: ServerTls | undefined,
  options: http.ServerOptions,
  handler: http.RequestListener,
): http.Server {
  if (!tls) return http.createServer(options, handler);
  return https.createServer(
    {
      ...options,
      cert: tls.cert,
      key: tls.key,
      ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    },
    handler,
  );
}
