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
import { startMerchantServer, type MerchantServer, type MerchantServerConfig } from '../merchant/server.js';
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
export function emulatorTarget(
  emulator: RunningEmulator,
  config: EmulatorConfig,
  account: EmulatorMerchant,
): ServiceTarget {
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

/** The emulator's setup of `run`: a throwaway folder's config with fast retries and, under `tls`, certificates of a throwaway CA. */
export function embeddedConfig(
  dir: string,
  tls: boolean,
): { config: EmulatorConfig; ca?: string; serverTls?: { cert: string; key: string } } {
  initEmulatorDir(dir, { store: 'emulator.sqlite', port: 0 });
  const config = loadEmulatorConfig(join(dir, 'emulator.yaml'));
  config.callbacks = {
    ...config.callbacks,
    withdrawalDelayMs: 100,
    timeoutMs: 2000,
    retry: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 5 },
  };
  if (!tls) return { config };
  // node-forge signs the certificates (node:crypto cannot): no openssl binary needed.
  const authority = makeThrowawayCa();
  const serverTls = authority.issue({ names: ['127.0.0.1', 'localhost', '::1'] });
  writeFileSync(join(dir, 'ca.pem'), authority.cert);
  writeFileSync(join(dir, 'server.pem'), serverTls.cert);
  writeFileSync(join(dir, 'server-key.pem'), serverTls.key, { mode: 0o600 });
  config.tls = serverTls;
  config.callbacks = { ...config.callbacks, ca: [authority.cert] };
  return { config, ca: authority.cert, serverTls };
}

/** The reference merchant of `run`, and a restart that brings it back as its process would: same port, the store reopened from its file. */
async function startReferenceMerchant(
  dir: string,
  account: EmulatorMerchant,
  serverTls: { cert: string; key: string } | undefined,
  overrides: Partial<MerchantServerConfig> | undefined,
): Promise<{ current: () => MerchantServer; restart: () => Promise<void>; close: () => Promise<void> }> {
  const keys = describeMerchantKeys(account);
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
    ...overrides,
  };
  const ownStore = overrides?.store === undefined;
  let merchant = await startMerchantServer(merchantConfig);
  return {
    current: () => merchant,
    restart: async () => {
      const port = merchant.port;
      await merchant.close();
      if (ownStore) {
        await merchant.store.close();
        merchantConfig.store = openSqliteStore(storePath, { synchronous: 'normal' });
      }
      merchant = await startMerchantServer({ ...merchantConfig, port });
    },
    close: () => merchant.close().then(() => (ownStore ? merchant.store.close() : undefined)),
  };
}

/**
 * Starts the emulator (throwaway in-memory setup, fast retries) and the reference merchant, and
 * points the emulator's callbacks at the merchant.
 */
export async function startEmbedded(options: EmbeddedOptions = {}): Promise<Embedded> {
  const dir = mkdtempSync(join(tmpdir(), 'wallet-conformance-run-'));
  try {
    const { config, ca, serverTls } = embeddedConfig(dir, options.tls ?? false);
    const account = config.merchants[0]!;
    const keys = describeMerchantKeys(account);
    const merchant = await startReferenceMerchant(dir, account, serverTls, options.merchant);
    account.callbackUrl = merchant.current().callbackUrl;
    let emulator: RunningEmulator;
    try {
      emulator = await startEmulator(config, {
        port: 0,
        ...(options.emulatorVariant ? { variant: options.emulatorVariant } : {}),
        ...(options.emulatorSealer ? { sealer: options.emulatorSealer } : {}),
      });
    } catch (error) {
      await merchant.current().close();
      throw error;
    }
    return {
      ...(ca ? { ca } : {}),
      service: emulatorTarget(emulator, config, account),
      merchant: {
        side: 'merchant',
        callbackUrl: merchant.current().callbackUrl,
        apiKey: keys.apiKey,
        privateKey: account.keyPair.privateKey,
        profile: account.profile,
        probeUrl: merchant.current().probeUrl,
        restartHook: merchant.restart,
        ...(keys.expiredKey ? { expiredKey: keys.expiredKey } : {}),
        ...(keys.futureKey ? { futureKey: keys.futureKey } : {}),
      },
      async close() {
        await Promise.allSettled([emulator.close(), merchant.close()]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
