import { describe, expect, it } from 'vitest';
import { sampleReport } from '../../test/support/sample-report.js';
import { renderJunit } from './junit.js';
import { withReplay } from './replay.js';

const context = { startedAt: new Date('2026-01-02T03:04:05.678Z'), hostname: 'ci-1' };

describe('junit.xml', () => {
  it('gives every testcase a time in seconds and every testsuite its counts, timestamp and hostname', () => {
    const xml = renderJunit(sampleReport(), context);
    const cases = [...xml.matchAll(/<testcase [^>]*>/g)].map((m) => m[0]);
    expect(cases).toHaveLength(sampleReport().results.length);
    for (const testcase of cases) expect(testcase).toMatch(/ time="0\.012"/);
    expect(xml).toContain(
      '<testsuite name="service/energy" id="0" tests="8" failures="0" errors="0" skipped="2" time="0.096" timestamp="2026-01-02T03:04:05Z" hostname="ci-1">',
    );
  });

  it('keeps counts the common XSD does not know off <testsuites>, and properties off <testcase>', () => {
    const xml = renderJunit(sampleReport(), context);
    expect(/<testsuites [^>]*>/.exec(xml)?.[0]).toBe(
      '<testsuites name="wallet-conformance" tests="11" failures="1" errors="0" time="1.234">',
    );
    expect(xml).not.toMatch(/<testcase [^>]*>\s*<properties>/);
  });

  it('writes a failure with its message and the check id, a skip with its reason, a warning as output', () => {
    const xml = renderJunit(sampleReport(), context);
    expect(xml).toContain(
      '<failure message="tenantUserId is the string &quot;20931&quot;, expected an integer" type="ORDER-RES">service/orders/withdrawal/order-res',
    );
    expect(xml).toContain('<skipped message="needs --expired-key"/>');
    expect(xml).toContain('WARNING: status &quot;CLOSED&quot; is not a documented value');
  });

  it('writes the replay command under a failure and a warning', () => {
    const xml = renderJunit(withReplay(sampleReport(), 'wallet-conformance verify service'), context);
    expect(xml).toContain(
      'service/orders/withdrawal/order-res\ntenantUserId is the string &quot;20931&quot;, expected an integer\nreplay: wallet-conformance verify service --case service/orders/withdrawal</failure>',
    );
    expect(xml).toContain('replay: wallet-conformance verify service --case service/card/close');
  });
});
