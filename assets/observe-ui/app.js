/* global document, window, EventSource, fetch, location */
// observe's live page: plain browser JavaScript, no build step, nothing from another origin.
// Everything from the traffic is put on the page as text (textContent), never as HTML.
'use strict';

const state = {
  capacity: 500,
  seen: 0,
  /** seq → { row, element } in arrival order (the oldest first). */
  exchanges: new Map(),
  /** seq → findings about that exchange. */
  findingsBySeq: new Map(),
  /** rule → { failed, warning } since observe started. */
  rules: {},
  /** The latest findings, the newest last. */
  findings: [],
  filter: { side: '', verdict: '', rule: '' },
  open: undefined,
};

const $ = (id) => document.getElementById(id);

/** An element with its class and text (text only: never HTML from the traffic). */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function verdictOf(seq) {
  const findings = state.findingsBySeq.get(seq) || [];
  if (findings.some((f) => f.status === 'failed')) return 'failed';
  return findings.some((f) => f.status === 'warning') ? 'warning' : 'none';
}

function rulesOf(seq) {
  return new Set((state.findingsBySeq.get(seq) || []).flatMap((f) => f.rules));
}

function shownExchange(row) {
  const { side, verdict, rule } = state.filter;
  if (side && row.side !== side) return false;
  if (verdict && verdictOf(row.seq) !== verdict) return false;
  return !rule || rulesOf(row.seq).has(rule);
}

function shownFinding(finding) {
  const { side, verdict, rule } = state.filter;
  if (verdict && verdict !== finding.status) return false;
  if (rule && !finding.rules.includes(rule)) return false;
  const held = finding.seq === undefined ? undefined : state.exchanges.get(finding.seq);
  return !side || !held || held.row.side === side;
}

function verdictCell(seq) {
  const cell = el('td', 'verdicts');
  const findings = state.findingsBySeq.get(seq) || [];
  if (findings.length === 0) cell.append(el('span', 'badge none', 'no finding'));
  for (const finding of findings)
    cell.append(
      el('span', `badge ${finding.status}`, `${finding.status} ${finding.rules.join(', ') || finding.title}`),
    );
  return cell;
}

function statusText(row) {
  if (row.status !== null) return String(row.status);
  return `${row.gateway} (upstream failed)`;
}

function fillRow(tr, row) {
  tr.replaceChildren(
    el('td', 'seq', row.seq),
    el('td', 'time', new Date(row.at).toLocaleTimeString()),
    el('td', 'side', row.side === 'merchant' ? 'merchant → service' : 'service → merchant'),
    el('td', 'endpoint', row.endpoint),
    el('td', 'path', `${row.method} ${row.path}`),
    el('td', row.status === null || row.status >= 500 ? 'status status-error' : 'status', statusText(row)),
    verdictCell(row.seq),
  );
  tr.className = `${verdictOf(row.seq)}${state.open === row.seq ? ' selected' : ''}`;
  tr.hidden = !shownExchange(row);
}

function addExchange(row) {
  const tr = el('tr');
  tr.id = `x-${row.seq}`;
  tr.dataset.seq = String(row.seq);
  tr.addEventListener('click', () => (location.hash = `x-${row.seq}`));
  fillRow(tr, row);
  $('exchanges').tBodies[0].prepend(tr);
  state.exchanges.set(row.seq, { row, element: tr });
  // The page holds as many exchanges as the server: the oldest leaves.
  while (state.exchanges.size > state.capacity) {
    const [oldest, held] = state.exchanges.entries().next().value;
    held.element.remove();
    state.exchanges.delete(oldest);
    state.findingsBySeq.delete(oldest);
  }
}

function findingItem(finding) {
  const li = el('li', finding.status);
  li.append(el('strong', '', `${finding.status} ${finding.rules.join(', ')}`), document.createTextNode(' '));
  if (finding.seq !== undefined) {
    const link = el('a', 'exchange-link', `seq ${finding.seq}`);
    link.href = `#x-${finding.seq}`;
    li.append(link);
  } else li.append(el('span', 'note', 'the stream'));
  li.append(el('div', 'title', finding.title), el('div', 'message', finding.message));
  li.hidden = !shownFinding(finding);
  return li;
}

function addFinding(finding) {
  state.findings.push(finding);
  if (state.findings.length > state.capacity) state.findings.shift();
  for (const rule of finding.rules.length > 0 ? finding.rules : ['none']) {
    const counter = (state.rules[rule] = state.rules[rule] || { failed: 0, warning: 0 });
    counter[finding.status]++;
  }
  if (finding.seq !== undefined && state.exchanges.has(finding.seq)) {
    const list = state.findingsBySeq.get(finding.seq) || [];
    list.push(finding);
    state.findingsBySeq.set(finding.seq, list);
    const held = state.exchanges.get(finding.seq);
    fillRow(held.element, held.row);
  }
  const list = $('findings');
  list.prepend(findingItem(finding));
  while (list.children.length > state.capacity) list.lastElementChild.remove();
}

function renderRules() {
  const body = $('rules').tBodies[0];
  const select = $('filter-rule');
  const names = Object.keys(state.rules).sort();
  body.replaceChildren(
    ...names.map((rule) => {
      const tr = el('tr', state.filter.rule === rule ? 'active' : '');
      tr.dataset.rule = rule;
      tr.append(
        el('td', 'rule', rule),
        el('td', 'count-failed', state.rules[rule].failed),
        el('td', 'count-warning', state.rules[rule].warning),
      );
      tr.addEventListener('click', () => setFilter('rule', state.filter.rule === rule ? '' : rule));
      return tr;
    }),
  );
  const chosen = state.filter.rule;
  select.replaceChildren(el('option', '', 'any'), ...names.map((rule) => el('option', '', rule)));
  select.options[0].value = '';
  select.value = chosen;
}

function renderCounts() {
  let shown = 0;
  for (const { row } of state.exchanges.values()) if (shownExchange(row)) shown++;
  $('totals').textContent = `${state.seen} exchanges seen; the page holds the latest ${state.exchanges.size}`;
  $('shown').textContent = `${shown} shown`;
  $('empty').hidden = state.exchanges.size > 0;
}

function applyFilter() {
  for (const { row, element } of state.exchanges.values()) element.hidden = !shownExchange(row);
  const items = $('findings').children;
  const newestFirst = state.findings.slice().reverse();
  for (let i = 0; i < items.length; i++) items[i].hidden = !shownFinding(newestFirst[i]);
  renderRules();
  renderCounts();
}

function setFilter(name, value) {
  state.filter[name] = value;
  $(`filter-${name}`).value = value;
  applyFilter();
}

function pane(title, message) {
  const section = el('div', 'pane');
  section.append(el('h3', '', title));
  if (!message) return (section.append(el('p', 'note', 'none (the upstream failed)')), section);
  const headers = Object.entries(message.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  section.append(el('h3', '', 'headers'), el('pre', 'headers', headers || '(none)'));
  section.append(el('h3', '', 'payload (decrypted)'));
  if (message.plaintext !== undefined) section.append(el('pre', 'plaintext', message.plaintext));
  else section.append(el('p', 'note', message.notOpened || 'no sealed payload'));
  section.append(el('h3', '', 'body (wire)'), el('pre', 'wire', message.wire || '(empty)'));
  return section;
}

function renderDetail(detail) {
  const box = $('detail');
  const heading = el(
    'h2',
    '',
    `seq ${detail.seq}: ${detail.endpoint} (${detail.method} ${detail.path}) → ${statusText(detail)}`,
  );
  const findings = el('ul', 'detail-findings');
  for (const finding of state.findingsBySeq.get(detail.seq) || [])
    findings.append(
      el('li', finding.status, `${finding.status} [${finding.rules.join(', ')}] ${finding.title}: ${finding.message}`),
    );
  const panes = el('div', 'panes');
  panes.append(
    pane(`request (${detail.side === 'merchant' ? 'merchant → service' : 'service → merchant'})`, detail.request),
  );
  panes.append(pane(`answer${detail.response ? ` ${detail.response.status}` : ''}`, detail.response));
  box.replaceChildren(heading, findings, panes);
  if (detail.upstreamError) box.append(el('p', 'note', `upstream failed: ${detail.upstreamError}`));
  box.hidden = false;
}

async function openExchange(seq) {
  const previous = state.exchanges.get(state.open);
  state.open = seq;
  if (previous) fillRow(previous.element, previous.row);
  const held = state.exchanges.get(seq);
  if (!held) {
    $('detail').replaceChildren(
      el(
        'p',
        'note',
        `seq ${seq} is no longer on the page (it holds the latest ${state.capacity}); the capture has it.`,
      ),
    );
    $('detail').hidden = false;
    return;
  }
  fillRow(held.element, held.row);
  held.element.scrollIntoView({ block: 'center' });
  const answer = await fetch(`api/exchanges/${seq}`);
  if (state.open !== seq) return;
  if (!answer.ok)
    return void (
      $('detail').replaceChildren(el('p', 'note', `seq ${seq} is no longer on the page.`)),
      ($('detail').hidden = false)
    );
  renderDetail(await answer.json());
}

function fromHash() {
  const match = /^#x-(\d+)$/.exec(location.hash);
  if (match) void openExchange(Number(match[1]));
}

function onSnapshot(snapshot) {
  state.capacity = snapshot.capacity;
  state.seen = snapshot.seen;
  state.exchanges.clear();
  state.findingsBySeq.clear();
  state.findings = [];
  state.rules = {};
  $('exchanges').tBodies[0].replaceChildren();
  $('findings').replaceChildren();
  $('capacity').textContent = String(snapshot.capacity);
  for (const row of snapshot.exchanges) addExchange(row);
  for (const finding of snapshot.findings) addFinding(finding);
  // Findings that left the page still count: the server's counters are since observe started.
  state.rules = snapshot.rules;
  applyFilter();
  fromHash();
}

function connect() {
  const events = new EventSource('events');
  const connection = $('connection');
  events.addEventListener('open', () => ((connection.textContent = 'live'), connection.classList.add('live')));
  events.addEventListener(
    'error',
    () => ((connection.textContent = 'reconnecting…'), connection.classList.remove('live')),
  );
  events.addEventListener('snapshot', (event) => onSnapshot(JSON.parse(event.data)));
  events.addEventListener('exchange', (event) => {
    state.seen++;
    addExchange(JSON.parse(event.data));
    renderCounts();
  });
  events.addEventListener('finding', (event) => {
    addFinding(JSON.parse(event.data));
    renderRules();
    renderCounts();
  });
}

function start() {
  for (const name of ['side', 'verdict', 'rule'])
    $(`filter-${name}`).addEventListener('change', (event) => setFilter(name, event.target.value));
  $('filter-clear').addEventListener('click', () => {
    for (const name of ['side', 'verdict', 'rule']) state.filter[name] = '';
    for (const name of ['side', 'verdict', 'rule']) $(`filter-${name}`).value = '';
    applyFilter();
  });
  window.addEventListener('hashchange', fromHash);
  connect();
}

start();
