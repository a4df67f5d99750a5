import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker thread whose compiled module is `js` (a URL beside the caller's own module).
 * Run from the TypeScript sources (under tsx or vitest) there is no .js file: the .ts file of the
 * same name is loaded through tsx's loader instead.
 */
export function startWorkerThread(js: URL, workerData: unknown): Worker {
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData });
  const ts = pathToFileURL(fileURLToPath(js).replace(/\.js$/, '.ts')).href;
  // tsx's ESM entry (its package exports name it; require.resolve would give the CommonJS one).
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const entry = (
    JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  ).exports['./esm/api']!.import.default;
  const api = new URL(entry, pathToFileURL(manifest)).href;
  const bootstrap = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(ts)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
