import { spawn, spawnSync } from 'node:child_process';
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

/**
 * Runs the real CLI without blocking this process: for targets (emulator, merchant) that live in it.
 * `env` adds variables (a value of undefined removes one); `cwd` is where a config file is looked for.
 */
export function runCliAsync(args: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Omit<CliRun, 'stdoutBytes'>> {
  return new Promise((done) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
    const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), ...args], { cwd: options.cwd ?? ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}
