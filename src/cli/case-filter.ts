import { ConfigError } from '../core/errors.js';
import { matchesGlob, type Suite } from '../runner/suite.js';

/** Does `pattern` (an id or a glob: `*`, `**`, `?`) name this case? Its full id `suite/case` or its own id. */
function caseMatches(suite: string, id: string, pattern: string): boolean {
  const full = `${suite}/${id}`;
  return full === pattern || id === pattern || matchesGlob(full, pattern);
}

/** The edit distance of two short ids (for "did you mean"). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = here;
    }
  }
  return row[b.length]!;
}

/** Up to three known ids close to `wanted`: sharing its last part, containing it, or a few edits away. */
function closeMatches(wanted: string, known: readonly string[]): string[] {
  const tail = wanted.split('/').pop()!.replace(/[*?]/g, '');
  const scored = known.map((id) => {
    const own = id.split('/').pop()!;
    const d = Math.min(distance(wanted, id), distance(tail, own));
    const near = tail.length > 0 && (id.includes(tail) || (own.length >= 4 && tail.includes(own)));
    return { id, score: near ? 0 : d };
  });
  const limit = Math.max(3, Math.floor(tail.length / 3));
  return scored
    .filter((s) => s.score <= limit)
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id))
    .slice(0, 3)
    .map((s) => s.id);
}

/**
 * Narrows suites to the cases `--case` names. A pattern under `generated/` names a generated
 * property (`generated/merchant/<property>`), returned for the property run; any other pattern that
 * names no case of these suites is a typo: one line, exit 2, with the closest ids (`check: false`
 * narrows without the check: `run` checks once over both sides, then narrows each).
 */
export function filterCases(
  suites: Suite[],
  patterns: readonly string[],
  { check = true } = {},
): { suites: Suite[]; generated: string[] } {
  const generated = patterns.filter((p) => p.startsWith('generated/')).map((p) => p.split('/').slice(2).join('/') || p);
  const wanted = patterns.filter((p) => !p.startsWith('generated/'));
  const known = suites.flatMap((suite) => suite.cases.map((c) => `${suite.name}/${c.id}`));
  for (const pattern of check ? wanted : []) {
    if (suites.some((suite) => suite.cases.some((c) => caseMatches(suite.name, c.id, pattern)))) continue;
    const close = closeMatches(pattern, known);
    throw new ConfigError(
      'no-case',
      `--case ${JSON.stringify(pattern)} names no case${close.length ? `; did you mean ${close.join(', ')}?` : ` (${known.length} cases; ids are suite/case, e.g. ${known[0] ?? 'merchant/raw-body/valid-deposit'})`}`,
    );
  }
  const kept = suites
    .map((suite) => ({
      ...suite,
      cases: suite.cases.filter((c) => wanted.some((pattern) => caseMatches(suite.name, c.id, pattern))),
    }))
    .filter((suite) => suite.cases.length > 0);
  return { suites: kept, generated };
}
