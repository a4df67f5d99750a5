import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeThrowawayCa } from '../crypto/throwaway-certificates.js';
import type { EmulatorConfig, EmulatorMerchant } from '../emulator/config.js';
import { loadEmulatorConfig } from '../emulator/config-load.js';
import { initEmulatorDir } from '../emulator/init-dir.js';
import { describeMerchantKeys } from '../emulator/key-description.js';
import type { CallbackSealer } from '../emulator/seal-pool.js';
import { startEmulator, type RunningEmulator } from '../emulator/server.js';
import type { EmulatorVariant } from '../emulator/variant.js';
import { startMerchantServer, type MerchantServerConfig } from '../merchant/server.js';
import { openSqliteStore } from '../merchant/sqlite-store.js';
import type { IdempotencyStore } from '../merchant/store.js';
import type { MerchantTarget, ServiceTarget } from '../runner/types.js';

/** The embedded default of `run`: the emulator and the reference merchant on free loopback ports. */
export interface Embedded {
  service: ServiceTarget;
  merchant: MerchantTarget;
  /** The throwaway CA (PEM) both servers' certificates chain to, under `tls`. */
  ca?: string;
  close(): Promise<void>;
}

/** Options for the toolkit's own tests: deliberately faulty variants of either side. */
interface EmbeddedOptions {
  /** A deliberately different emulator (the toolkit's own tests build faulty ones: test/fixtures/emulator-faults.ts). */
  emulatorVariant?: EmulatorVariant;
  /** Overrides of the reference merchant's configuration (a faulty merchant, for tests). */
  merchant?: Partial<MerchantServerConfig>;
  /** Serve both over HTTPS with a throwaway CA made in the run's temp folder (`run --tls`). */
  tls?: boolean;
  /** The emulator's sealer (`startEmulator`'s option): a test starting many emulators shares one pool of threads. */
  emulatorSealer?: CallbackSealer;
}

/** The service target of a running emulator's merchant: every key, the control token, orders allowed. */
export function emulatorTarget(emulator: RunningEmulator, config: EmulatorConfig, account: EmulatorMerchant): ServiceTarget {
  const keys = describeMerchantKeys(account);
  return {
    side: 'service',
    baseUrl: emulator.url,
    cardBaseUrl: emulator.cardUrl,
    apiKey: keys.apiKey,
    publicKey: account.keyPair.publicKey,
    profile: account.profile,
    userId: account.userId,
    ...(keys.forbiddenKey ? { forbiddenKey: keys.forbiddenKey } : {}),
    ...(keys.expiredKey ? { expiredKey: keys.expiredKey } : {}),
    ...(keys.futureKey ? { futureKey: keys.futureKey } : {}),
    controlToken: config.control.token,
    allowOrders: true,
  };
}

/**
 * Starts the emulator (throwaway in-memory setup, fast retries) and the reference merchant, and
 * points the emulator's callbacks at the merchant.
 */
export async function startEmbedded(options: EmbeddedOptions = {}): Promise<Embedded> {
  const dir = mkdtempSync(join(tmpdir(), 'wallet-conformance-run-'));
  try {
    initEmulatorDir(dir, { store: 'emulator.sqlite', port: 0 });
    const config = loadEmulatorConfig(join(dir, 'emulator.yaml'));
    config.callbacks = {
      ...config.callbacks,
      withdrawalDelayMs: 100,
      timeoutMs: 2000,
      retry: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 5 },
    };
    const account = config.merchants[0]!;
    const keys = describeMerchantKeys(account);
    let ca: string | undefined;
    let serverTls: { cert: string; key: string } | undefined;
    if (options.tls) {
      // node-forge signs the certificates (node:crypto cannot): no openssl binary needed.
      const authority = makeThrowawayCa();
      serverTls = authority.issue({ names: ['127.0.0.1', 'localhost', '::1'] });
      ca = authority.cert;
      writeFileSync(join(dir, 'ca.pem'), authority.cert);
      writeFileSync(join(dir, 'server.pem'), serverTls.cert);
      writeFileSync(join(dir, 'server-key.pem'), serverTls.key, { mode: 0o600 });
      config.tls = serverTls;
      config.callbacks = { ...config.callbacks, ca: [authority.cert] };
    }
    // A file, not :memory:, so a restart of the merchant keeps what it processed (the restart case);
    // synchronous=normal: a throwaway run needs to survive a process restart, not a power cut.
    const storePath = join(dir, 'merchant.sqlite');
    const merchantConfig = {
      apiKeys: [
        keys.apiKey,
        ...(keys.expiredKey ? [{ key: keys.expiredKey, notAfter: '2020-01-01T00:00:00Z' }] : []),
        ...(keys.futureKey ? [{ key: keys.futureKey, notBefore: '2999-01-01T00:00:00Z' }] : []),
      ],
      publicKey: account.keyPair.publicKey,
      profile: account.profile,
      store: openSqliteStore(storePath, { synchronous: 'normal' }) as IdempotencyStore,
      ...(serverTls ? { tls: serverTls } : {}),
      ...options.merchant,
    };
    const ownStore = options.merchant?.store === undefined;
    let merchant = await startMerchantServer(merchantConfig);
    // Restarts the reference merchant as its process would restart: same port, the store reopened from its file.
    const restartMerchant = async () => {
      const port = merchant.port;
      await merchant.close();
      if (ownStore) {
        await merchant.store.close();
        merchantConfig.store = openSqliteStore(storePath, { synchronous: 'normal' });
      }
      merchant = await startMerchantServer({ ...merchantConfig, port });
    };
    account.callbackUrl = merchant.callbackUrl;
    let emulator;
    try {
      emulator = await startEmulator(config, {
        port: 0,
        ...(options.emulatorVariant ? { variant: options.emulatorVariant } : {}),
        ...(options.emulatorSealer ? { sealer: options.emulatorSealer } : {}),
      });
    } catch (error) {
      await merchant.close();
      throw error;
    }
    return {
      ...(ca ? { ca } : {}),
      service: emulatorTarget(emulator, config, account),
      merchant: {
        side: 'merchant',
        callbackUrl: merchant.callbackUrl,
        apiKey: keys.apiKey,
        privateKey: account.keyPair.privateKey,
        profile: account.profile,
        probeUrl: merchant.probeUrl,
        restartHook: restartMerchant,
        ...(keys.expiredKey ? { expiredKey: keys.expiredKey } : {}),
        ...(keys.futureKey ? { futureKey: keys.futureKey } : {}),
      },
      async close() {
        await Promise.allSettled([emulator.close(), merchant.close().then(() => (ownStore ? merchant.store.close() : undefined))]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
