import type { Report } from '../runner/types.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './markdown.js';

/** The four report files of design.md, by file name; the CLI writes them. */
export function renderReports(report: Report): Array<{ path: string; contents: string }> {
  return [
    { path: 'report.json', contents: renderJson(report) },
    { path: 'junit.xml', contents: renderJunit(report) },
    { path: 'summary.md', contents: renderMarkdown(report) },
    { path: 'report.html', contents: renderHtml(report) },
  ];
}
