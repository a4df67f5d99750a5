/**
 * CPU time (not wall time) of bench processes by thread and kind, from Linux perf:
 *
 *   BENCH_WINDOW=1 perf record -q -e task-clock -F 499 -k CLOCK_MONOTONIC -o /tmp/pg.data -- npx tsx bench/run.ts postgres-instances
 *   perf script -i /tmp/pg.data -F comm,pid,tid,time,ip,sym,dso > /tmp/pg.txt
 *   npx tsx bench/perf-threads.ts /tmp/pg.txt <events> <from µs> <to µs> <pid,pid...> [<from> <to> <pids> ...]
 *
 * Each window (as the bench prints it) counts the samples of the given processes: the main thread
 * or V8's and libuv's background threads, and the kind of code (JavaScript, the optimizing compiler,
 * GC, the kernel, other native code such as OpenSSL and the HTTP parser), in ms of CPU per event. A
 * task-clock sample is taken only while the thread runs, unlike a V8 CPU profile, which samples wall
 * time and charges a descheduled thread to what it was running (docs/decisions/0091-dispatch-figures.md).
 */
import { readFileSync } from 'node:fs';

const [file, events, ...rest] = process.argv.slice(2);
if (!file || !events || rest.length === 0 || rest.length % 3 !== 0) {
  console.error('usage: tsx bench/perf-threads.ts <perf script output> <events> <from µs> <to µs> <pid,pid...> [...]');
  process.exit(2);
}
const windows = Array.from({ length: rest.length / 3 }, (_, i) => ({
  from: Number(rest[i * 3]) / 1e6,
  to: Number(rest[i * 3 + 1]) / 1e6,
  pids: new Set(rest[i * 3 + 2]!.split(',').map(Number)),
  counts: new Map<string, number>(),
}));

function kind(sym: string, dso: string): string {
  if (/compiler::|Compil|maglev/i.test(sym)) return 'optimizing compiler';
  if (/Scavenge|Mark|Sweep|Heap|GC|Evacuat|Compact|Remembered|Slot/.test(sym)) return 'GC';
  if (dso.includes('kernel')) return 'kernel';
  if (dso.includes('JIT') || dso.startsWith('/tmp/perf-')) return 'JavaScript (JIT code)';
  return 'other native';
}

for (const line of readFileSync(file, 'utf8').split('\n')) {
  const m = /^\s*(.+?)\s+(\d+)\/(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
  if (!m) continue;
  const [pid, tid, at] = [Number(m[2]), Number(m[3]), Number(m[4])];
  for (const window of windows) {
    if (at < window.from || at > window.to || !window.pids.has(pid)) continue;
    const key = `${pid === tid ? 'main thread' : 'background threads'}: ${kind(m[6]!, m[7]!)}`;
    window.counts.set(key, (window.counts.get(key) ?? 0) + 1);
  }
}
// The sampling rate given to perf record -F (PERF_HZ, default 499).
const msPerSample = 1000 / Number(process.env.PERF_HZ ?? 499);
for (const [i, window] of windows.entries()) {
  const total = [...window.counts.values()].reduce((a, b) => a + b, 0);
  console.log(
    `window ${i + 1} (pids ${[...window.pids].join(' ')}): ${total} samples = ${((total * msPerSample) / Number(events)).toFixed(3)} ms CPU/event`,
  );
  for (const [key, n] of [...window.counts].sort())
    console.log(`  ${((n * msPerSample) / Number(events)).toFixed(3)} ms/event  ${key}`);
}
