import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU seconds (user + system) of a process so far, every thread, or of its main thread alone
 * (`mainOnly`), from /proc (Linux, clock ticks of 10 ms).
 */
function cpuSeconds(pid: number, mainOnly = false): number {
  try {
    const stat = mainOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** A bench's server in its own process (so the load generator does not share its event loop). */
export interface BenchChild {
  url: string;
  /** CPU seconds (user + system, every thread) the child used so far, from /proc (Linux); NaN elsewhere. */
  cpu(): number;
  /** CPU seconds of its main thread alone (a server's event loop: for observe, the forwarding thread); NaN elsewhere. */
  mainThreadCpu(): number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Runs the bench file `file` again as a child with `env` (which names its role), under tsx; resolves
 * once it prints `listening <url>` on a line of its own, fails if it exits first. `stop` sends SIGTERM
 * and waits for the exit.
 */
export function startBenchChild(file: string, role: string, env: Record<string, string>): Promise<BenchChild> {
  // BENCH_CPU_PROF=<dir>: the child writes a V8 CPU profile there at its exit (bench/cpu-profile.ts sums it).
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const proc: ChildProcess = spawn(process.execPath, [...prof, '--import', 'tsx', file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)\n/.exec(out)?.[1];
      if (url)
        resolve({
          url,
          pid: proc.pid ?? 0,
          cpu: () => cpuSeconds(proc.pid ?? 0),
          mainThreadCpu: () => cpuSeconds(proc.pid ?? 0, true),
          stop: () => new Promise((done) => (proc.once('exit', () => done()), proc.kill('SIGTERM'))),
        });
    });
    proc.once('exit', (code) => reject(new Error(`${role} child exited with ${code}: ${out}`)));
  });
}

/** A browser on a live page's event stream (see `startEventReader`). */
export interface EventReader {
  /** Stops reading; resolves with the bytes it read. */
  stop(): Promise<number>;
}

/** What the reader's process runs: reads the stream as fast as it comes, says its byte count at SIGTERM. */
const READER = `
const http = require('node:http');
let bytes = 0;
const request = http.get(process.env.EVENTS_URL, (res) => {
  process.stdout.write('reading\\n');
  res.on('data', (chunk) => (bytes += chunk.length));
});
request.on('error', (error) => (process.stderr.write(error.message + '\\n'), process.exit(1)));
process.once('SIGTERM', () => process.stdout.write('bytes ' + bytes + '\\n', () => process.exit(0)));
`;

/**
 * A browser on observe's live page in a process of its own, as a browser is: its event stream at
 * `url` read as fast as it comes until `stop`. In the load generator's process it would take the
 * load's event loop, and charge observe for the reading. Resolves once the stream answered.
 */
export function startEventReader(url: string): Promise<EventReader> {
  const proc = spawn(process.execPath, ['-e', READER], {
    env: { ...process.env, EVENTS_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('reading\n'))
        resolve({
          stop: async () => {
            proc.kill('SIGTERM');
            await exited;
            return Number(/bytes (\d+)/.exec(out)?.[1] ?? Number.NaN);
          },
        });
    });
    void exited.then(() => reject(new Error(`the event reader exited before reading ${url}`)));
  });
}
