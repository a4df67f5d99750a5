import { describe, expect, it } from 'vitest';
import { sampleReport } from '../../test/support/sample-report.js';
import { renderMarkdown } from './markdown.js';

describe('summary.md', () => {
  it('starts with the verdict as a heading and a table of counts, for $GITHUB_STEP_SUMMARY', () => {
    const lines = renderMarkdown(sampleReport()).split('\n');
    expect(lines[0]).toBe('## ❌ wallet-conformance: FAILED: 1 check(s) failed');
    expect(lines.slice(2, 5)).toEqual(['| passed | failed | warnings | skipped | time |', '| ---: | ---: | ---: | ---: | ---: |', '| 7 | 1 | 1 | 2 | 1.2 s |']);
  });

  it('lists failures in a table and folds warnings and skips', () => {
    const text = renderMarkdown(sampleReport());
    expect(text).toContain('### Failed (1)');
    expect(text).toContain('| ❌ failed | ORDER-RES | `service/orders/withdrawal/order-res` | tenantUserId is the string "20931", expected an integer |');
    expect(text).toContain('<details><summary>⏭️ 2 skipped</summary>');
  });

  it('keeps a message from breaking the table or adding HTML', () => {
    const report = sampleReport();
    report.results[7]!.message = 'a | b\n<script>x</script>';
    expect(renderMarkdown(report)).toContain('| a \\| b &lt;script&gt;x&lt;/script&gt; |');
  });

  it('separates failures worse than the baseline from known ones', () => {
    const report = sampleReport();
    const failed = report.results.filter((r) => r.status === 'failed');
    const text = renderMarkdown(report, { file: 'base.json', known: failed, worse: [], fixed: [] });
    expect(text.split('\n')[0]).toBe('## ✅ wallet-conformance: PASSED: no check worse than the baseline (1 known failure(s), not fatal)');
    expect(text).toContain('### Known failures, also in the baseline (1): not fatal');
    expect(text).not.toContain('### Worse');
  });
});
