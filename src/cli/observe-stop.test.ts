import { describe, expect, it } from 'vitest';
import { exposedListenerWarnings, upstreamFlag } from './observe-stop.js';

describe('observe at its start', () => {
  it('warns once per listener that accepts other machines, never for loopback', () => {
    const warnings = exposedListenerWarnings([
      { host: '0.0.0.0', port: 8081, direction: 'merchant→service' },
      { host: '::', port: 8082, direction: 'service→merchant' },
      { host: '127.0.0.1', port: 8083, direction: 'merchant→service' },
      { host: '::1', port: 8084, direction: 'merchant→service' },
      { host: 'localhost', port: 8085, direction: 'merchant→service' },
    ]);
    expect(warnings).toEqual([
      'wallet-conformance: observe: warning: --listen 0.0.0.0:8081 accepts connections from other machines: anyone who reaches it reaches the upstream through observe',
      'wallet-conformance: observe: warning: --callback-listen :::8082 accepts connections from other machines: anyone who reaches it reaches the upstream through observe',
    ]);
  });

  it('refuses credentials, a query or a fragment in an upstream URL instead of dropping them, and never repeats a password', () => {
    expect(upstreamFlag('https://gw.example/wallet', '--service-url')).toBe('https://gw.example/wallet');
    expect(() => upstreamFlag('https://u:pw-secret-1@gw.example/', '--service-url')).toThrow(
      /^--service-url carries credentials/,
    );
    expect(() => upstreamFlag('https://u:pw-secret-1@gw.example/', '--service-url')).not.toThrow(/pw-secret-1/);
    expect(() => upstreamFlag('https://gw.example/?a=1', '--service-url')).toThrow(/^--service-url has a query/);
    expect(() => upstreamFlag('https://gw.example/?', '--service-url')).toThrow(/^--service-url has a query/);
    expect(() => upstreamFlag('https://gw.example/#x', '--merchant-url')).toThrow(/^--merchant-url has a fragment/);
  });
});
