import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { EmulatorConfig } from '../emulator/config.js';
import { parseInteger } from './options.js';
// The emulator, its store and the pairing are imported when the action runs (a light --help).

/** SIGTERM/SIGINT stop the emulator within this long (callback attempts under way are cut, sockets closed). */
const STOP_BOUND_MS = 4_500;

interface EmulatorOptions {
  config?: string;
  port?: string;
  host?: string;
  init?: string;
  merchant?: string;
  bits: string;
  force?: boolean;
  quiet?: boolean;
}

/** `emulator --init DIR [--merchant F] [--bits N] [--force]` and `emulator [--config F] [--port N] [--host H] [--quiet]`. */
export function registerEmulatorCommand(program: Command): void {
  program
    .command('emulator')
    .description(
      'run the service emulator (order endpoints, card close, control API, callbacks), or write a setup with --init',
    )
    .option('--config <file>', 'emulator.yaml to serve (default: a throwaway in-memory setup in a temporary folder)')
    .option('--port <n>', 'port to listen on (0 = any free port); overrides the config')
    .option('--host <address>', 'address to listen on; overrides the config')
    .option('--init <dir>', 'write DIR/emulator.yaml and a merchant key pair, then exit')
    .option(
      '--merchant <file>',
      'with --init: pair with this merchant.yaml (its key pair, API key and profile; callbacks go to its port)',
    )
    .option('--bits <n>', 'key size for --init', '1024')
    .option('--force', 'let --init overwrite existing files')
    .option('--quiet', 'no line per request')
    .action(async (options: EmulatorOptions) => {
      if (options.init !== undefined && options.config !== undefined)
        throw new ConfigError('bad-flag', 'give --init DIR or --config FILE, not both');
      if (options.merchant !== undefined && options.init === undefined)
        throw new ConfigError('bad-flag', '--merchant goes with --init DIR');
      if (options.init !== undefined && options.merchant !== undefined)
        return await initPaired(options.init, options.merchant, options.force === true);
      if (options.init !== undefined)
        return await init(options.init, parseInteger(options.bits, '--bits'), options.force === true);
      await serve(options);
    });
}

async function init(dir: string, bits: number, force: boolean): Promise<void> {
  const { initEmulatorDir } = await import('../emulator/init-dir.js');
  const { configPath, files } = initEmulatorDir(dir, { bits, force });
  for (const file of files) process.stdout.write(`${file}\n`);
  process.stdout.write(`next: wallet-conformance emulator --config ${configPath}\n`);
}

/** `emulator --init DIR --merchant F`: the merchant's key pair, API key and profile; callbacks to its `POST /callback`. */
async function initPaired(dir: string, merchantYaml: string, force: boolean): Promise<void> {
  const { keyFiles, pairedEmulatorYaml, pairingFromMerchant, writeInitFiles } = await import('./init-pairing.js');
  const pairing = pairingFromMerchant(merchantYaml);
  const paths = writeInitFiles(
    dir,
    [['emulator.yaml', pairedEmulatorYaml(pairing), 0o600], ...keyFiles(pairing.keys)],
    force,
  );
  for (const path of paths) process.stdout.write(`${path}\n`);
  process.stdout.write(
    `paired with ${merchantYaml}: same key pair and API key; callbacks go to ${pairing.callbackUrl}\n`,
  );
  process.stdout.write(`next: wallet-conformance emulator --config ${join(dir, 'emulator.yaml')}\n`);
}

async function serve(options: EmulatorOptions): Promise<void> {
  const flagPort = options.port === undefined ? undefined : parseInteger(options.port, '--port');
  if (flagPort !== undefined && (flagPort < 0 || flagPort > 65_535))
    throw new ConfigError('bad-flag', `--port must be from 0 to 65535, not ${flagPort}`);
  const { loadEmulatorConfig } = await import('../emulator/config-load.js');
  const { initEmulatorDir } = await import('../emulator/init-dir.js');
  const { describeMerchantKeys } = await import('../emulator/key-description.js');
  const { startEmulator } = await import('../emulator/server.js');
  let throwaway: string | undefined;
  let config: EmulatorConfig;
  if (options.config !== undefined) {
    config = loadEmulatorConfig(options.config);
  } else {
    // No config: a fresh setup that lives as long as this process (keys included).
    throwaway = mkdtempSync(join(tmpdir(), 'wallet-conformance-emulator-'));
    config = loadEmulatorConfig(initEmulatorDir(throwaway, { store: ':memory:' }).configPath);
  }
  const cleanup = () => {
    if (throwaway) rmSync(throwaway, { recursive: true, force: true });
  };
  const host = options.host ?? config.host;
  const port = flagPort ?? config.port ?? 8080;
  const emulator = await startEmulator(config, {
    port,
    host,
    ...(options.quiet ? {} : { log: (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`) }),
  }).catch((error: unknown) => {
    cleanup();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new ConfigError(
        'cannot-listen',
        `cannot listen on ${host}:${port}: ${code}${code === 'EADDRINUSE' ? ' (another process uses the port; --port 0 picks a free one)' : ''}`,
      );
    }
    throw error;
  });
  if (throwaway) process.stdout.write(`throwaway setup (removed on exit): ${join(throwaway, 'emulator.yaml')}\n`);
  for (const merchant of config.merchants) {
    const keys = describeMerchantKeys(merchant);
    const extra = [
      keys.forbiddenKey ? `forbidden key ${keys.forbiddenKey}` : '',
      keys.expiredKey ? `expired key ${keys.expiredKey}` : '',
      keys.futureKey ? `not-yet-valid key ${keys.futureKey}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    process.stdout.write(
      `merchant ${merchant.userId}: api key ${keys.apiKey}${extra ? `, ${extra}` : ''}; public key ${merchant.publicKey}\n`,
    );
  }
  // Last, so a script that waits for this line has everything above it.
  process.stdout.write(`emulator listening on ${emulator.url} (control token: ${config.control.token})\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // Close cleanly: pending callbacks stay queued in the store, the SQLite WAL is checkpointed.
  // The close cuts every attempt and connection itself; this bound only guards a stop that hangs anyway.
  const bound = setTimeout(() => {
    process.stderr.write(
      `emulator: the shutdown took longer than ${STOP_BOUND_MS} ms; exiting without waiting further\n`,
    );
    process.exit(1);
  }, STOP_BOUND_MS);
  bound.unref();
  await emulator.close();
  clearTimeout(bound);
  cleanup();
  process.stdout.write('emulator stopped\n');
}
