import { describe, expect, it } from 'vitest';
import { sampleReport } from '../../test/support/sample-report.js';
import { renderMarkdown } from './markdown.js';
import { withReplay } from './replay.js';

describe('summary.md', () => {
  it('starts with the verdict as a heading and a table of counts, for $GITHUB_STEP_SUMMARY', () => {
    const lines = renderMarkdown(sampleReport()).split('\n');
    expect(lines[0]).toBe('## ❌ wallet-conformance: FAILED: 1 check(s) failed');
    expect(lines.slice(2, 5)).toEqual([
      '| passed | failed | warnings | skipped | time |',
      '| ---: | ---: | ---: | ---: | ---: |',
      '| 7 | 1 | 1 | 2 | 1.2 s |',
    ]);
  });

  it('lists failures by cause before what was tested, and folds warnings and skips', () => {
    const text = renderMarkdown(sampleReport());
    expect(text).toContain('### Failed (1), by cause');
    expect(text).toContain(
      '- ❌ `service/orders/withdrawal/order-res` [ORDER-RES]: tenantUserId is the string "20931", expected an integer',
    );
    expect(text.indexOf('### Failed')).toBeLessThan(text.indexOf('### What was tested'));
    expect(text).toContain('<details><summary>⏭️ 2 skipped</summary>');
  });

  it('groups what was not judged by reason, from the notes', () => {
    const report = sampleReport();
    report.notes = [
      '2 MUST checks skipped: needs --probe-url or --probe-cmd',
      'energy restored',
      'not judged: 7 judgements: callback retry: the observation ended',
    ];
    const text = renderMarkdown(report);
    expect(text).toContain(
      '### Not judged, by reason\n\n- 2 MUST checks skipped: needs --probe-url or --probe-cmd\n- not judged: 7 judgements: callback retry: the observation ended\n',
    );
    expect(renderMarkdown(sampleReport())).not.toContain('### Not judged');
  });

  it('keeps a message from breaking a line or adding HTML', () => {
    const report = sampleReport();
    report.results[7]!.message = 'a | b\n<script>x</script>';
    expect(renderMarkdown(report)).toContain('[ORDER-RES]: a \\| b &lt;script&gt;x&lt;/script&gt;\n');
  });

  it("puts the pre-flight diagnosis above the failures, shows each failure's replay, and writes no JSON for the target", () => {
    const report = withReplay(sampleReport(), 'wallet-conformance verify service --base-url http://127.0.0.1:4010');
    report.preflight = {
      verdict: 'warning',
      steps: [{ what: 'one valid energy query', observed: 'HTTP 401', conclusion: 'check the key', level: 'warning' }],
    };
    report.target.tls = { extraCaCertificates: 144 };
    const text = renderMarkdown(report);
    expect(text.indexOf('**Pre-flight: warning**')).toBeLessThan(text.indexOf('### Failed'));
    expect(text).toContain(
      '  replay: `wallet-conformance verify service --base-url http://127.0.0.1:4010 --case service/orders/withdrawal`',
    );
    expect(text).toContain('tls (extra CA certificates 144)');
    expect(text).not.toMatch(/\{"/);
  });

  it('separates failures worse than the baseline from known ones', () => {
    const report = sampleReport();
    const failed = report.results.filter((r) => r.status === 'failed');
    const text = renderMarkdown(report, { file: 'base.json', known: failed, worse: [], fixed: [] });
    expect(text.split('\n')[0]).toBe(
      '## ✅ wallet-conformance: PASSED: no check worse than the baseline (1 known failure(s), not fatal)',
    );
    expect(text).toContain('### Known failures, also in the baseline (1): not fatal');
    expect(text).not.toContain('### Worse');
  });
});
