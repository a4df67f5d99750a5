/**
 * `npm run bench [name ...]`: runs every bench/*.bench.ts (or the named ones) one after another.
 * Each bench measures ours and a baseline in the same run and prints ratios, never a lone time.
 */
import { readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const only = process.argv.slice(2);
const dir = import.meta.dirname;
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort();

for (const file of files) {
  console.log(`\n## ${file.replace('.bench.ts', '')}`);
  const module = (await import(pathToFileURL(join(dir, file)).href)) as { default: () => Promise<void> };
  await module.default();
}
