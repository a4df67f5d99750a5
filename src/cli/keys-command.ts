import { join } from 'node:path';
import type { Command } from 'commander';
import { parseInteger } from './options.js';

/** `keys generate [--bits N] --out DIR [--force]`. */
export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('merchant RSA key pairs');
  keys
    .command('generate')
    .description(
      'write a merchant key pair: merchant-private.pem (PKCS#8), merchant-public.pem (SPKI) and the same as bare Base64 DER (.b64)',
    )
    .option('--bits <n>', 'key size: 1024 (platform default), 2048, 3072 or 4096', '1024')
    .requiredOption('--out <dir>', 'folder to write the four files into')
    .option('--force', 'overwrite existing files')
    .option(
      '--demo',
      'mark merchant-private.pem as a demo key (a line before the PEM): one that docs --demo-key may publish',
    )
    .action(async (options: { bits: string; out: string; force?: boolean; demo?: boolean }) => {
      const { generateMerchantKeyPair } = await import('../crypto/key-pair.js');
      const { markDemoKey } = await import('./demo-key.js');
      const { writeUserFile } = await import('./io.js');
      const pair = generateMerchantKeyPair(parseInteger(options.bits, '--bits'));
      const files: Array<[string, string, number]> = [
        ['merchant-private.pem', options.demo ? markDemoKey(pair.privatePem) : pair.privatePem, 0o600],
        ['merchant-public.pem', pair.publicPem, 0o644],
        ['merchant-private.b64', `${pair.privateBase64}\n`, 0o600],
        ['merchant-public.b64', `${pair.publicBase64}\n`, 0o644],
      ];
      for (const [name, contents, mode] of files) {
        writeUserFile(join(options.out, name), contents, { overwrite: options.force === true, mode });
      }
      for (const [name] of files) process.stdout.write(`${join(options.out, name)}\n`);
    });
}
