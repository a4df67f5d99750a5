import { hostname } from 'node:os';
import type { Rule } from '../core/rules.js';
import type { Report } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './markdown.js';

/** What the reports say besides the report itself. */
interface ReportContext {
  /** The rule catalog: report.html shows each rule's text. */
  rules?: readonly Rule[];
  /** The comparison with `--baseline`, when given. */
  baseline?: BaselineComparison;
  /** When the run started (junit.xml's timestamp); default: now minus the run's duration. */
  startedAt?: Date;
  hostname?: string;
}

/** The four report files (docs/suites-and-verdicts.md), by file name; the CLI writes them. */
export function renderReports(report: Report, context: ReportContext = {}): Array<{ path: string; contents: string }> {
  const startedAt = context.startedAt ?? new Date(Date.now() - report.summary.durationMs);
  return [
    { path: 'report.json', contents: renderJson(report, context.baseline) },
    { path: 'junit.xml', contents: renderJunit(report, { startedAt, hostname: context.hostname ?? hostname() }) },
    { path: 'summary.md', contents: renderMarkdown(report, context.baseline) },
    {
      path: 'report.html',
      contents: renderHtml(report, {
        rules: context.rules ?? [],
        ...(context.baseline ? { baseline: context.baseline } : {}),
      }),
    },
  ];
}
