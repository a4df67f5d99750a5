import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { defaultNetwork } from '../net/network-config.js';
import { useNetwork } from '../runner/http-client.js';
import { reachWithin, waitForMs } from './wait-for.js';
import { refusal } from '../../test/support/refusal.js';

describe('--wait-for SECONDS', () => {
  it.each<[string | undefined, number]>([
    [undefined, 0],
    ['0', 0],
    ['2', 2000],
    [' 1.5 ', 1500],
    ['0.0004', 0],
    ['3600', 3_600_000],
  ])('%j waits %d ms', (value, ms) => {
    expect(waitForMs(value)).toBe(ms);
  });

  it.each([['-1'], ['3600.5'], ['1e2'], ['soon'], [''], ['10s']])('refuses %j in one line', (value) => {
    expect(refusal(() => waitForMs(value))).toEqual([
      'bad-flag',
      `--wait-for takes a number of seconds from 0 to 3600, not ${JSON.stringify(value)}`,
    ]);
  });
});

describe('reaching a target before the run', () => {
  const listen = async (status: number): Promise<Server> => {
    const server = createServer((_req, res) => res.writeHead(status, { 'x-seen': 'yes' }).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  };
  const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

  it('takes any answer as up, a 404 included, and returns its headers', async () => {
    const server = await listen(404);
    try {
      expect((await reachWithin(urlOf(server), '--base-url', 0))['x-seen']).toBe('yes');
    } finally {
      await close(server);
    }
  });

  it('takes a gateway 503 as up when there is no wait left', async () => {
    const server = await listen(503);
    try {
      expect((await reachWithin(urlOf(server), '--base-url', 0))['x-seen']).toBe('yes');
    } finally {
      await close(server);
    }
  });

  it('says in one line that nothing answers, and how long it waited', async () => {
    const server = await listen(200);
    const url = urlOf(server);
    await close(server);
    const once = await reachWithin(url, '--callback-url', 0).catch((error: ConfigError) => [
      error.reason,
      error.message,
    ]);
    expect(once).toEqual([
      'unreachable',
      expect.stringMatching(
        new RegExp(`^--callback-url ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is unreachable: [^\\n]+$`),
      ),
    ]);
    expect((once as string[])[1]).not.toContain('waited');
    const waited = await reachWithin(url, '--callback-url', 120, { pauseMs: 40 }).catch(
      (error: ConfigError) => error.message,
    );
    expect(waited).toMatch(/ \(waited \d+(\.\d)? s with --wait-for 0\.1: \d+ attempts?\)$/);
  });

  it('does not call a target unreachable when --timeout ran out while waiting for it', async () => {
    const network = defaultNetwork();
    network.session.stop('run-timeout', 'the run was cut after --timeout 1 s');
    useNetwork(network);
    try {
      const cut = await reachWithin('http://127.0.0.1:9/', '--base-url', 0).catch((error: ConfigError) => [
        error.reason,
        error.message,
      ]);
      expect(cut).toEqual([
        'run-timeout',
        'the run was cut after --timeout 1 s while waiting for --base-url http://127.0.0.1:9/ to answer (not proven unreachable: give a longer --timeout)',
      ]);
    } finally {
      useNetwork(defaultNetwork());
    }
  });
});
