import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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
export function runCliAsync(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<Omit<CliRun, 'stdoutBytes'>> {
  return new Promise((done) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
    const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), ...args], {
      cwd: options.cwd ?? ROOT,
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

/**
 * Runs the real CLI with `--listen PORT` and plays the person of the hand-triggered case: once the
 * CLI prints its receiver URL (http://127.0.0.1:PORT/...), `trigger` makes the service send one
 * callback there, once. Bounded by the CLI's own wait and the test's timeout.
 */
export function runCliWithHand(
  args: string[],
  port: number,
  trigger: (receiverUrl: string) => Promise<void>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [resolve(ROOT, 'bin/wallet-conformance.js'), ...args, '--listen', String(port)],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    let stdout = '';
    let stderr = '';
    let triggered = false;
    const receiverUrl = new RegExp(`http://127\\.0\\.0\\.1:${port}/[^\\s'"),]*`);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = receiverUrl.exec(stdout);
      if (found && !triggered) {
        triggered = true;
        trigger(found[0]).catch((error: Error) => (stderr += `trigger failed: ${error.message}\n`));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

/** A `merchant --config F --port 0` started by the real CLI as its own process, once it printed its URLs. */
export interface ServedMerchant {
  child: ChildProcess;
  callbackUrl: string;
  probeUrl: string;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
}

/** Starts `merchant --config F --port 0` and resolves with the URLs it prints (fails if it exits first or takes over 20 s). */
export function serveMerchant(config: string): Promise<ServedMerchant> {
  const child = spawn(
    process.execPath,
    [resolve(ROOT, 'bin/wallet-conformance.js'), 'merchant', '--config', config, '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`merchant did not start: ${output}`)), 20_000);
    child.on('exit', () => fail(new Error(`merchant exited: ${output}`)));
    child.stdout!.on('data', () => {
      const match =
        /merchant listening on (http:\/\/127\.0\.0\.1:\d+\/callback) \(probe: (http:\/\/127\.0\.0\.1:\d+\/probe)\)/.exec(
          output,
        );
      if (!match) return;
      clearTimeout(timer);
      done({ child, callbackUrl: match[1]!, probeUrl: match[2]!, output: () => output });
    });
  });
}

/** A `wallet-conformance emulator ...` started by the real CLI as its own process, once it printed its base URL. */
export interface ServedEmulator {
  child: ChildProcess;
  url: string;
  /** The control token it printed. */
  token: string;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
}

/** Starts `wallet-conformance emulator <args>` and resolves once it printed its base URL (fails if it exits first or takes over 20 s). */
export function serveEmulator(args: string[]): Promise<ServedEmulator> {
  const child = spawn(process.execPath, [resolve(ROOT, 'bin/wallet-conformance.js'), 'emulator', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((done, failed) => {
    const timer = setTimeout(() => failed(new Error(`no listening line in time: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /emulator listening on (http:\/\/\S+) \(control token: (\S+)\)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done({ child, url: match[1]!, token: match[2]!, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => failed(new Error(`exited with ${code}: ${output}`)));
  });
}
