import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { DIRECTIONS } from '../core/directions.js';
import { parseChoice } from './options.js';

interface CryptoOptions {
  direction: string;
  publicKey?: string;
  privateKey?: string;
  profile?: string;
  engine: string;
  raw?: boolean;
  pretty?: boolean;
  /** `-n`/`--no-newline` sets this false. */
  newline?: boolean;
}

/** `crypto encrypt|decrypt --direction D (--public-key F | --private-key F) [--profile F]`: stdin to stdout. */
export function registerCryptoCommand(program: Command): void {
  const crypto = program
    .command('crypto')
    .description('encrypt or decrypt a payload with a profile (for debugging captures)');
  const common = (command: Command) =>
    command
      .requiredOption('--direction <d>', `where the data travels: ${DIRECTIONS.join(' | ')}`)
      .option('--public-key <file>', 'the merchant public key (PEM or bare Base64 DER)')
      .option('--private-key <file>', 'the merchant private key (PEM or bare Base64 DER)')
      .option(
        '--profile <file>',
        'crypto profile YAML (default: pkcs1, request=public, response=private, callback=private)',
      )
      .option('--engine <e>', 'RSA engine: native | forge', 'native');

  common(crypto.command('encrypt'))
    .description('read plain JSON on stdin, write the Base64 ciphertext')
    .option('--raw', 'encrypt stdin as bytes even if it is not JSON')
    .option('-n, --no-newline', 'no line end after the Base64 (the default when stdout is a file or a pipe)')
    .action(async (options: CryptoOptions) => {
      const { parseExactJson } = await import('../core/exact-json.js');
      const { decodeUtf8, sealBytes } = await import('../crypto/codec.js');
      const { CryptoError } = await import('../crypto/errors.js');
      const { readStdin } = await import('./io.js');
      const { direction, profile, key, engine } = await setUp(options, 'encrypt');
      const plain = await readStdin();
      if (!options.raw) {
        try {
          parseExactJson(decodeUtf8(plain));
        } catch (error) {
          const why = error instanceof CryptoError ? error.message : (error as Error).message;
          throw new ConfigError('not-json', `stdin is not JSON (${why}); use --raw to encrypt it anyway`);
        }
      }
      // A line end only for a person at a terminal: in a file or a pipe (curl -d @file, $(...)) it
      // would become part of the form value and break the strict Base64 of the `data` field.
      const newline = options.newline !== false && process.stdout.isTTY === true;
      process.stdout.write(`${sealBytes(plain, direction, key, { profile, engine })}${newline ? '\n' : ''}`);
    });

  common(crypto.command('decrypt'))
    .description('read Base64 ciphertext on stdin, write the plaintext bytes exactly as decrypted')
    .option('--pretty', 'pretty-print the JSON (numbers kept exact) instead of the exact bytes')
    .action(async (options: CryptoOptions) => {
      const { parseExactJson, stringifyExact } = await import('../core/exact-json.js');
      const { decodeUtf8, openBytes } = await import('../crypto/codec.js');
      const { readStdin } = await import('./io.js');
      const { direction, profile, key, engine } = await setUp(options, 'decrypt');
      // One trailing line end is what `echo` and editors add; anything else stays strict.
      const text = (await readStdin()).toString('latin1').replace(/\r?\n$/, '');
      const plain = openBytes(text, direction, key, { profile, engine });
      if (options.pretty) {
        process.stdout.write(`${stringifyExact(parseExactJson(decodeUtf8(plain)), 2)}\n`);
      } else {
        process.stdout.write(plain);
      }
    });
}

async function setUp(options: CryptoOptions, operation: 'encrypt' | 'decrypt') {
  const { halfFor } = await import('../crypto/codec.js');
  const { forgeEngine, nativeEngine } = await import('../crypto/rsa-engine.js');
  const { loadKeyFile, loadProfile } = await import('./io.js');
  const direction = parseChoice(options.direction, DIRECTIONS, '--direction');
  const profile = loadProfile(options.profile);
  const engine =
    parseChoice(options.engine, ['native', 'forge'] as const, '--engine') === 'forge' ? forgeEngine : nativeEngine;
  const needed = halfFor(direction, operation, profile);
  if (options.publicKey && options.privateKey)
    throw new ConfigError('bad-flag', 'give --public-key or --private-key, not both');
  const given = options.publicKey ? 'public' : options.privateKey ? 'private' : undefined;
  if (!given) throw new ConfigError('bad-flag', `${operation}ing ${direction} data needs --${needed}-key FILE`);
  if (given !== needed) {
    throw new ConfigError(
      'wrong-key-half',
      `the profile encrypts ${direction} data with the ${profile[direction]} key, so ${operation}ing it takes --${needed}-key, not --${given}-key`,
    );
  }
  const key = loadKeyFile((options.publicKey ?? options.privateKey) as string, given);
  return { direction, profile, key, engine };
}
