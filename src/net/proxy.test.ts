import { describe, expect, it } from 'vitest';
import { parseNoProxy, proxyFor, proxyFromEnv, redactUserinfo } from './proxy.js';

const route = (url: string, env: NodeJS.ProcessEnv) => proxyFor(new URL(url), proxyFromEnv(env))?.href;

describe('proxy choice (as curl reads HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY)', () => {
  it('sends https targets to HTTPS_PROXY and http targets to HTTP_PROXY, the lower-case name winning', () => {
    const env = { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2', HTTP_PROXY: 'http://plain:3' };
    expect(route('https://wallet.example/', env)).toBe('http://lower:2/');
    expect(route('http://wallet.example/', env)).toBe('http://plain:3/');
  });

  it('falls back to ALL_PROXY and reads a bare host:port as an http:// proxy', () => {
    expect(route('https://wallet.example/', { ALL_PROXY: 'proxy.corp:3128' })).toBe('http://proxy.corp:3128/');
    expect(route('https://wallet.example/', {})).toBeUndefined();
  });

  it('bypasses hosts and their subdomains, with or without a leading dot or *.', () => {
    const env = { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'corp.example, .internal,*.svc.local' };
    expect(route('https://corp.example/', env)).toBeUndefined();
    expect(route('https://api.corp.example/', env)).toBeUndefined();
    expect(route('https://wallet.internal/', env)).toBeUndefined();
    expect(route('https://a.svc.local/', env)).toBeUndefined();
    expect(route('https://notcorp.example/', env)).toBe('http://p:1/');
  });

  it('bypasses an entry with a port only on that port (the default port of the scheme counts)', () => {
    const env = { HTTPS_PROXY: 'http://p:1', no_proxy: 'wallet.example:8443,other.example:443' };
    expect(route('https://wallet.example:8443/', env)).toBeUndefined();
    expect(route('https://wallet.example/', env)).toBe('http://p:1/');
    expect(route('https://other.example/', env)).toBeUndefined();
  });

  it('bypasses IP addresses and CIDR ranges, IPv6 included, and everything with *', () => {
    const env = { HTTPS_PROXY: 'http://p:1', NO_PROXY: '10.0.0.0/8,192.168.1.7,[::1]' };
    expect(route('https://10.2.3.4/', env)).toBeUndefined();
    expect(route('https://192.168.1.7:9/', env)).toBeUndefined();
    expect(route('https://[::1]:8443/', env)).toBeUndefined();
    expect(route('https://11.0.0.1/', env)).toBe('http://p:1/');
    expect(route('https://anything.example/', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' })).toBeUndefined();
  });

  it('proxies loopback unless NO_PROXY lists it, as curl does', () => {
    expect(route('https://127.0.0.1:8443/', { HTTPS_PROXY: 'http://p:1' })).toBe('http://p:1/');
    expect(
      route('https://localhost:8443/', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'localhost,127.0.0.1' }),
    ).toBeUndefined();
  });

  it('refuses a proxy scheme it cannot speak, naming it without the password', () => {
    expect(() => proxyFromEnv({ HTTPS_PROXY: 'socks5://user:secret@p:1080' })).toThrow(
      /uses socks5:; only http:\/\/ proxies/,
    );
    expect(() => proxyFromEnv({ HTTPS_PROXY: 'socks5://user:secret@p:1080' })).not.toThrow(/secret/);
    expect(redactUserinfo('http://user:secret@p:1')).toBe('http://***@p:1');
  });

  it('ignores empty entries of NO_PROXY', () => {
    expect(parseNoProxy(' , ,')).toEqual([]);
  });
});
