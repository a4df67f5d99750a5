import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

describe('the package entry point', () => {
  it('loads from the built package under plain Node and exports the receiver, the crypto and the runner', () => {
    const script = `const m = await import('wallet-conformance');
      process.stdout.write(JSON.stringify(['createCallbackHandler', 'openSqliteStore', 'sealJson', 'openJson', 'validateSchema', 'runSuites', 'idempotencyKey'].map((name) => typeof m[name])));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(Array(7).fill('function'));
  });

  it('exports wallet-conformance/msw under plain Node: handlers that answer through msw/node', () => {
    const script = `const { createWalletHandlers, WALLET_SCENARIOS, WALLET_ENDPOINTS } = await import('wallet-conformance/msw');
      const { generateMerchantKeyPair } = await import('wallet-conformance');
      const { setupServer } = await import('msw/node');
      const keys = generateMerchantKeyPair(1024);
      const server = setupServer(...createWalletHandlers({ baseUrl: 'http://wallet.test', merchants: [{ userId: 1, apiKey: 'k', privateKey: keys.privatePem }] }));
      server.listen({ onUnhandledRequest: 'error' });
      const answer = await fetch('http://wallet.test/api/v1/api/order/getEnergyMaxCount', { method: 'POST', headers: { 'x-api-key': 'nope' } });
      server.close();
      process.stdout.write(JSON.stringify([answer.status, await answer.json(), WALLET_SCENARIOS.length > 3, WALLET_ENDPOINTS.length]));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([401, { code: 'UNAUTHORIZED', message: 'unauthorized' }, true, 3]);
  });
});
