import type { StormResult } from './storm.js';
import { offenderLines, summaryLine } from './summary.js';

/** What the storm was aimed at, for the report. */
interface LoadTarget {
  callbackUrls: readonly string[];
  /** The probe URL, `--probe-cmd`, or null. */
  probe: string | null;
  /** What differs from the default network (`tls: {insecure: true}`, ...), as verify's reports say. */
  tls?: unknown;
}

/**
 * report.json of a storm, in verify's shape (target, summary, results with rule ids) plus a
 * `load` section with every figure and the latency histogram.
 */
export function loadReportJson(result: StormResult, target: LoadTarget): Record<string, unknown> {
  const status = result.exactlyOnce === undefined ? 'skipped' : result.exactlyOnce ? 'passed' : 'failed';
  const message =
    result.exactlyOnce === undefined
      ? 'needs --probe-url or --probe-cmd: processing was not checked (exactly-once was not judged)'
      : result.exactlyOnce
        ? `every one of ${result.events} events processed exactly once`
        : `${result.offenders.length} events not processed exactly once`;
  const unacknowledged = result.events - result.acknowledged;
  const acknowledged = {
    id: 'load/merchant/acknowledged',
    suite: 'load',
    case: 'merchant',
    title: 'Every event of the storm is acknowledged (errCode 0) by some delivery',
    rules: ['CB-ERRCODE'],
    status: unacknowledged > 0 ? 'failed' : 'passed',
    message:
      unacknowledged > 0
        ? `${unacknowledged} of ${result.events} events were never acknowledged`
        : `every one of ${result.events} events acknowledged`,
    evidence: { failures: result.failures },
  };
  const results = [
    {
      id: 'load/merchant/exactly-once',
      suite: 'load',
      case: 'merchant',
      title: 'Every event of the storm is processed exactly once, and none is acknowledged without being processed',
      rules: ['CB-ONCE', 'CB-DUP-ACK', 'CB-NO-FALSE-ACK'],
      status,
      message,
      evidence: { summary: summaryLine(result), offenders: result.offenders.slice(0, 100) },
    },
    acknowledged,
  ];
  const count = (wanted: string) => results.filter((entry) => entry.status === wanted).length;
  return {
    target: { side: 'merchant', ...target },
    summary: {
      passed: count('passed'),
      failed: count('failed'),
      warnings: 0,
      skipped: count('skipped'),
      durationMs: Math.round(result.durationMs),
    },
    results,
    load: {
      ...result,
      offenders: result.offenders.length,
      histogram: result.histogram.map((bucket) => ({
        upToMs: Number.isFinite(bucket.upToMs) ? bucket.upToMs : null,
        count: bucket.count,
      })),
    },
  };
}

/** report.html of a storm: the verdict, the figures and the latency histogram as bars. */
export function loadReportHtml(result: StormResult, target: LoadTarget): string {
  const most = Math.max(1, ...result.histogram.map((bucket) => bucket.count));
  const bars = result.histogram
    .map((bucket, i) => {
      const from = i === 0 ? 0 : result.histogram[i - 1]!.upToMs;
      const label = Number.isFinite(bucket.upToMs) ? `${from}–${bucket.upToMs} ms` : `> ${from} ms`;
      return `<tr><td>${label}</td><td><div class="bar" style="width:${((bucket.count / most) * 100).toFixed(1)}%"></div></td><td>${bucket.count}</td></tr>`;
    })
    .join('\n');
  const rows: Array<[string, string]> = [
    ['callback URLs', target.callbackUrls.join(', ')],
    ['probe', target.probe ?? 'none'],
    ['events', String(result.events)],
    ['duplicate deliveries', String(result.duplicateDeliveries)],
    ['attempts (retries)', `${result.attempts} (${result.retries})`],
    ['acknowledged events', String(result.acknowledged)],
    ['never acknowledged deliveries', String(result.unacknowledgedDeliveries)],
    ['events/s', result.eventsPerSecond.toFixed(0)],
    ['p50 / p99 / max', `${result.p50Ms.toFixed(1)} / ${result.p99Ms.toFixed(1)} / ${result.maxMs.toFixed(1)} ms`],
    [
      'failures',
      Object.entries(result.failures)
        .map(([why, n]) => `${why}: ${n}`)
        .join(', ') || 'none',
    ],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wallet-conformance load merchant</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td{padding:2px 8px}.bar{background:#3b7dd8;height:12px;min-width:1px}.no{color:#b00}.yes{color:#070}</style></head>
<body><h1>load merchant</h1>
<p class="${result.exactlyOnce === false ? 'no' : 'yes'}">${escape(summaryLine(result))}</p>
${result.exactlyOnce === false ? `<pre>${escape(offenderLines(result, 50).join('\n'))}</pre>` : ''}
<table>${rows.map(([name, value]) => `<tr><th align="left">${escape(name)}</th><td>${escape(value)}</td></tr>`).join('\n')}</table>
<h2>Latency of each attempt</h2>
<table style="width:60em">${bars}</table>
</body></html>
`;
}

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
