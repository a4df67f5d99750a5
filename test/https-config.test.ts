import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUserFile } from '../src/cli/io.js';
import { makeThrowawayCa } from '../src/crypto/throwaway-certificates.js';
import { loadEmulatorConfig } from '../src/emulator/config-load.js';
import { initEmulatorDir } from '../src/emulator/init-dir.js';
import { startEmulator } from '../src/emulator/server.js';
import { loadMerchantSettings, parseMerchantConfig } from '../src/merchant/config.js';
import { startMerchantServer } from '../src/merchant/server.js';
import { defaultNetwork } from '../src/net/network-config.js';
import { send } from '../src/runner/http-client.js';
import { runCliWithEnv as cli } from './support/network.js';

describe('tls: {cert, key} in emulator.yaml and merchant.yaml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-tls-config-'));
  const ca = makeThrowawayCa('config test CA');
  const server = ca.issue({ names: ['127.0.0.1', 'localhost'] });
  writeFileSync(join(dir, 'server.pem'), server.cert);
  writeFileSync(join(dir, 'server-key.pem'), server.key);
  const network = defaultNetwork({ tls: { extraCa: [ca.cert], insecure: false } });
  const block = '\ntls:\n  cert: ../server.pem\n  key: ../server-key.pem\n';

  it('the emulator serves HTTPS with the files its YAML names (relative to the YAML)', async () => {
    const { configPath } = initEmulatorDir(join(dir, 'emu'), { port: 0 });
    appendFileSync(configPath, block);
    const emulator = await startEmulator(loadEmulatorConfig(configPath), { port: 0 });
    try {
      expect(emulator.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const answer = await send({ method: 'POST', url: `${emulator.url}/nope`, headers: {}, body: '', network });
      expect(answer.status).toBe(404);
    } finally {
      await emulator.close();
    }
  });

  it('the reference merchant serves HTTPS with the files its YAML names', async () => {
    expect((await cli(['merchant', '--init', join(dir, 'merchant')])).status).toBe(0);
    const yaml = join(dir, 'merchant', 'merchant.yaml');
    appendFileSync(yaml, block);
    const settings = loadMerchantSettings(parseMerchantConfig(readFileSync(yaml, 'utf8'), yaml), readUserFile);
    const merchant = await startMerchantServer({
      apiKeys: settings.apiKeys,
      publicKey: settings.callbackKey,
      profile: settings.profile,
      store: ':memory:',
      ...(settings.tls ? { tls: settings.tls } : {}),
    });
    try {
      expect(merchant.probeUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/probe$/);
      const answer = await send({ method: 'GET', url: merchant.probeUrl, headers: {}, network });
      expect(answer.body.toString()).toBe('{"processed":[]}');
    } finally {
      await merchant.close();
    }
  }, 30_000);

  it('a tls block without its key, or naming a missing file, is one line naming the file and the field', () => {
    const { configPath } = initEmulatorDir(join(dir, 'bad'), { port: 0 });
    const original = readFileSync(configPath, 'utf8');
    writeFileSync(configPath, `${original}\ntls:\n  cert: ../server.pem\n`);
    expect(() => loadEmulatorConfig(configPath)).toThrow(/emulator\.yaml: tls\.key is required \(a PEM file\)$/);
    writeFileSync(configPath, `${original}\ntls:\n  cert: ../server.pem\n  key: missing.pem\n`);
    expect(() => loadEmulatorConfig(configPath)).toThrow(/emulator\.yaml: cannot read tls\.key missing\.pem: ENOENT$/);
  });
});
