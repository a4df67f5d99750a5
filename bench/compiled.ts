/**
 * Observe's modules as users run them, for the observe benches: compiled by tsc into dist/, not
 * run through the tsx loader that runs the benches. tsx's transform wraps every function made at
 * run time in a naming helper (esbuild's keepNames), and observe makes some twenty closures per
 * exchange, so a bench run through it charges observe for the loader's work: in a paired run at
 * 3,000 requests a second, observe from dist/ spent about 6% less CPU per request.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

let built = false;

/**
 * Builds dist/ from the sources (tsc, as `npm run build` does), so a bench measures the code as it
 * stands; once per `npm run bench`, however many benches ask.
 */
export function buildDist(): void {
  if (built) return;
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'],
    {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: 'inherit',
    },
  );
  built = true;
}

function load<T>(path: string): Promise<T> {
  return import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
}

/** The parts of observe a bench assembles, from dist/ (built by `buildDist` first). */
export async function compiledObserve() {
  return {
    ...(await load<typeof import('../src/observe/judge-queue.js')>('observe/judge-queue.js')),
    ...(await load<typeof import('../src/observe/metrics.js')>('observe/metrics.js')),
    ...(await load<typeof import('../src/observe/observed.js')>('observe/observed.js')),
    ...(await load<typeof import('../src/observe/proxy.js')>('observe/proxy.js')),
    ...(await load<typeof import('../src/observe/ui/feed.js')>('observe/ui/feed.js')),
    ...(await load<typeof import('../src/observe/ui/server.js')>('observe/ui/server.js')),
    ...(await load<typeof import('../src/secrets/scrub.js')>('secrets/scrub.js')),
  };
}
