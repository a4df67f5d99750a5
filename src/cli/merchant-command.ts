import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { parseInteger } from './options.js';
// The receiver, its stores, keys and the pairing are imported when the action runs (a light --help).

interface MerchantOptions {
  config?: string;
  port?: string;
  init?: string;
  emulator?: string;
  userId?: string;
  bits: string;
  force?: boolean;
}

/** `merchant --init DIR [--emulator F [--user-id N]] [--bits N] [--force]` and `merchant --config F [--port N]`. */
export function registerMerchantCommand(program: Command): void {
  program
    .command('merchant')
    .description(
      'run the reference merchant receiver (POST /callback, GET /probe), or write a config and key pair with --init',
    )
    .option('--config <file>', 'merchant.yaml to serve with')
    .option(
      '--port <n>',
      'port to listen on (0 = any free port); overrides the config; with --init: the port written to merchant.yaml',
    )
    .option('--init <dir>', 'write DIR/merchant.yaml and a merchant key pair, then exit')
    .option(
      '--emulator <file>',
      "with --init: pair with this emulator.yaml (its merchant's key pair, API key, profile and callback URL)",
    )
    .option('--user-id <n>', 'with --emulator: which of its merchants (default: the first)')
    .option('--bits <n>', 'key size for --init', '1024')
    .option('--force', 'let --init overwrite existing files')
    .action(async (options: MerchantOptions) => {
      if (options.init !== undefined && options.config !== undefined)
        throw new ConfigError('bad-flag', 'give --init DIR or --config FILE, not both');
      if (options.init === undefined && (options.emulator !== undefined || options.userId !== undefined))
        throw new ConfigError('bad-flag', '--emulator and --user-id go with --init DIR');
      if (options.init !== undefined && options.emulator !== undefined) {
        if (options.port !== undefined)
          throw new ConfigError(
            'bad-flag',
            "with --emulator the port comes from the emulator's callbackUrl; drop --port",
          );
        return await initPaired(options.init, options.emulator, options.userId, options.force === true);
      }
      if (options.userId !== undefined) throw new ConfigError('bad-flag', '--user-id goes with --emulator FILE');
      if (options.init !== undefined)
        return await init(
          options.init,
          parseInteger(options.bits, '--bits'),
          options.force === true,
          options.port === undefined ? undefined : portOf(options.port),
        );
      if (options.config === undefined)
        throw new ConfigError('bad-flag', 'merchant needs --config FILE (write one with merchant --init DIR)');
      await serve(options.config, options.port);
    });
}

function portOf(text: string): number {
  const port = parseInteger(text, '--port');
  if (port < 0 || port > 65_535) throw new ConfigError('bad-flag', `--port must be from 0 to 65535, not ${port}`);
  return port;
}

async function init(dir: string, bits: number, force: boolean, port: number | undefined): Promise<void> {
  const { generateMerchantKeyPair } = await import('../crypto/key-pair.js');
  const { merchantConfigTemplate } = await import('../merchant/config.js');
  const { withPort } = await import('./init-pairing.js');
  const { writeUserFile } = await import('./io.js');
  const pair = generateMerchantKeyPair(bits);
  const template = merchantConfigTemplate(randomBytes(16).toString('hex'));
  // --port with --init writes the port, so `emulator --init --merchant` can send callbacks there.
  const yaml = port === undefined ? template : withPort(template, port);
  const files: Array<[string, string, number]> = [
    ['merchant.yaml', yaml, 0o600],
    ['merchant-private.pem', pair.privatePem, 0o600],
    ['merchant-public.pem', pair.publicPem, 0o644],
    ['merchant-private.b64', `${pair.privateBase64}\n`, 0o600],
    ['merchant-public.b64', `${pair.publicBase64}\n`, 0o644],
  ];
  // Check every file first: a refusal must not leave half a set of keys behind.
  const existing = files.map(([name]) => join(dir, name)).filter((path) => existsSync(path));
  if (existing.length > 0 && !force)
    throw new ConfigError('file-exists', `${existing.join(', ')} exists already (use --force to overwrite)`);
  for (const [name, contents, mode] of files) writeUserFile(join(dir, name), contents, { overwrite: force, mode });
  for (const [name] of files) process.stdout.write(`${join(dir, name)}\n`);
  process.stdout.write(`next: wallet-conformance merchant --config ${join(dir, 'merchant.yaml')}\n`);
}

/** `merchant --init DIR --emulator F`: the emulator's merchant key pair, API key and profile, served where it sends callbacks. */
async function initPaired(
  dir: string,
  emulatorYaml: string,
  userId: string | undefined,
  force: boolean,
): Promise<void> {
  const { keyFiles, pairedMerchantYaml, pairingFromEmulator, writeInitFiles } = await import('./init-pairing.js');
  const pairing = pairingFromEmulator(
    emulatorYaml,
    userId === undefined ? undefined : parseInteger(userId, '--user-id', { min: 0 }),
  );
  const paths = writeInitFiles(
    dir,
    [['merchant.yaml', pairedMerchantYaml(pairing), 0o600], ...keyFiles(pairing.keys)],
    force,
  );
  for (const path of paths) process.stdout.write(`${path}\n`);
  process.stdout.write(
    `paired with ${emulatorYaml}: same key pair and API key; the emulator's callbacks go to ${pairing.callbackUrl}\n`,
  );
  process.stdout.write(`next: wallet-conformance merchant --config ${join(dir, 'merchant.yaml')}\n`);
}

async function serve(configPath: string, portFlag: string | undefined): Promise<void> {
  const flagPort = portFlag === undefined ? undefined : portOf(portFlag);
  const { loadMerchantSettings, parseMerchantConfig } = await import('../merchant/config.js');
  const { startMerchantServer } = await import('../merchant/server.js');
  const { readUserFile } = await import('./io.js');
  const file = parseMerchantConfig(readUserFile(configPath, 'merchant config').toString('utf8'), configPath);
  const settings = loadMerchantSettings(file, readUserFile);
  const port = flagPort ?? settings.port;
  const merchant = await startMerchantServer({
    apiKeys: settings.apiKeys,
    publicKey: settings.callbackKey,
    profile: settings.profile,
    store: settings.storePath,
    bodyLimit: settings.bodyLimit,
    host: settings.host,
    port,
    ...(settings.tls ? { tls: settings.tls } : {}),
    probe: settings.probe,
    log: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new ConfigError('cannot-listen', `cannot listen on ${settings.host}:${port}: ${code}`);
    }
    throw error;
  });
  process.stdout.write(`merchant listening on ${merchant.callbackUrl} (probe: ${merchant.probeUrl})\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // Close the store cleanly: a SQLite WAL is checkpointed, nothing half-written is left.
  await merchant.close();
  process.stdout.write('merchant stopped\n');
}
