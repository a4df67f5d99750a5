import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { sampleReport } from '../../test/support/sample-report.js';
import type { Report } from '../runner/types.js';
import { consoleReporter } from './console.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderMarkdown } from './markdown.js';

/** A report whose pre-flight suspected the key but could not prove it (the suites ran). */
function withPreflight(): Report {
  return {
    ...sampleReport(),
    preflight: {
      verdict: 'warning',
      steps: [
        {
          what: 'one valid deposit callback',
          observed: 'HTTP 400 {"errCode":4001}',
          conclusion: 'the merchant did not acknowledge a valid callback',
          level: 'warning',
        },
        {
          what: 'the same callback under every other padding',
          observed: 'none acknowledged',
          conclusion: 'no other reading of the profile explains it <b>',
          level: 'ok',
        },
      ],
    },
  };
}

describe('pre-flight in the reports', () => {
  it('report.json carries it and stays valid against the shipped schema; a report without it is valid too', () => {
    const schema = JSON.parse(
      readFileSync(resolve(import.meta.dirname, '../../schemas/report.schema.json'), 'utf8'),
    ) as object;
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const json = JSON.parse(renderJson(withPreflight())) as Report;
    expect(json.preflight?.steps).toHaveLength(2);
    expect(validate(json)).toBe(true);
    expect(validate({ ...json, preflight: { verdict: 'maybe', steps: [] } })).toBe(false);
    expect(validate(JSON.parse(renderJson(sampleReport())))).toBe(true);
  });

  it('report.html shows each step near the top, escaped; summary.md lists them; the console says the verdict', () => {
    const html = renderHtml(withPreflight());
    expect(html).toContain('<h2 id="preflight">Pre-flight: warning</h2>');
    expect(html.indexOf('id="preflight"')).toBeLessThan(html.indexOf('id="rules"'));
    expect(html).toContain('<td>HTTP 400 {&quot;errCode&quot;:4001}</td>');
    expect(html).toContain('explains it &lt;b&gt;');
    expect(renderHtml(sampleReport())).not.toContain('id="preflight"');
    const md = renderMarkdown(withPreflight());
    expect(md).toContain('**Pre-flight: warning** (unproven: the suites ran and judged)');
    expect(md).toContain(
      '- ⚠️ one valid deposit callback: HTTP 400 {"errCode":4001}. the merchant did not acknowledge a valid callback',
    );
    const lines: string[] = [];
    const reporter = consoleReporter((text) => lines.push(text));
    reporter({ kind: 'start', total: 11, side: 'service' });
    reporter({ kind: 'done', report: withPreflight() });
    expect(lines.join('')).toContain('  pre-flight: warning (1 unproven; see report.html)\n');
  });
});
