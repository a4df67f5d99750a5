import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { noProxy, type ProxySettings } from './proxy.js';
import { RunSession } from './run-session.js';

/** Default cap on an answer's body (1 MiB): a bigger answer is a transport error naming the cap. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Default idle timeout of one request: no byte for this long ends it. */
const DEFAULT_IDLE_TIMEOUT_MS = 15_000;
/** Default overall deadline of one request, however slowly bytes trickle in. */
const DEFAULT_REQUEST_DEADLINE_MS = 60_000;

/** TLS settings of outgoing requests. */
interface TlsSettings {
  /** PEM certificates trusted besides the system roots (--ca, NODE_EXTRA_CA_CERTS). */
  extraCa: string[];
  /** Client certificate and key (PEM) for mTLS. */
  cert?: string;
  key?: string;
  /** Skip certificate verification (--insecure). */
  insecure: boolean;
}

/**
 * How the toolkit reaches a target: TLS trust and identity, proxies, limits. One value per run,
 * with the run's session (which origins answered, whether the run was cut).
 */
export interface NetworkConfig {
  tls: TlsSettings;
  proxy: ProxySettings;
  maxBodyBytes: number;
  idleTimeoutMs: number;
  requestDeadlineMs: number;
  session: RunSession;
}

/** A direct, verifying network with the default limits; `NODE_EXTRA_CA_CERTS` is trusted as Node does. */
export function defaultNetwork(overrides: Partial<Omit<NetworkConfig, 'session'>> = {}): NetworkConfig {
  return {
    tls: { extraCa: extraCaFromEnv(), insecure: false },
    proxy: noProxy(),
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
    requestDeadlineMs: DEFAULT_REQUEST_DEADLINE_MS,
    ...overrides,
    session: new RunSession(),
  };
}

/**
 * The certificates of `NODE_EXTRA_CA_CERTS`: Node adds them to its default store, but an explicit
 * `ca` option replaces that store, so they are read again here (a missing file is ignored as Node does).
 */
function extraCaFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return splitPem(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
}

/** The PEM certificates in a bundle, one string each. */
export function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** The `ca` option for node:tls: the system roots plus the extra ones, or undefined for the default store. */
export function trustedCa(tls: TlsSettings): string[] | undefined {
  return tls.extraCa.length === 0 ? undefined : [...rootCertificates, ...tls.extraCa];
}

/** What report.json's target says about the network, when anything differs from the default. */
export function describeNetwork(config: NetworkConfig): Record<string, unknown> {
  const tls = {
    ...(config.tls.insecure ? { insecure: true } : {}),
    ...(config.tls.extraCa.length ? { extraCaCertificates: config.tls.extraCa.length } : {}),
    ...(config.tls.cert ? { clientCertificate: true } : {}),
  };
  return Object.keys(tls).length ? { tls } : {};
}

/**
 * What a report says about the run's network and how it ended: `tls: {insecure: true}` and the like
 * (only when `target` names an https:// URL), and `cut: {reason, message}` when the target stopped
 * answering or --timeout ran out.
 */
export function networkNote(network: NetworkConfig, target: Record<string, unknown>): Record<string, unknown> {
  const stopped = network.session.stopped;
  // TLS settings mean something only where the run spoke TLS: an http:// target's report does not name them.
  const https = JSON.stringify(target).includes('"https://');
  return {
    ...(https ? describeNetwork(network) : {}),
    ...(stopped ? { cut: { reason: stopped.reason, message: stopped.message } } : {}),
  };
}
