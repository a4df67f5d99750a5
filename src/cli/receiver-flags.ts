import { isIP } from 'node:net';
import { ConfigError } from '../core/errors.js';

/**
 * `--listen-host HOST` and `--public-url URL` of the runner's callback receiver, checked up front
 * (one line, exit 2): a host is an IP address or a host name; the public URL is an http:// URL
 * (the receiver speaks plain HTTP; a TLS proxy in front of it may give an https:// one).
 */
export function receiverAddress(flags: { listenHost?: string; publicUrl?: string }): {
  listenHost?: string;
  publicUrl?: string;
} {
  const out: { listenHost?: string; publicUrl?: string } = {};
  if (flags.listenHost !== undefined) {
    const host = flags.listenHost.trim().replace(/^\[(.*)\]$/, '$1');
    if (
      !isIP(host) &&
      !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host)
    ) {
      throw new ConfigError(
        'bad-flag',
        `--listen-host takes an IP address or a host name, not ${JSON.stringify(flags.listenHost)}`,
      );
    }
    out.listenHost = host;
  }
  if (flags.publicUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(flags.publicUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      // Credentials in the URL are a secret: the line shows where they were, never what.
      const shown =
        url && (url.username || url.password) ? flags.publicUrl.replace(/\/\/[^/?#]*@/, '//…@') : flags.publicUrl;
      throw new ConfigError(
        'bad-url',
        `--public-url must be an http:// or https:// URL without credentials (where the service reaches the receiver), not ${JSON.stringify(shown)}`,
      );
    }
    out.publicUrl = flags.publicUrl;
  }
  return out;
}
