import { stringifyExact } from '../core/exact-json.js';
import type { Report } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';

/**
 * report.json: the shape of schemas/report.schema.json (a superset of the common
 * contract), with every number written as its literal digits: evidence holds exact JSON
 * (LosslessNumber), which JSON.stringify would write as `{"value":…,"isLosslessNumber":true}`.
 */
export function renderJson(report: Report, baseline?: BaselineComparison): string {
  return `${stringifyExact(baseline ? { ...report, baseline: baselineSection(baseline) } : report, 2)}\n`;
}

function baselineSection(comparison: BaselineComparison): Record<string, unknown> {
  return {
    file: comparison.file,
    known: comparison.known.map((r) => r.id),
    worse: comparison.worse.map((w) => w.result.id),
    fixed: comparison.fixed.map((r) => r.id),
  };
}
