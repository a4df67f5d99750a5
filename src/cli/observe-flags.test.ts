import { describe, expect, it } from 'vitest';
import { upstreamFlag } from './observe-flags.js';

describe("observe's upstream flags", () => {
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
