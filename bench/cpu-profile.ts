/**
 * `npx tsx bench/cpu-profile.ts <file.cpuprofile>... [--top N] [--from <µs> --to <µs>]`: the self time of V8 CPU profiles (from
 * `node --cpu-prof`, or a bench child started with BENCH_CPU_PROF=<dir>) summed by function and by
 * file, heaviest first, with each one's share of the profile's samples. Used to compare the
 * emulator's thread before and after a change (docs/decisions/0091-dispatch-figures.md).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Self time per function (name, file, line) and per file, in milliseconds, heaviest first. */
export function summarize(
  profile: Profile,
  window: { from?: number; to?: number } = {},
): { totalMs: number; idleMs: number; functions: Array<[string, number]>; files: Array<[string, number]> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < (window.from ?? -Infinity) || at > (window.to ?? Infinity)) return;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0));
  });
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    totalUs += us;
    if (functionName === '(idle)') idleUs += us;
    const file = url.replace(/^.*\/(src|bench|node_modules)\//, '$1/') || '(native)';
    const name = `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
  }
  const sorted = (map: Map<string, number>) =>
    [...map].map(([k, us]): [string, number] => [k, us / 1000]).sort((a, b) => b[1] - a[1]);
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, functions: sorted(functions), files: sorted(files) };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const args = process.argv.slice(2);
  // --from <µs> --to <µs>: only the samples of that window (the bench prints it with BENCH_CPU_PROF set).
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : Number(args.splice(at, 2)[1]);
  };
  const window = { from: flag('--from'), to: flag('--to') };
  const top = flag('--top') ?? 40;
  const files = args;
  const file = files.join(' + ');
  if (files.length === 0) {
    console.error('usage: tsx bench/cpu-profile.ts <file.cpuprofile>... [--top N] [--from <µs> --to <µs>]');
    process.exit(2);
  }
  // Several files (the processes of one run) are summed.
  const summary = files
    .map((one) => summarize(JSON.parse(readFileSync(one, 'utf8')) as Profile, window))
    .reduce((sum, one) => {
      const add = (a: Array<[string, number]>, b: Array<[string, number]>) => {
        const map = new Map(a);
        for (const [k, ms] of b) map.set(k, (map.get(k) ?? 0) + ms);
        return [...map].sort((x, y) => y[1] - x[1]);
      };
      return {
        totalMs: sum.totalMs + one.totalMs,
        idleMs: sum.idleMs + one.idleMs,
        functions: add(sum.functions, one.functions),
        files: add(sum.files, one.files),
      };
    });
  const busy = summary.totalMs - summary.idleMs;
  console.log(
    `${file}: ${summary.totalMs.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms busy (idle ${summary.idleMs.toFixed(0)} ms)`,
  );
  console.log('\nby function (self ms, share of busy):');
  for (const [name, ms] of summary.functions.slice(0, top))
    console.log(`${ms.toFixed(1).padStart(9)}  ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${name}`);
  console.log('\nby file:');
  for (const [name, ms] of summary.files.slice(0, 25))
    console.log(`${ms.toFixed(1).padStart(9)}  ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${name}`);
}
