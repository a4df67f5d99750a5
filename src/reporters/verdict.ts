import { stringifyExact } from '../core/exact-json.js';
import type { CheckResult, Report, Status } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';

/** The run's verdict in one line, as the exit status sees it. */
interface Verdict {
  passed: boolean;
  /** Passed, but MUST checks were skipped: never shown as an all-clear. */
  gaps?: boolean;
  /** `PASSED`, `FAILED` or `NOT FULLY CHECKED`. */
  label: string;
  /** Why, in one line. */
  reason: string;
  /** `label: reason`. */
  text: string;
}

function verdict(passed: boolean, label: string, reason: string, gaps = false): Verdict {
  return { passed, ...(gaps ? { gaps } : {}), label, reason, text: `${label}: ${reason}` };
}

/** Pass or fail as the exit status decides: any failure, or with a baseline only a worse one. */
export function verdictOf(report: Report, baseline?: BaselineComparison): Verdict {
  const { failed } = report.summary;
  // A check the run could not judge through no fault of the target: exit 2, whatever else was found.
  const faults = report.results.filter((result) => result.fault);
  if (faults.length > 0)
    return verdict(
      false,
      'COULD NOT JUDGE',
      `${faults.length} check(s) could not be judged through no fault of the target (${[...new Set(faults.map((r) => `${r.fault} error`))].join(', ')}): ${faults[0]!.message}`,
    );
  if (baseline) {
    const worse = baseline.worse.length;
    if (worse > 0)
      return verdict(
        false,
        'FAILED',
        `${worse} check(s) worse than the baseline (${baseline.known.length} known failure(s) not counted)`,
      );
    return verdict(
      true,
      'PASSED',
      `no check worse than the baseline${baseline.known.length ? ` (${baseline.known.length} known failure(s), not fatal)` : ''}`,
    );
  }
  if (failed > 0) return verdict(false, 'FAILED', `${failed} check(s) failed`);
  // A green run that skipped MUST checks is not an all-clear: say how many and why.
  const gaps = report.summary.skippedMust ?? 0;
  if (gaps > 0)
    return verdict(
      true,
      'NOT FULLY CHECKED',
      `no check failed, but ${gaps} MUST check(s) were skipped (${report.notes?.[0] ?? 'see the skipped results'})`,
      true,
    );
  return verdict(true, 'PASSED', 'every check that must pass passed');
}

/**
 * A rule's status over its checks: failed > warning > passed, and skipped only when every check
 * was skipped (six passed and one skipped is passed: the rule was checked).
 */
export function ruleStatus(results: readonly Pick<CheckResult, 'status'>[]): Status {
  const has = (status: Status) => results.some((r) => r.status === status);
  if (has('failed')) return 'failed';
  if (has('warning')) return 'warning';
  if (has('passed')) return 'passed';
  return 'skipped';
}

/** One side of a target in a person's words: its address, its crypto profile, everything else. */
interface TargetSide {
  side: string;
  address: string[];
  profile: string;
  other: string[];
}

const ADDRESS = ['baseUrl', 'cardBaseUrl', 'callbackUrl', 'probeUrl'];

/** camelCase in words: `extraCaCertificates` → `extra CA certificates`. */
function words(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/\b(ca|tls|url|id|api|ms)\b/g, (w) => w.toUpperCase());
}

/** A value in words, never as JSON: an object is `name value, name value` (`tls {"extraCaCertificates":144}` → `extra CA certificates 144`). */
function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === true) return 'yes';
  if (value === false) return 'no';
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.map(show).join(', ');
  if (typeof value === 'object' && !('isLosslessNumber' in value))
    return Object.entries(value)
      .map(([k, v]) => `${words(k)} ${show(v)}`)
      .join(', ');
  return stringifyExact(value);
}

/** The target as one row per side (`run` tests both) plus run-wide facts (embedded, TLS). */
export function targetSides(target: Record<string, unknown>): {
  sides: TargetSide[];
  general: Array<[string, string]>;
} {
  const isSide = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && 'side' in value;
  const nested = [target.service, target.merchant].filter(isSide);
  const list = nested.length > 0 ? nested : [target];
  const sides = list.map((one): TargetSide => ({
    side: show(one.side ?? '?'),
    address: ADDRESS.filter(
      (key) => typeof one[key] === 'string' && !(key === 'cardBaseUrl' && one[key] === one.baseUrl),
    ).map((key) => `${key} ${String(one[key])}`),
    profile:
      one.profile && typeof one.profile === 'object'
        ? Object.entries(one.profile as Record<string, unknown>)
            .map(([k, v]) => `${k} ${show(v)}`)
            .join(', ')
        : '',
    other: Object.entries(one)
      .filter(
        ([key, value]) =>
          key !== 'side' && key !== 'profile' && !ADDRESS.includes(key) && value !== null && value !== undefined,
      )
      .map(([key, value]) =>
        value !== null && typeof value === 'object' && !('isLosslessNumber' in value)
          ? `${key} (${show(value)})`
          : `${key} ${show(value)}`,
      ),
  }));
  const general =
    nested.length > 0
      ? describeTarget(
          Object.fromEntries(Object.entries(target).filter(([key]) => key !== 'service' && key !== 'merchant')),
        )
      : [];
  return { sides, general };
}

/** The target as rows of a table: nested fields flattened to dotted names (`service.baseUrl`). */
export function describeTarget(target: Record<string, unknown>): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  const walk = (value: unknown, path: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && !('isLosslessNumber' in value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
    } else
      rows.push([
        path,
        typeof value === 'string' ? value : value === null || value === undefined ? '—' : stringifyExact(value),
      ]);
  };
  walk(target, '');
  return rows;
}
