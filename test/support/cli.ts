import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '..', '..');

/** What one run of the real CLI did. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

/** Runs `bin/wallet-conformance.js` (the built CLI) as a user would, with optional stdin. */
export function runCli(args: string[], input?: string | Buffer, options: { cwd?: string } = {}): CliRun {
  const result = spawnSync(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), ...args], {
    input,
    cwd: options.cwd ?? ROOT,
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return {
    status: result.status,
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8'),
    stdoutBytes: result.stdout,
  };
}
