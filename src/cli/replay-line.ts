import type { Command } from 'commander';
import { SECRETS, type SecretName } from './secrets.js';

/** Flags that choose which cases run or how the run is reported: a replay of one case sets its own. */
const NOT_REPLAYED = new Set([
  'case',
  'suite',
  'shard',
  'generate',
  'seed',
  'baseline',
  'verbose',
  'failOnSkip',
  'reports',
  'waitFor',
  'debug',
]);

/** A word as the shell reads it back: bare when safe, else single-quoted. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The full name of the command (`verify merchant`), without the program's. */
function path(command: Command): string[] {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names;
}

/**
 * The command that ran, as a user types it again, with the flags given on the command line and no
 * secret value: a secret given with its value flag is written as its environment variable
 * (`--api-key "$WALLET_API_KEY"`), one from a file keeps its file flag, one from the environment or
 * the config file is found there again. Flags choosing cases (`--suite`, `--shard`, `--case`,
 * `--generate`, `--seed`) and reporting flags are left out: the replay of a case adds its own;
 * `--reports`, when given, is kept (last), so the replay writes where the run wrote.
 */
export function replayBase(command: Command): string {
  const words = ['wallet-conformance', ...path(command)];
  const secretFlags = new Map<string, SecretName>(
    Object.entries(SECRETS).map(([name, spec]) => [spec.flag, name as SecretName]),
  );
  for (const option of command.options) {
    const name = option.attributeName();
    if (NOT_REPLAYED.has(name) || command.getOptionValueSource(name) !== 'cli') continue;
    const value: unknown = command.getOptionValue(name);
    const flag = option.long ?? option.flags;
    const secret = secretFlags.get(flag);
    if (secret) {
      words.push(flag, `"$${SECRETS[secret].env}"`);
      continue;
    }
    if (value === true) words.push(flag);
    else if (Array.isArray(value)) for (const one of value) words.push(flag, shellWord(String(one)));
    else if (typeof value === 'string') words.push(flag, shellWord(value));
  }
  // The replay writes where the run wrote (not into the folder it is typed in), last so a reader finds it.
  if (command.getOptionValueSource('reports') === 'cli')
    words.push('--reports', shellWord(String(command.getOptionValue('reports'))));
  return words.join(' ');
}
