import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts a double (a Java or Python server, any program that prints its URL once it serves) and
 * resolves with the first match of `ready` in its stdout, within 30 s; it fails with its stderr
 * when it exits first. The child is pushed on `children` so the caller's afterAll stops it.
 */
export function startPrinting(
  command: string,
  args: string[],
  ready: RegExp,
  children: ChildProcess[],
  name = args[0] ?? command,
): Promise<{ match: RegExpExecArray; stop: () => void }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((done, failed) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => failed(new Error(`${name} did not start in 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        done({ match, stop: () => child.kill() });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      failed(new Error(`${name} exited ${code}: ${err}`));
    });
  });
}
