import { describe, expect, it } from 'vitest';
import { EXACT_AMOUNT, sampleReport } from '../../test/support/sample-report.js';
import type { Rule } from '../core/rules.js';
import { deliveryTimeline, renderHtml } from './html.js';

const rules: Rule[] = [
  { id: 'ERR-401', text: 'missing valid credentials get HTTP 401', severity: 'MUST', source: 'errors', blackBox: true },
  {
    id: 'ORDER-RES',
    text: 'decrypted result holds tenantUserId typed integer',
    severity: 'MUST',
    source: 'orders',
    blackBox: true,
  },
];

describe('report.html', () => {
  it('says FAILED in the header and lists the target as a table, not as JSON', () => {
    const html = renderHtml(sampleReport(), { rules });
    expect(html).toMatch(/<header class="verdict fail">\s*<h1>FAILED<\/h1>/);
    expect(html).toContain('<td><code>baseUrl http://127.0.0.1:4010</code></td>');
    expect(html).not.toContain('"baseUrl"');
  });

  it('shows a rule with six passed and one skipped check as passed, with the rule text', () => {
    const html = renderHtml(sampleReport(), { rules });
    const row =
      /<tr class="(\w+)"><td><span class="badge \w+">\w+<\/span><\/td><td class="rule-id"><b>ERR-401<\/b>.*?<\/tr>/s.exec(
        html,
      );
    expect(row?.[1]).toBe('passed');
    expect(row?.[0]).toContain('missing valid credentials get HTTP 401');
    expect(row?.[0]).toContain('6 passed, 1 skipped');
  });

  it('puts the failures first and open, with the decrypted answer beside the wire and the amount unrounded', () => {
    const html = renderHtml(sampleReport(), { rules });
    const firstCheck = html.indexOf('<details id="check-');
    expect(html.slice(firstCheck, firstCheck + 200)).toMatch(/class="check failed" open>/);
    expect(html).toContain('answer (decrypted)');
    expect(html).toContain(`&quot;amount&quot;: ${EXACT_AMOUNT}`);
    expect(html).not.toContain('isLosslessNumber');
  });
});

describe('report.html against a baseline', () => {
  it('passes a run whose only failure the baseline knows, and lists it as known, not as worse', () => {
    const report = sampleReport();
    const failed = report.results.filter((r) => r.status === 'failed');
    const html = renderHtml(report, { rules, baseline: { file: 'base.json', known: failed, worse: [], fixed: [] } });
    expect(html).toMatch(
      /<header class="verdict pass">\s*<h1>PASSED<\/h1>\s*<p>no check worse than the baseline \(1 known failure\(s\), not fatal\)<\/p>/,
    );
    expect(html).toContain('<h3>Worse than the baseline: these fail the run (0)</h3><p class="muted">none</p>');
    expect(html).toMatch(
      /<h3>Known failures, also in the baseline: not fatal \(1\)<\/h3><ul><li><a href="#check-7">service\/orders\/withdrawal\/order-res<\/a><\/li><\/ul>/,
    );
  });
});

describe('the delivery timeline', () => {
  it('numbers the attempts, times them from the first, and tells retries from the first delivery by the previous answer', () => {
    const timeline = deliveryTimeline(sampleReport().results.find((r) => r.id.endsWith('callback-attempts'))!);
    const rows = [...timeline.matchAll(/<tr class="(ack|nack)">(.*?)<\/tr>/g)].map((m) => [
      m[1],
      m[2]!.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'),
    ]);
    expect(rows).toEqual([
      ['nack', '|#1|+0 ms|uuid-1|nem-1|first delivery|no ack| HTTP 200, errCode 1|'],
      ['nack', '|#2|+55 ms|uuid-2|nem-1|retry (#1 was not acknowledged)|no ack| HTTP 500, errCode 500|'],
      ['nack', '|#3|+110 ms|uuid-3|nem-1|retry (#2 was not acknowledged)|no ack| HTTP 200, errCode &quot;0&quot;|'],
      ['ack', '|#4|+165 ms|uuid-4|nem-1|retry (#3 was not acknowledged)|ack| HTTP 200, errCode 0|'],
    ]);
    expect(timeline).toContain('retry delays 50, 50, 50, 50 ms');
  });

  it('reads each answer by the one definition of an acknowledgement, an ambiguous one shown as such (U-CB-RESPONSE)', () => {
    const result = sampleReport().results.find((r) => r.id.endsWith('callback-attempts'))!;
    const delivery = (receivedAt: number, status: number, body: string) => ({
      request: { receivedAt, plain: '{"trackingId":"nem-2","requestUUID":"u"}' },
      response: { status, body },
    });
    const exchanges = [
      delivery(0, 200, '{"errCode":0.0}'),
      delivery(10, 500, '{"errCode":0}'),
      delivery(20, 200, '{"errCode":0}'),
    ];
    const rows = [
      ...deliveryTimeline({ ...result, evidence: { exchanges } }).matchAll(/<tr class="(ack|nack)">(.*?)<\/tr>/g),
    ].map((m) => m[2]!.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
    expect(rows).toEqual([
      '|#1|+0 ms|u|nem-2|first delivery|ambiguous| HTTP 200, errCode 0.0 (ambiguous: errCode written 0.0 (a strictly typed service may not read it as 0))|',
      '|#2|+10 ms|u|nem-2|resend after the ambiguous answer of #1|ambiguous| HTTP 500, errCode 0 (ambiguous: errCode 0 with HTTP 500 (a service that reads the status first counts it as a failure))|',
      '|#3|+20 ms|u|nem-2|resend after the ambiguous answer of #2|ack| HTTP 200, errCode 0|',
    ]);
  });

  it('is empty for a check without callback deliveries', () => {
    expect(deliveryTimeline(sampleReport().results[0]!)).toBe('');
  });
});
