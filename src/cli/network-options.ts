import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { ConfigError, MESSAGE_PREFIX } from '../core/errors.js';
import { defaultNetwork, networkNote, splitPem, type NetworkConfig } from '../net/network-config.js';
import { proxyFromEnv } from '../net/proxy.js';
import { useNetwork } from '../runner/http-client.js';
import { parseInteger } from './options.js';

/** The network flags of every command that reaches a target. */
export interface NetworkFlags {
  ca?: string[];
  cert?: string;
  key?: string;
  insecure?: boolean;
  maxBody?: string;
  timeout?: string;
}

function readFlagFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'unreadable-file',
      `${flag} ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/**
 * Turns the flags and the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS) into
 * the run's network, checks the certificate files up front (one line, exit 2), warns once on stderr
 * for --insecure, starts the --timeout clock and makes the network the process's default.
 *
 * @example const network = networkFromFlags(flags); // ... run ...; report.target = { ...report.target, ...describeNetwork(network) }
 */
export function networkFromFlags(
  flags: NetworkFlags,
  options: { env?: NodeJS.ProcessEnv; warn?: (line: string) => void; proxy?: boolean } = {},
): NetworkConfig {
  const env = options.env ?? process.env;
  const base = defaultNetwork();
  const extraCa = [...base.tls.extraCa];
  for (const file of flags.ca ?? []) {
    const certificates = splitPem(readFlagFile(file, '--ca'));
    if (certificates.length === 0)
      throw new ConfigError('bad-certificate', `--ca ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    // OpenSSL skips a block it cannot read when it builds a context: a damaged certificate would go
    // unnoticed until a handshake failed, and that failure would read like the target's.
    certificates.forEach((certificate, i) => {
      try {
        new X509Certificate(certificate);
      } catch (error) {
        const which = certificates.length === 1 ? 'its certificate' : `certificate ${i + 1} of ${certificates.length}`;
        throw new ConfigError(
          'bad-certificate',
          `--ca ${file}: ${which} cannot be read: ${(error as Error).message.split('\n')[0]}`,
        );
      }
    });
    try {
      createSecureContext({ ca: certificates });
    } catch (error) {
      throw new ConfigError(
        'bad-certificate',
        `--ca ${file} is not a usable certificate bundle: ${(error as Error).message}`,
      );
    }
    extraCa.push(...certificates);
  }
  if (Boolean(flags.cert) !== Boolean(flags.key))
    throw new ConfigError('bad-flag', 'a client certificate needs both --cert FILE and --key FILE');
  const cert = flags.cert ? readFlagFile(flags.cert, '--cert') : undefined;
  const key = flags.key ? readFlagFile(flags.key, '--key') : undefined;
  if (cert && key) {
    try {
      createSecureContext({ cert, key });
    } catch (error) {
      // Never the key's content: only OpenSSL's reason.
      throw new ConfigError(
        'bad-certificate',
        `--cert ${flags.cert} and --key ${flags.key} are not a usable pair: ${(error as Error).message.split('\n')[0]}`,
      );
    }
  }
  const insecure = flags.insecure ?? false;
  if (insecure)
    (options.warn ?? ((line) => process.stderr.write(`${line}\n`)))(
      `${MESSAGE_PREFIX} warning: --insecure: TLS certificates are not verified; the reports note it`,
    );
  const network: NetworkConfig = {
    ...base,
    tls: { extraCa, insecure, ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
    proxy: options.proxy === false ? base.proxy : proxyFromEnv(env),
    maxBodyBytes:
      flags.maxBody === undefined ? base.maxBodyBytes : parseInteger(flags.maxBody, '--max-body', { min: 1 }),
  };
  if (flags.timeout !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(flags.timeout.trim()) || Number(flags.timeout) <= 0)
      throw new ConfigError(
        'bad-flag',
        `--timeout takes a positive number of seconds, not ${JSON.stringify(flags.timeout)}`,
      );
    network.session.setDeadline(Number(flags.timeout) * 1000);
  }
  useNetwork(network);
  return network;
}

/**
 * Ends the run's network: stops the --timeout clock, writes the network note into report.json's
 * target, and when the run was cut says so in one line on stderr. A target that stopped answering
 * (it answered earlier, then refused) fell over on what the run sent: the engine reported it as a
 * failure, so the status is the verdict's, at least 1. `--timeout` running out is the tool's stop:
 * exit 2. Otherwise `status` (what the verdict says).
 */
export function endRun(
  report: { target: Record<string, unknown> },
  network: NetworkConfig,
  write: () => number,
): number {
  network.session.clearDeadline();
  Object.assign(report.target, networkNote(network, report.target));
  const status = write();
  const stopped = network.session.stopped;
  if (!stopped) return status;
  if (stopped.reason === 'target-gone') {
    process.stderr.write(
      `${MESSAGE_PREFIX} the target stopped answering during the run (${stopped.message}): reported as a failure; the cases left were not run\n`,
    );
    return Math.max(status, 1);
  }
  process.stderr.write(`${MESSAGE_PREFIX} ${stopped.message}; the reports hold what ran before\n`);
  return 2;
}
