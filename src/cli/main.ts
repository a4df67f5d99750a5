import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { MESSAGE_PREFIX, isWalletConformanceError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../platform/package-paths.js';
import { CryptoError } from '../crypto/errors.js';
import { describeCryptoFailure } from '../wire/crypto-wording.js';
import { EXIT } from './exit.js';
import { scrubOutput } from './scrub-output.js';

export { EXIT };

/** A command of the CLI: what the top-level help says of it, and its module, imported when it runs. */
interface CommandEntry {
  name: string;
  description: string;
  /** Does the command take options of its own (`--help` shows `name [options]`)? */
  options: boolean;
  register: () => Promise<(program: Command) => void>;
}

/**
 * Every command, in the order of `--help`. A start imports only the module of the command it runs
 * (with its work imported by the action): `--version`, the top-level help and an unknown command
 * load none. `test/cold-start.test.ts` holds these lines to what the commands register.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'keys',
    description: 'merchant RSA key pairs',
    options: false,
    register: async () => (await import('./keys-command.js')).registerKeysCommand,
  },
  {
    name: 'crypto',
    description: 'encrypt or decrypt a payload with a profile (for debugging captures)',
    options: false,
    register: async () => (await import('./crypto-command.js')).registerCryptoCommand,
  },
  {
    name: 'spec',
    description: 'the OpenAPI description of the interface',
    options: false,
    register: async () => (await import('./spec-command.js')).registerSpecCommand,
  },
  {
    name: 'emulator',
    description:
      'run the service emulator (order endpoints, card close, control API, callbacks), or write a setup with --init',
    options: true,
    register: async () => (await import('./emulator-command.js')).registerEmulatorCommand,
  },
  {
    name: 'merchant',
    description:
      'run the reference merchant receiver (POST /callback, GET /probe), or write a config and key pair with --init',
    options: true,
    register: async () => (await import('./merchant-command.js')).registerMerchantCommand,
  },
  {
    name: 'run',
    description:
      'start the service emulator and the reference merchant, run every suite against both, write the reports',
    options: true,
    register: async () => (await import('./run-command.js')).registerRunCommand,
  },
  {
    name: 'verify',
    description: 'run the conformance suites against a service or a merchant',
    options: false,
    register: async () => (await import('./verify-command.js')).registerVerifyCommand,
  },
  {
    name: 'callback',
    description: 'deliver callbacks to a merchant endpoint by hand',
    options: false,
    register: async () => (await import('./callback-command.js')).registerCallbackCommand,
  },
  {
    name: 'pact',
    description: 'Pact contracts from the spec (generate) and their verification against a wallet service (verify)',
    options: false,
    register: async () => (await import('./pact-command.js')).registerPactCommand,
  },
  {
    name: 'report',
    description: 'work with written reports',
    options: false,
    register: async () => (await import('./report-command.js')).registerReportCommand,
  },
  {
    name: 'load',
    description: 'load tests: a bounded callback storm against your own endpoint',
    options: false,
    register: async () => (await import('./load-command.js')).registerLoadCommand,
  },
  {
    name: 'docs',
    description:
      'render the documentation site (HTML and Markdown, works offline) from the spec, spec/rules.yaml and the suites',
    options: true,
    register: async () => (await import('./docs-command.js')).registerDocsCommand,
  },
  {
    name: 'observe',
    description:
      'a conformance proxy between a real merchant and a real service: forwards every request and answer unchanged and judges them against the rules as they happen (or judges a capture with --replay)',
    options: true,
    register: async () => (await import('./observe-command.js')).registerObserveCommand,
  },
];

/** The program without commands: the global options, the version, one-line errors. */
function bareProgram(): Command {
  const program = new Command('wallet-conformance')
    .description('Contract-testing and conformance toolkit for the merchant wallet service interface')
    .option('--debug', 'show stack traces of toolkit errors')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  program.version(packageVersion(), '--version');
  return program;
}

/** Builds the whole command tree (every command module imported); commands write to stdout and throw toolkit errors. */
export async function buildProgram(): Promise<Command> {
  const program = bareProgram();
  for (const register of await Promise.all(COMMANDS.map((entry) => entry.register()))) register(program);
  for (const command of program.commands) propagate(command);
  return program;
}

/**
 * The program a start needs: the command argv names (`help X` names X) registered for real, or,
 * when it names none (`--version`, `--help`, no command, an unknown one), every command as its
 * line of the top-level help, which is all commander then reads.
 */
export async function programFor(argv: readonly string[]): Promise<Command> {
  // The global options (--debug, --version, --help) take no value: the first other word is the command.
  const words = argv.filter((word) => !word.startsWith('-'));
  const named = words[0] === 'help' ? words[1] : words[0];
  // `-h verify` and `--version verify` answer for the program, before any command.
  const first = argv.findIndex((word) => !word.startsWith('-'));
  const global = argv
    .slice(0, first === -1 ? argv.length : first)
    .some((word) => word === '-h' || word === '--help' || word === '--version');
  const entry = global ? undefined : COMMANDS.find((candidate) => candidate.name === named);
  const program = bareProgram();
  if (entry) {
    (await entry.register())(program);
  } else {
    for (const stub of COMMANDS) {
      const command = program.command(stub.name).description(stub.description);
      if (stub.options) command.addOption(new Option('--options').hideHelp());
    }
  }
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
export async function main(
  argv: string[],
  build: (argv: readonly string[]) => Command | Promise<Command> = programFor,
): Promise<number> {
  try {
    const program = await build(argv);
    await program.parseAsync(argv, { from: 'user' });
    return process.exitCode === undefined ? EXIT.ok : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return EXIT.ok;
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
    process.stderr.write(
      scrubOutput(
        `${MESSAGE_PREFIX} internal error: ${(error as Error)?.message ?? String(error)} (rerun with --debug for the stack trace)\n`,
      ),
    );
    if (debug && error instanceof Error && error.stack) process.stderr.write(scrubOutput(`${error.stack}\n`));
    return EXIT.unusable;
  }
}

const invokedDirectly = (() => {
  try {
    return (
      process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
    );
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  process.exitCode = await main(process.argv.slice(2));
}
