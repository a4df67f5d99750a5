import { parseExactJson, stringifyExact, type ExactJson } from '../core/exact-json.js';
import type { Rule } from '../core/rules.js';
import type { CheckResult, Preflight, Report, Status } from '../runner/types.js';
import type { BaselineComparison } from './baseline.js';
import { readAcknowledgement, type AcknowledgementVerdict } from '../wire/acknowledgement.js';
import { escapeXml as h } from './escape.js';
import { groupFailures, groupHeading } from './root-causes.js';
import { ruleStatus, targetSides, verdictOf } from './verdict.js';

/** What report.html shows besides the report: the rules' texts, the baseline comparison. */
interface HtmlContext {
  rules: readonly Rule[];
  baseline?: BaselineComparison;
}

const ORDER: Status[] = ['failed', 'warning', 'skipped', 'passed'];
const HEADINGS: Record<Status, string> = {
  failed: 'Failed',
  warning: 'Warnings',
  skipped: 'Skipped',
  passed: 'Passed',
};

interface ShownRequest {
  method?: unknown;
  url?: unknown;
  headers?: unknown;
  body?: unknown;
  plain?: unknown;
  receivedAt?: unknown;
}
interface ShownResponse {
  status?: unknown;
  body?: unknown;
  decrypted?: { text?: unknown } | null;
  decryptError?: unknown;
}
interface ShownExchange {
  request?: ShownRequest;
  response?: ShownResponse | null;
  error?: unknown;
}

/** JSON text pretty-printed with every number's digits kept; other text as it is. */
function showBody(text: unknown): string {
  if (typeof text !== 'string' || text === '') return '';
  try {
    return stringifyExact(parseExactJson(text), 2);
  } catch {
    return text;
  }
}

function headerLines(headers: unknown): string {
  return headers && typeof headers === 'object'
    ? Object.entries(headers as Record<string, unknown>)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join('\n')
    : '';
}

function exchangesOf(result: CheckResult): ShownExchange[] {
  const list = result.evidence?.exchanges;
  return Array.isArray(list) ? (list as ShownExchange[]) : [];
}

function pane(title: string, text: string, kind = ''): string {
  return `<div class="pane ${kind}"><h5>${h(title)}</h5><pre>${h(text)}</pre></div>`;
}

/** One exchange: the request wire | plain, then the answer wire | decrypted, side by side. */
function exchangeHtml(exchange: ShownExchange, i: number): string {
  const request = exchange.request ?? {};
  const response = exchange.response ?? undefined;
  const isDelivery = typeof request.receivedAt === 'number';
  const wire = `${String(request.method ?? '')} ${String(request.url ?? '')}\n${headerLines(request.headers)}\n\n${String(request.body ?? '')}`;
  const plain =
    showBody(request.plain) ||
    (typeof request.plain === 'string'
      ? request.plain
      : isDelivery
        ? '(does not decrypt with the key)'
        : '(not encrypted)');
  const answer = response
    ? `HTTP ${String(response.status)}\n\n${String(response.body ?? '')}`
    : `no answer: ${String(exchange.error ?? '')}`;
  const decrypted =
    response?.decrypted?.text !== undefined
      ? showBody(response.decrypted.text)
      : response?.decryptError
        ? `cannot decrypt: ${String(response.decryptError)}`
        : isDelivery && response?.body
          ? showBody(response.body)
          : '(no encrypted data)';
  const who = isDelivery
    ? [
        'callback from the service (wire)',
        'callback (decrypted)',
        "the runner's answer (wire)",
        "the runner's answer (read)",
      ]
    : ['request (wire)', 'request (plain, before encryption)', 'answer (wire)', 'answer (decrypted)'];
  return `<div class="exchange"><h4>exchange ${i + 1}${exchange.error ? ` <span class="bad">${h(String(exchange.error))}</span>` : ''}</h4><div class="grid">
${pane(who[0]!, wire, 'wire')}${pane(who[1]!, plain, 'plain')}
${pane(who[2]!, answer, 'wire')}${pane(who[3]!, decrypted, 'plain')}
</div></div>`;
}

/**
 * A delivery's answer in words, read by the one definition of an acknowledgement (CB-ERRCODE,
 * src/wire/acknowledgement.ts). An ambiguous answer (U-CB-RESPONSE) is shown as such, not as an ack.
 */
function answerOf(response: ShownResponse | null | undefined): { verdict: AcknowledgementVerdict; text: string } {
  if (!response) return { verdict: 'not-acknowledged', text: 'no answer' };
  const read = readAcknowledgement({ status: Number(response.status ?? 0) || 0, body: String(response.body ?? '') });
  const shown = read.errCode === undefined ? 'no errCode' : `errCode ${read.errCode}`;
  return {
    verdict: read.verdict,
    text: `HTTP ${String(response.status)}, ${shown}${read.verdict === 'ambiguous' ? ` (ambiguous: ${read.reason})` : ''}`,
  };
}

/** How the timeline marks each reading of an answer: its row class, badge colour and word. */
const BADGES: Record<AcknowledgementVerdict, { row: string; status: Status; text: string }> = {
  acknowledged: { row: 'ack', status: 'passed', text: 'ack' },
  ambiguous: { row: 'ack', status: 'warning', text: 'ambiguous' },
  'not-acknowledged': { row: 'nack', status: 'failed', text: 'no ack' },
};

/**
 * The deliveries of a callback step in time order: when each came, what it carried, how it was
 * answered, and whether it was a retry (after an answer that was not an acknowledgement) or a
 * resend of an acknowledged event. Empty when the evidence holds no delivery.
 */
export function deliveryTimeline(result: CheckResult): string {
  const exchanges = exchangesOf(result);
  const deliveries = exchanges.filter((e) => typeof e.request?.receivedAt === 'number');
  if (deliveries.length === 0) return '';
  const asked = exchanges.find(
    (e) => /\/callbacks$/.test(String(e.request?.url ?? '')) && e.request?.method === 'POST',
  );
  let askedText = '';
  if (asked) {
    try {
      const body = parseExactJson(String(asked.request?.body ?? '')) as Record<string, ExactJson>;
      const delays = Array.isArray(body.retryDelaysMs)
        ? `, retry delays ${body.retryDelaysMs.map((d) => stringifyExact(d)).join(', ')} ms`
        : '';
      askedText = `<p class="asked">asked the service (control API) for callback type ${h(stringifyExact(body.type ?? null))}, ${h(stringifyExact(body.deliveries ?? 1))} delivery of each event${h(delays)}; ${h(String(asked.response?.status ?? 'no answer'))} ${h(String(asked.response?.body ?? ''))}</p>`;
    } catch {
      askedText = '';
    }
  }
  const first = deliveries[0]!.request!.receivedAt as number;
  const lastAnswer = new Map<string, { verdict: AcknowledgementVerdict; n: number }>();
  const rows = deliveries.map((delivery, i) => {
    const request = delivery.request!;
    let payload: Record<string, ExactJson> | undefined;
    try {
      payload = parseExactJson(String(request.plain)) as Record<string, ExactJson>;
    } catch {
      payload = undefined;
    }
    const event = payload ? String(payload.trackingId ?? payload.callBackId ?? '?') : '(does not decrypt)';
    const answer = answerOf(delivery.response);
    const before = lastAnswer.get(event);
    const kind = !payload
      ? 'undecryptable'
      : !before
        ? 'first delivery'
        : before.verdict === 'acknowledged'
          ? `resend after the ack of #${before.n}`
          : before.verdict === 'ambiguous'
            ? `resend after the ambiguous answer of #${before.n}`
            : `retry (#${before.n} was not acknowledged)`;
    lastAnswer.set(event, { verdict: answer.verdict, n: i + 1 });
    const badge = BADGES[answer.verdict];
    const at = (request.receivedAt as number) - first;
    return `<tr class="${badge.row}"><td>#${i + 1}</td><td>+${at} ms</td><td><code>${h(payload ? String(payload.requestUUID ?? '—') : '—')}</code></td><td><code>${h(event)}</code></td><td>${h(kind)}</td><td><span class="badge ${badge.status}">${badge.text}</span> ${h(answer.text)}</td></tr>`;
  });
  return `<div class="timeline"><h4>callback deliveries</h4>${askedText}<table><thead><tr><th>attempt</th><th>received</th><th>requestUUID</th><th>event (trackingId)</th><th>delivery</th><th>the runner answered</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

/** What was tested: one row per side, then run-wide facts (embedded servers, TLS settings). */
function targetHtml(target: Record<string, unknown>): string {
  const { sides, general } = targetSides(target);
  const rows = sides
    .map(
      (side) =>
        `<tr><td><b>${h(side.side)}</b></td><td>${side.address.map((a) => `<code>${h(a)}</code>`).join('<br>')}</td><td>${h(side.profile)}</td><td>${side.other.map(h).join('<br>')}</td></tr>`,
    )
    .join('\n');
  const extra = general
    .map(([key, value]) => `<tr><td colspan="4"><span class="muted">${h(key)}</span> ${h(value)}</td></tr>`)
    .join('\n');
  return `<table class="target"><thead><tr><th>side</th><th>address</th><th>crypto profile</th><th>settings</th></tr></thead><tbody>\n${rows}\n${extra}\n</tbody></table>`;
}

/** A rule's text with its `code` spans shown as code. */
function ruleText(text: string): string {
  return h(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function ruleTip(rule: Rule | undefined, id: string): string {
  return rule ? `${id} (${rule.severity}): ${rule.text}` : id;
}

function checkHtml(result: CheckResult, index: number, rules: Map<string, Rule>): string {
  const ms = result.durationMs;
  const assumptions = result.assumptions ?? [];
  const exchanges = exchangesOf(result);
  const more =
    typeof result.evidence?.more === 'number'
      ? `<p class="muted">${result.evidence.more} more exchange(s) not kept in the report</p>`
      : '';
  return `<details id="check-${index}" class="check ${result.status}"${result.status === 'failed' ? ' open' : ''}>
<summary><span class="badge ${result.status}">${h(result.status)}</span> <code>${h(result.id)}</code> ${h(result.title)} <span class="rules">${result.rules.map((id) => `<abbr title="${h(ruleTip(rules.get(id), id))}">${h(id)}</abbr>`).join(' ')}</span>${ms === undefined ? '' : ` <span class="muted">${ms} ms</span>`}</summary>
${result.message ? `<p class="message">${h(result.message)}</p>` : ''}
${result.replay ? `<p class="replay">replay just this case: <code>${h(result.replay)}</code></p>` : ''}
<ul class="rule-texts">${result.rules.map((id) => `<li><b>${h(id)}</b> ${ruleText(rules.get(id)?.text ?? '(not in the rule catalog)')}</li>`).join('')}</ul>
${assumptions.length ? `<p class="muted">assumes: ${assumptions.map((a) => `${h(a.rule)} ${h(a.text)}`).join('; ')}</p>` : ''}
${deliveryTimeline(result)}${exchanges.map(exchangeHtml).join('\n')}${more}</details>`;
}

function rulesTable(report: Report, rules: Map<string, Rule>, anchors: Map<CheckResult, number>): string {
  const byRule = new Map<string, CheckResult[]>();
  for (const result of report.results)
    for (const id of result.rules) byRule.set(id, [...(byRule.get(id) ?? []), result]);
  const rows = [...byRule.entries()]
    .map(([id, results]) => ({ id, results, status: ruleStatus(results) }))
    .sort((a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status) || a.id.localeCompare(b.id))
    .map(({ id, results, status }) => {
      const counts = (['failed', 'warning', 'passed', 'skipped'] as const)
        .map((s) => [s, results.filter((r) => r.status === s).length] as const)
        .filter(([, n]) => n > 0)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ');
      const notPassed = results
        .filter((r) => r.status !== 'passed')
        .slice(0, 8)
        .map((r) => `<a href="#check-${anchors.get(r)}">${h(r.id)}</a>`)
        .join('<br>');
      const rule = rules.get(id);
      return `<tr class="${status}"><td><span class="badge ${status}">${h(status)}</span></td><td class="rule-id"><b>${h(id)}</b><br><span class="muted">${h(rule?.severity ?? '')}</span></td><td>${ruleText(rule?.text ?? '(not in the rule catalog)')}</td><td>${h(counts)}</td><td>${notPassed}</td></tr>`;
    });
  return `<table class="rules-table"><thead><tr><th>status</th><th>rule</th><th>what it requires</th><th>checks</th><th>not passed</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

function baselineHtml(baseline: BaselineComparison, anchors: Map<CheckResult, number>): string {
  const list = (results: CheckResult[], note?: (r: CheckResult) => string) =>
    results.length
      ? `<ul>${results.map((r) => `<li><a href="#check-${anchors.get(r)}">${h(r.id)}</a>${note ? ` ${h(note(r))}` : ''}</li>`).join('')}</ul>`
      : '<p class="muted">none</p>';
  const was = new Map(baseline.worse.map((w) => [w.result, w.was]));
  return `<section class="baseline"><h2>Against the baseline <code>${h(baseline.file)}</code></h2>
<h3>Worse than the baseline: these fail the run (${baseline.worse.length})</h3>${list(
    baseline.worse.map((w) => w.result),
    (r) => (was.get(r) === 'new' ? '(a check the baseline does not have)' : `(was ${was.get(r)})`),
  )}
<h3>Known failures, also in the baseline: not fatal (${baseline.known.length})</h3>${list(baseline.known)}
<h3>Fixed since the baseline (${baseline.fixed.length})</h3>${list(baseline.fixed)}</section>`;
}

/** Pre-flight's reasoning: what it sent, what it saw, what it concludes, one row per step. */
function preflightHtml(preflight: Preflight): string {
  const rows = preflight.steps
    .map(
      (step) =>
        `<tr class="${step.level === 'warning' ? 'warning' : 'passed'}"><td><span class="badge ${step.level === 'warning' ? 'warning' : 'passed'}">${step.level}</span></td><td>${h(step.what)}</td><td>${h(step.observed)}</td><td>${h(step.conclusion)}</td></tr>`,
    )
    .join('');
  return `<h2 id="preflight">Pre-flight: ${h(preflight.verdict)}</h2>
<p class="muted">${preflight.verdict === 'warning' ? 'Pre-flight suspected something it could not prove: the suites ran and judged the target.' : 'Pre-flight found the configuration working.'}</p>
<table class="preflight"><tr><th></th><th>what was sent</th><th>observed</th><th>conclusion</th></tr>${rows}</table>`;
}

/** The failures grouped by root cause: each group's cause, how it is known and what to do, then its checks. */
function failuresHtml(report: Report, rules: Map<string, Rule>, anchors: Map<CheckResult, number>): string {
  const groups = groupFailures(report);
  if (groups.length === 0) return '';
  const total = groups.reduce((n, g) => n + g.results.length, 0);
  return `<section class="failures"><h2 id="failed">Failed (${total}), by cause</h2>
${groups
  .map(
    (
      group,
    ) => `<div class="cause">${group.results.length > 1 || group.fix ? `<h3>${h(groupHeading(group))}</h3>` : ''}${group.proof ? `<p class="muted">How it is known: ${h(group.proof)}</p>` : ''}
${group.results.map((r) => checkHtml(r, anchors.get(r)!, rules)).join('\n')}</div>`,
  )
  .join('\n')}
</section>`;
}

/**
 * report.html, for a person: a header that says pass or fail, the pre-flight diagnosis, then what
 * to do: the failures grouped by root cause, each with the command replaying its case and its
 * evidence decrypted beside the wire (for callbacks, the timeline of deliveries); then what was
 * tested, the notes, each rule with its text and status, and the other checks. Numbers keep every digit.
 */
export function renderHtml(report: Report, context: HtmlContext = { rules: [] }): string {
  const rules = new Map(context.rules.map((rule) => [rule.id, rule]));
  const anchors = new Map(report.results.map((result, i) => [result, i]));
  const verdict = verdictOf(report, context.baseline);
  const s = report.summary;
  const notes = report.notes ?? [];
  const groups = ORDER.filter((status) => status !== 'failed')
    .map((status) => {
      const results = report.results.filter((r) => r.status === status);
      if (results.length === 0) return '';
      return `<h3 id="${status}">${HEADINGS[status]} (${results.length})</h3>\n${results.map((r) => checkHtml(r, anchors.get(r)!, rules)).join('\n')}`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${h(verdict.label)}: wallet-conformance report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:1.5rem 2rem;max-width:1400px;color:#1b1f24}
header.verdict{border-radius:8px;padding:1rem 1.25rem;margin-bottom:1rem;border:2px solid}
header.pass{background:#dafbe1;border-color:#1a7f37}header.gaps{background:#fff8c5;border-color:#bf8700}header.gaps h1{color:#9a6700}header.fail{background:#ffebe9;border-color:#cf222e}
header h1{margin:0;font-size:28px}header.pass h1{color:#1a7f37}header.fail h1{color:#cf222e}
.counts{display:flex;gap:.5rem;flex-wrap:wrap;margin:.6rem 0 0;padding:0;list-style:none}.counts li{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.2rem .6rem}
.counts b{font-size:16px}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa}
table.target code{font-size:12px}
.badge{display:inline-block;padding:0 .45rem;border-radius:4px;font-weight:600;font-size:12px}
.badge.failed{background:#cf222e;color:#fff}.badge.warning{background:#bf8700;color:#fff}.badge.passed{background:#1a7f37;color:#fff}.badge.skipped{background:#8c959f;color:#fff}
tr.failed td:first-child{border-left:4px solid #cf222e}tr.warning td:first-child{border-left:4px solid #bf8700}
details.check{border:1px solid #d0d7de;border-radius:6px;margin:.4rem 0;padding:.4rem .7rem}details.check.failed{border-color:#cf222e;border-width:2px}
details.check summary{cursor:pointer}.rules abbr{color:#57606a;font-size:12px;text-decoration:none;border-bottom:1px dotted}
.message{font-weight:600}.replay code{user-select:all}section.failures{border-left:4px solid #cf222e;padding-left:.8rem}.muted{color:#57606a}.bad{color:#cf222e}
.rule-texts{margin:.2rem 0 .5rem;padding-left:1.2rem;color:#424a53}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}.pane h5{margin:.2rem 0}
pre{background:#f6f8fa;border:1px solid #eaeef2;padding:.5rem;overflow:auto;max-height:22rem;white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
.pane.plain pre{background:#fbfdff;border-color:#b6e3ff}
.timeline table{font-size:13px}.timeline tr.ack td:last-child{color:#1a7f37}.timeline tr.nack td:last-child{color:#cf222e}
h4{margin:.6rem 0 .3rem}td.rule-id{white-space:nowrap}td code,li code{background:#eff1f3;padding:0 .2rem;border-radius:3px;font-size:12px}nav.toc a{margin-right:1rem}
@media print{details.check{break-inside:avoid}pre{max-height:none}}
</style></head><body>
<header class="verdict ${verdict.passed ? (verdict.gaps ? 'gaps' : 'pass') : 'fail'}">
<h1>${h(verdict.label)}</h1>
<p>${h(verdict.reason)}</p>
<ul class="counts"><li><b>${s.failed}</b> failed</li><li><b>${s.warnings}</b> warnings</li><li><b>${s.passed}</b> passed</li><li><b>${s.skipped}</b> skipped</li><li><b>${(s.durationMs / 1000).toFixed(1)}</b> s</li></ul>
</header>
${report.preflight ? preflightHtml(report.preflight) : ''}
${failuresHtml(report, rules, anchors)}
<nav class="toc"><a href="#tested">What was tested</a><a href="#rules">Rules</a><a href="#checks">Checks</a></nav>
<h2 id="tested">What was tested</h2>
${targetHtml(report.target)}
${notes.length ? `<h2>Notes</h2><ul class="notes">${notes.map((note) => `<li>${h(note)}</li>`).join('')}</ul>` : ''}
${context.baseline ? baselineHtml(context.baseline, anchors) : ''}
<h2 id="rules">Rules (${new Set(report.results.flatMap((r) => r.rules)).size})</h2>
${rulesTable(report, rules, anchors)}
<h2 id="checks">Other checks: warnings, skipped, passed</h2>
${groups}
</body></html>
`;
}
