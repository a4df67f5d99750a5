import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { MESSAGE_PREFIX, isWalletConformanceError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';
import { CryptoError } from '../crypto/errors.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import { registerCallbackCommand } from './callback-command.js';
import { registerCryptoCommand } from './crypto-command.js';
import { registerDocsCommand } from './docs-command.js';
import { registerEmulatorCommand } from './emulator-command.js';
import { EXIT } from './exit.js';
import { registerKeysCommand } from './keys-command.js';
import { registerLoadCommand } from './load-command.js';
import { registerMerchantCommand } from './merchant-command.js';
import { registerObserveCommand } from './observe-command.js';
import { registerPactCommand } from './pact-command.js';
import { registerReportCommand } from './report-command.js';
import { registerRunCommand } from './run-command.js';
import { registerSpecCommand } from './spec-command.js';
import { registerVerifyCommand } from './verify-command.js';
import { scrubOutput } from './secrets.js';

export { EXIT };

/** Builds the command tree; commands write to stdout and throw toolkit errors. */
export function buildProgram(): Command {
  const program = new Command('wallet-conformance')
    .description('Contract-testing and conformance toolkit for the merchant wallet service interface')
    .option('--debug', 'show stack traces of toolkit errors')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  program.version(packageVersion(), '--version');
  registerKeysCommand(program);
  registerCryptoCommand(program);
  registerSpecCommand(program);
  registerEmulatorCommand(program);
  registerMerchantCommand(program);
  registerRunCommand(program);
  registerVerifyCommand(program);
  registerCallbackCommand(program);
  registerPactCommand(program);
  registerReportCommand(program);
  registerLoadCommand(program);
  registerDocsCommand(program);
  registerObserveCommand(program);
  for (const command of program.commands) propagate(command);
  return program;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function propagate(command: Command): void {
  command.exitOverride().configureOutput({ writeErr: () => undefined });
  for (const sub of command.commands) propagate(sub);
}

/** Runs the CLI and returns the exit status; every toolkit error becomes one line on stderr. */
export async function main(argv: string[], build: () => Command = buildProgram): Promise<number> {
  const program = build();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return process.exitCode === undefined ? EXIT.ok : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
      if (error.code === 'commander.executeSubCommandAsync') return error.exitCode;
      process.stderr.write(scrubOutput(`${MESSAGE_PREFIX} ${error.message.replace(/^error: /, '')} (see --help)\n`));
      return EXIT.unusable;
    }
    const debug = argv.includes('--debug');
    if (isWalletConformanceError(error)) {
      const what = error instanceof CryptoError ? `cannot decrypt: ${describeCryptoFailure(error)}` : error.message;
      process.stderr.write(scrubOutput(`${MESSAGE_PREFIX} ${what}\n`));
      if (debug && error.stack) process.stderr.write(scrubOutput(`${error.stack}\n`));
      return EXIT.unusable;
    }
    // A bug of ours: still one line, with the stack only on request.
    process.stderr.write(scrubOutput(`${MESSAGE_PREFIX} internal error: ${(error as Error)?.message ?? String(error)} (rerun with --debug for the stack trace)\n`));
    if (debug && error instanceof Error && error.stack) process.stderr.write(scrubOutput(`${error.stack}\n`));
    return EXIT.unusable;
  }
}

const invokedDirectly = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  process.exitCode = await main(process.argv.slice(2));
}
