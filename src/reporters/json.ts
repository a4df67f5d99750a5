import type { Report } from '../runner/types.js';

/** report.json: exactly the shape of design.md (../shared/report.schema.json). */
export function renderJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
