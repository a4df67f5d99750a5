// `npm run mutation:reference [-- merchant|service|service-requests] [-- stryker flags]`: StrykerJS over the reference
// merchant and the service core, each mutant judged by the conformance run (stryker.reference.config.mjs).
// Each scope runs on its own, with its own reports folder and incremental file, so one can be re-run alone.
//
// The command runner reports no per-test coverage, so Stryker's incremental mode would reuse every old
// result, survivors included, even after the suites grew. A survivor must face the current suites: its
// old result is dropped before each run. A killed mutant stays killed (more cases cannot revive it) and
// is re-tested only when its code changed; `--force` re-tests everything.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const SCOPE_NAMES = ['merchant', 'service', 'service-requests'];
const DETECTED = new Set(['Killed', 'Timeout']);

const args = process.argv.slice(2);
const named = args.filter((arg) => SCOPE_NAMES.includes(arg));
const strykerArgs = args.filter((arg) => !SCOPE_NAMES.includes(arg));
const scopes = named.length > 0 ? named : SCOPE_NAMES;

/** Drops every result but Killed and Timeout from an incremental file; returns how many were dropped. */
function dropUndetected(file) {
  if (!existsSync(file)) return 0;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  let dropped = 0;
  for (const entry of Object.values(report.files ?? {})) {
    const kept = entry.mutants.filter((mutant) => DETECTED.has(mutant.status));
    dropped += entry.mutants.length - kept.length;
    entry.mutants = kept;
  }
  writeFileSync(file, JSON.stringify(report));
  return dropped;
}

/** The mutants of a scope's JSON report counted by status, and its survivors one a line (for docs/mutation-reference.md). */
function tally(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const counts = {};
  const survivors = [];
  for (const [name, entry] of Object.entries(report.files)) {
    for (const mutant of entry.mutants) {
      counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
      // Ignored: a mutator the config leaves off (StringLiteral); not a survivor, not in the score.
      if (DETECTED.has(mutant.status) || mutant.status === 'Ignored') continue;
      const { line, column } = mutant.location.start;
      survivors.push(
        `${name}:${line}:${column} ${mutant.mutatorName} ${JSON.stringify(mutant.replacement ?? '')} (${mutant.status})`,
      );
    }
  }
  return { counts, survivors };
}

const totals = {};
for (const scope of scopes) {
  const folder = `reports/mutation-reference/${scope}`;
  const dropped = dropUndetected(`${folder}/incremental.json`);
  if (dropped > 0)
    process.stdout.write(`${scope}: ${dropped} earlier survivor(s) re-tested against the current suites\n`);
  const started = Date.now();
  const result = spawnSync('npx', ['stryker', 'run', 'stryker.reference.config.mjs', ...strykerArgs], {
    stdio: 'inherit',
    env: { ...process.env, REFERENCE_MUTATION_SCOPE: scope },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const { counts, survivors } = tally(`${folder}/mutation.json`);
  for (const survivor of survivors) process.stdout.write(`survivor ${survivor}\n`);
  for (const [status, n] of Object.entries(counts)) totals[status] = (totals[status] ?? 0) + n;
  process.stdout.write(`${scope}: ${JSON.stringify(counts)} in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
const detected = (totals.Killed ?? 0) + (totals.Timeout ?? 0);
const valid = detected + (totals.Survived ?? 0) + (totals.NoCoverage ?? 0);
process.stdout.write(
  `reference mutation score: ${((100 * detected) / valid).toFixed(2)}% (${detected} of ${valid} detected) ${JSON.stringify(totals)}\n`,
);
