import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../core/errors.js';

/** The proxies of a run, as read from the environment. */
export interface ProxySettings {
  /** Proxy for https:// targets (a CONNECT tunnel), if any. */
  https?: URL;
  /** Proxy for http:// targets (absolute-form requests), if any. */
  http?: URL;
  /** The NO_PROXY entries, parsed. */
  bypass: NoProxyEntry[];
}

/** One NO_PROXY entry: `*`, a host or domain suffix, an IP or CIDR range, each with an optional port. */
type NoProxyEntry =
  { kind: 'all' } | { kind: 'host'; host: string; port?: number } | { kind: 'ip'; range: BlockList; port?: number };

/** No proxy at all: the embedded run and the toolkit's own servers are always reached directly. */
export function noProxy(): ProxySettings {
  return { bypass: [] };
}

/**
 * Reads the proxies as curl does: `https_proxy`/`HTTPS_PROXY` for https://, `http_proxy` (and, as npm
 * does, `HTTP_PROXY`) for http://, `all_proxy`/`ALL_PROXY` as the fallback of both, the lower-case
 * name winning; `no_proxy`/`NO_PROXY` lists the exceptions. Loopback is proxied unless listed, as in curl.
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const pick = (...names: string[]) =>
    names.map((name) => env[name]).find((value) => value !== undefined && value.trim() !== '');
  const all = pick('all_proxy', 'ALL_PROXY');
  const https = pick('https_proxy', 'HTTPS_PROXY') ?? all;
  const http = pick('http_proxy', 'HTTP_PROXY') ?? all;
  return {
    ...(https ? { https: proxyUrl(https) } : {}),
    ...(http ? { http: proxyUrl(http) } : {}),
    bypass: parseNoProxy(pick('no_proxy', 'NO_PROXY') ?? ''),
  };
}

/** A proxy URL; a bare `host:port` means http:// as in curl. Only HTTP proxies are supported. */
function proxyUrl(text: string): URL {
  const value = /^[a-z][a-z0-9+.-]*:\/\//i.test(text.trim()) ? text.trim() : `http://${text.trim()}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      'bad-proxy',
      `the proxy ${JSON.stringify(redactUserinfo(text))} from the environment is not a URL`,
    );
  }
  if (url.protocol !== 'http:')
    throw new ConfigError(
      'bad-proxy',
      `the proxy ${redactUserinfo(text)} uses ${url.protocol}; only http:// proxies are supported (CONNECT for https targets)`,
    );
  return url;
}

/** Parses NO_PROXY: entries separated by commas or spaces; a leading `.` or `*.` means the same as none. */
export function parseNoProxy(text: string): NoProxyEntry[] {
  const entries: NoProxyEntry[] = [];
  for (const raw of text.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') {
      entries.push({ kind: 'all' });
      continue;
    }
    const { host, port } = splitPort(entry.replace(/^\*?\./, ''));
    const [address, bits] = host.split('/') as [string, string | undefined];
    const family = isIP(address);
    if (family) {
      const range = new BlockList();
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits !== undefined && /^\d+$/.test(bits)) range.addSubnet(address, Number(bits), type);
      else range.addAddress(address, type);
      entries.push({ kind: 'ip', range, ...(port === undefined ? {} : { port }) });
    } else if (host) entries.push({ kind: 'host', host, ...(port === undefined ? {} : { port }) });
  }
  return entries;
}

function splitPort(entry: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { host: withPort[1]!, port: Number(withPort[2]) };
  return { host: entry };
}

/** The proxy a request to `target` goes through, or undefined to connect directly. */
export function proxyFor(target: URL, settings: ProxySettings): URL | undefined {
  const proxy = target.protocol === 'https:' ? settings.https : settings.http;
  if (!proxy) return undefined;
  const host = target.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const family = isIP(host);
  for (const entry of settings.bypass) {
    if (entry.kind === 'all') return undefined;
    if (entry.port !== undefined && entry.port !== port) continue;
    if (entry.kind === 'ip' && family && entry.range.check(host, family === 4 ? 'ipv4' : 'ipv6')) return undefined;
    if (entry.kind === 'host' && (host === entry.host || host.endsWith(`.${entry.host}`))) return undefined;
  }
  return proxy;
}

/** A proxy URL for messages: never its password. */
export function redactUserinfo(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/, '//***@');
}
