/**
 * `npm run bench [name ...]`: runs every bench/*.bench.ts (or the named ones) one after another.
 * Each bench measures ours and a baseline in the same run and prints ratios, never a lone time.
 * What each bench printed is kept in bench/results.json (the benches not run keep their last
 * figures); `npm run generate` renders docs/contributing/benchmarks.md from it.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_PAGE, type BenchResults, type BenchRun } from '../src/generate/bench-page.js';

const only = process.argv.slice(2);
const dir = import.meta.dirname;
const resultsFile = join(dir, 'results.json');
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort();

const results: BenchResults = existsSync(resultsFile)
  ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as BenchResults)
  : { benches: {} };
for (const file of files) {
  const name = file.replace('.bench.ts', '');
  console.log(`\n## ${name}`);
  const module = (await import(pathToFileURL(join(dir, file)).href)) as { default: () => Promise<void> };
  results.benches[name] = await recorded(name, () => module.default());
}
const sorted: BenchResults = {
  benches: Object.fromEntries(Object.entries(results.benches).sort(([a], [b]) => a.localeCompare(b))),
};
writeFileSync(resultsFile, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`\nfigures written to bench/results.json: run npm run generate to render ${BENCH_PAGE}`);

/** Runs one bench, keeping every line it prints through console.log (still printed as it comes). */
async function recorded(name: string, run: () => Promise<void>): Promise<BenchRun> {
  const lines: string[] = [];
  const started = {
    measured: new Date().toISOString().slice(0, 10),
    cores: cpus().length,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
  };
  const log = console.log;
  console.log = (...args: unknown[]) => {
    lines.push(...args.map(String).join(' ').split('\n'));
    log(...args);
  };
  try {
    await run();
  } finally {
    console.log = log;
  }
  return { ...started, command: `npm run bench ${name}`, lines: lines.filter((line) => line.trim() !== '') };
}
