import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) of a process so far, from /proc (Linux, clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
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
          stop: () => new Promise((done) => (proc.once('exit', () => done()), proc.kill('SIGTERM'))),
        });
    });
    proc.once('exit', (code) => reject(new Error(`${role} child exited with ${code}: ${out}`)));
  });
}
