import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './cli.js';

/** What one in-process run of the built CLI did: its exit status and what it wrote. */
export interface InProcessRun {
  status: number;
  stdout: string;
  stderr: string;
}

type Main = (argv: string[]) => Promise<number>;
let loaded: Promise<Main> | undefined;

/**
 * Runs the built CLI's `main` (dist/cli/main.js, the very function `bin/wallet-conformance.js`
 * calls with argv before setting the exit code) inside this test process, with stdout and stderr
 * captured. A process of the real CLI costs ~0.5 s of CPU to start; this costs that once per file.
 *
 * Only for runs that neither read stdin, nor listen, nor connect: those that end in the argument
 * checks (a bad flag, a missing file, an unknown command) and those that only read and write files
 * (report merge). Whatever such a run does to a process (exit code, lines on stdout and stderr) is
 * in `main`'s return and writes. A run that reads stdin, listens, connects or could leave something
 * running keeps a real process (`runCli`, `runCliAsync`): a process that hangs is a fault only that
 * shows. Calls must not overlap (the captured streams are this process's): await each. The secrets a
 * run registers for scrubbing (src/cli/secrets.ts) stay registered for the later runs of the file,
 * where a process would forget them: more is scrubbed, never less, so no test may expect a later
 * run to print an earlier run's secret.
 */
export async function runCliInProcess(args: string[]): Promise<InProcessRun> {
  loaded ??= import(pathToFileURL(resolve(ROOT, 'dist/cli/main.js')).href).then(
    (module: { main: Main }) => module.main,
  );
  const main = await loaded;
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const exitCode = process.exitCode;
  const noColor = process.env.NO_COLOR;
  let stdout = '';
  let stderr = '';
  const capture = (append: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture((text) => (stdout += text));
  process.stderr.write = capture((text) => (stderr += text));
  process.env.NO_COLOR = '1';
  process.exitCode = undefined;
  try {
    const status = await main(args);
    return { status, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = exitCode;
    if (noColor === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = noColor;
  }
}
