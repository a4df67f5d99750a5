import type { CheckResult, Report } from '../runner/types.js';
import { escapeXml as h } from './escape.js';

const ORDER = ['failed', 'warning', 'skipped', 'passed'];

function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Pretty JSON when the text is JSON, else the text. */
function showBody(text: string | undefined): string {
  if (!text) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function evidence(result: CheckResult): string {
  const exchanges = ((result.evidence?.exchanges as unknown[]) ?? []) as Array<{ request: Record<string, unknown>; response: Record<string, unknown> | null; error?: string }>;
  return exchanges.map((exchange, i) => {
    const request = exchange.request;
    const response = exchange.response;
    const decrypted = response?.decrypted as { text?: string } | undefined;
    return `<div class="exchange"><h4>exchange ${i + 1}</h4><div class="grid">
<div><h5>request (wire)</h5><pre>${h(`${String(request.method)} ${String(request.url)}\n${Object.entries((request.headers as Record<string, string>) ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${String(request.body ?? '')}`)}</pre></div>
<div><h5>request (plain)</h5><pre>${h(showBody(request.plain as string | undefined) || '(not encrypted)')}</pre></div>
<div><h5>answer (wire)</h5><pre>${h(response ? `HTTP ${String(response.status)}\n\n${String(response.body ?? '')}` : `no answer: ${exchange.error ?? ''}`)}</pre></div>
<div><h5>answer (decrypted)</h5><pre>${h(decrypted?.text ? showBody(decrypted.text) : response?.decryptError ? `cannot decrypt: ${String(response.decryptError)}` : '(no encrypted data)')}</pre></div>
</div></div>`;
  }).join('\n');
}

/** report.html: one self-contained page, failures first, per rule and per case, evidence decrypted beside the wire. */
export function renderHtml(report: Report): string {
  const sorted = [...report.results].sort((a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status));
  const byRule = new Map<string, CheckResult[]>();
  for (const result of report.results) for (const rule of result.rules) byRule.set(rule, [...(byRule.get(rule) ?? []), result]);
  const ruleRows = [...byRule.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([rule, results]) => {
    const worst = ORDER.find((status) => results.some((r) => r.status === status)) ?? 'passed';
    return `<tr class="${worst}"><td>${h(rule)}</td><td>${h(worst)}</td><td>${results.length}</td><td>${results.filter((r) => r.status !== 'passed').map((r) => h(r.id)).join('<br>')}</td></tr>`;
  }).join('\n');
  const cases = sorted.map((result) => `<details class="result ${result.status}"${result.status === 'failed' ? ' open' : ''}>
<summary><span class="badge">${h(result.status)}</span> <code>${h(result.id)}</code> — ${h(result.title)} <span class="rules">${result.rules.map(h).join(' ')}</span></summary>
<p>${h(result.message)}</p>${evidence(result)}</details>`).join('\n');
  const s = report.summary;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wallet-conformance report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24}
h1{margin:0 0 .5rem}.counts span{margin-right:1rem;font-weight:600}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
.failed .badge,tr.failed td:nth-child(2){background:#ffebe9;color:#cf222e}.warning .badge,tr.warning td:nth-child(2){background:#fff8c5;color:#9a6700}
.passed .badge,tr.passed td:nth-child(2){background:#dafbe1;color:#1a7f37}.skipped .badge,tr.skipped td:nth-child(2){background:#eaeef2;color:#57606a}
.badge{padding:0 .4rem;border-radius:4px;font-weight:600}details.result{border:1px solid #d0d7de;border-radius:6px;margin:.4rem 0;padding:.4rem .6rem}
.rules{color:#57606a;font-size:12px}.grid{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-all;margin:0}h4,h5{margin:.4rem 0}
</style></head><body>
<h1>wallet-conformance report</h1>
<p class="counts"><span>${s.failed} failed</span><span>${s.warnings} warnings</span><span>${s.passed} passed</span><span>${s.skipped} skipped</span><span>${(s.durationMs / 1000).toFixed(1)} s</span></p>
<pre>${h(pretty(report.target))}</pre>
<h2>By rule</h2><table><tr><th>rule</th><th>worst</th><th>checks</th><th>not passed</th></tr>${ruleRows}</table>
<h2>By case (failures first)</h2>${cases}
</body></html>
`;
}
