/**
 * Starting the Python doubles of test/doubles/python/ as child processes, and whether this machine
 * can (python3 with Flask and cryptography, which .ci/run installs from Debian).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/cli.js';

/** The interpreter: DOUBLES_PYTHON, else python3 (not PYTHON, which node-gyp reads for its own purpose). */
export const PYTHON = process.env.DOUBLES_PYTHON ?? 'python3';

const probe = spawnSync(PYTHON, ['-c', 'import flask, cryptography'], { encoding: 'utf8' });
/** Why the Python doubles cannot run here, or undefined when they can. */
export const pythonMissing: string | undefined = probe.error
  ? `${PYTHON} not found (${probe.error.message})`
  : probe.status !== 0
    ? `${PYTHON} lacks flask or cryptography: ${probe.stderr.trim().split('\n').at(-1) ?? ''}`
    : undefined;

/** A running Python double: its port and process id, what it printed, and how to stop it. */
export interface PythonDouble {
  origin: string;
  port: number;
  pid: number;
  output: () => string;
  close: () => Promise<void>;
}

/**
 * Starts `script` with its config file (written into `dir`); resolves once it prints `LISTENING <port>` (10 s at most).
 * `mode` goes before the config file's path (`--supervise`: the receiver under its crash supervisor).
 */
export function startPython(
  script: string,
  config: Record<string, unknown>,
  dir: string,
  mode: readonly string[] = [],
): Promise<PythonDouble> {
  const configPath = join(dir, `${script}.json`);
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const child: ChildProcessWithoutNullStreams = spawn(
    PYTHON,
    ['-u', join(ROOT, 'test/doubles/python', script), ...mode, configPath],
    { stdio: 'pipe' },
  );
  let output = '';
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((done, failed) => {
    const timer = setTimeout(() => {
      void close();
      failed(new Error(`${script} did not start in 10 s:\n${output}`));
    }, 10_000);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /LISTENING (\d+)/.exec(output)?.[1];
      if (port) {
        clearTimeout(timer);
        done({ origin: `http://127.0.0.1:${port}`, port: Number(port), pid: child.pid!, output: () => output, close });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      failed(new Error(`${script} exited with ${code} before listening:\n${output}`));
    });
  });
}
