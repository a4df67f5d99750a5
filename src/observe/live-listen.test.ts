import { describe, expect, it } from 'vitest';
import { exposedListenerWarnings } from './live-listen.js';

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
});
