import type { Block, ExampleBlock, Inline, Page, PageGroup, Panel, Text } from './model.js';

/** Group headings of the navigation, in order. */
export const GROUP_TITLES: Readonly<Record<PageGroup, string>> = {
  overview: 'Overview',
  endpoints: 'Endpoints',
  callbacks: 'Callbacks',
  reference: 'Reference',
  manual: 'Manual',
};

/** Escapes text for HTML content and attribute values. */
function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );
}

const h = escapeHtml;

// Inline styles only: the site must work from file:// with no network and no other files.
const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg-soft:#f6f8fa;--accent:#0969da;--must:#cf222e;--must-bg:#ffebe9;--should:#9a6700;--should-bg:#fff8c5;--unspec:#6639ba;--unspec-bg:#fbefff;--ok:#1a7f37;--ok-bg:#dafbe1;--enc:#0550ae;--enc-bg:#ddf4ff}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
header.top{display:flex;align-items:center;gap:1rem;padding:.6rem 1.2rem;border-bottom:1px solid var(--line);background:var(--bg-soft)}
header.top a.home{font-weight:700;color:var(--fg)}header.top span{color:var(--muted);font-size:13px}
.layout{display:flex;align-items:flex-start}
nav.site{flex:0 0 16rem;position:sticky;top:0;max-height:100vh;overflow:auto;padding:1rem 1rem 2rem 1.2rem;border-right:1px solid var(--line);font-size:14px}
nav.site h2{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:1rem 0 .3rem}
nav.site ul{list-style:none;margin:0;padding:0}nav.site li{margin:.1rem 0}
nav.site a{display:block;padding:.15rem .4rem;border-radius:4px;color:var(--fg)}
nav.site a[aria-current=page]{background:var(--enc-bg);color:var(--enc);font-weight:600}
main{flex:1;min-width:0;padding:1.2rem 2rem 3rem;max-width:80rem}
h1{font-size:1.7rem;margin:.2rem 0 1rem}h2{font-size:1.3rem;margin:2rem 0 .6rem;padding-bottom:.2rem;border-bottom:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.5rem 0 .5rem}h4{font-size:1rem;margin:1.2rem 0 .4rem}
h2 a.anchor,h3 a.anchor,h4 a.anchor{visibility:hidden;margin-left:.3rem;color:var(--muted)}
h2:hover a.anchor,h3:hover a.anchor,h4:hover a.anchor{visibility:visible}
nav.toc{border:1px solid var(--line);border-radius:6px;padding:.5rem .9rem;margin:0 0 1rem;background:var(--bg-soft);font-size:14px}
nav.toc ul{margin:.2rem 0 0;padding-left:1.1rem}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg-soft);padding:.05rem .3rem;border-radius:4px;overflow-wrap:anywhere}
pre{font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg-soft);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;margin:0;overflow:auto;white-space:pre-wrap;word-break:break-all;max-height:28rem}
pre code{background:none;padding:0}
.table-wrap{overflow-x:auto;margin:.6rem 0 1rem}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--bg-soft);font-weight:600}
tr.tone-unspecified td:first-child{box-shadow:inset 3px 0 0 var(--unspec)}
tr.tone-uncovered td:first-child{box-shadow:inset 3px 0 0 var(--must)}
tr.tone-covered td:first-child{box-shadow:inset 3px 0 0 var(--ok)}
tr.tone-encrypted td:first-child{box-shadow:inset 3px 0 0 var(--enc)}
tr:target td{background:#fff8c5}
.badge{display:inline-block;font-size:11.5px;font-weight:700;line-height:1.5;padding:0 .4rem;border-radius:999px;border:1px solid transparent;white-space:nowrap;vertical-align:baseline}
.badge-must,.badge-uncovered{color:var(--must);background:var(--must-bg);border-color:#ffcecb}
.badge-should{color:var(--should);background:var(--should-bg);border-color:#eed888}
.badge-unspecified{color:var(--unspec);background:var(--unspec-bg);border-color:#e0c8f7}
.badge-covered{color:var(--ok);background:var(--ok-bg);border-color:#aceebb}
.badge-encrypted,.badge-key{color:var(--enc);background:var(--enc-bg);border-color:#b6e3ff}
.badge-plain{color:var(--muted);background:var(--bg-soft);border-color:var(--line)}
.note{border-left:4px solid var(--accent);background:var(--bg-soft);padding:.5rem .8rem;margin:.8rem 0;border-radius:0 6px 6px 0}
.note-unspecified{border-left-color:var(--unspec);background:var(--unspec-bg)}
figure.code{margin:.6rem 0 1rem}figure.code figcaption{font-size:13px;color:var(--muted);margin:0 0 .2rem}
section.example{border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem .8rem;margin:.8rem 0 1.2rem}
section.example h4{margin:.1rem 0 .5rem}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.8rem}
.panel .label{font-size:13px;color:var(--muted);margin:0 0 .2rem}
.panel.encrypted pre.cipher{background:var(--enc-bg);border-color:#b6e3ff}
.stack{display:flex;flex-direction:column;gap:.6rem}
p.empty{color:var(--muted);font-style:italic}
footer{border-top:1px solid var(--line);color:var(--muted);font-size:13px;padding:.8rem 1.2rem}
@media (max-width:900px){.layout{display:block}nav.site{position:static;max-height:none;border-right:0;border-bottom:1px solid var(--line)}.pair{grid-template-columns:1fr}main{padding:1rem}}
@media print{nav.site,header.top{display:none}main{max-width:none}}
`;

function href(page: string, anchor?: string): string {
  return `${page ? `${page}.html` : ''}${anchor ? `#${anchor}` : ''}`;
}

function inline(piece: Inline): string {
  switch (piece.kind) {
    case 'text':
      return h(piece.text);
    case 'code':
      return `<code>${h(piece.text)}</code>`;
    case 'strong':
      return `<strong>${h(piece.text)}</strong>`;
    case 'link':
      return `<a href="${h(href(piece.page, piece.anchor))}">${text(piece.text)}</a>`;
    case 'file':
      return `<a href="${h(piece.href)}">${h(piece.text)}</a>`;
    case 'badge':
      return `<span class="badge badge-${piece.tone}">${h(piece.text)}</span>`;
  }
}

function text(pieces: Text): string {
  return pieces.map(inline).join('');
}

function panel(item: Panel, side: 'plain' | 'encrypted'): string {
  return `<div class="panel ${side}"><div class="label">${text(item.label)}</div><pre${item.cipher ? ' class="cipher"' : ''}>${h(item.text)}</pre></div>`;
}

function example(block: ExampleBlock): string {
  return `<section class="example" id="${h(block.id)}" data-direction="${block.direction}" data-key-half="${block.keyHalf}" data-cipher="${h(block.cipher)}">
<h4>${text(block.title)}</h4>
<div class="pair">${panel(block.plain, 'plain')}<div class="stack">${block.encrypted.map((item) => panel(item, 'encrypted')).join('')}</div></div>
</section>`;
}

function block(item: Block): string {
  switch (item.kind) {
    case 'heading':
      return `<h${item.level} id="${h(item.id)}">${text(item.text)}<a class="anchor" href="#${h(item.id)}" aria-hidden="true">#</a></h${item.level}>`;
    case 'paragraph':
      return `<p>${text(item.text)}</p>`;
    case 'list':
      return `<ul>${item.items.map((entry) => `<li>${text(entry)}</li>`).join('')}</ul>`;
    case 'table': {
      if (item.rows.length === 0)
        return `<p class="empty"${item.id ? ` id="${h(item.id)}"` : ''}>${h(item.empty ?? 'nothing to show')}</p>`;
      const head = `<thead><tr>${item.columns.map((column) => `<th scope="col">${h(column)}</th>`).join('')}</tr></thead>`;
      const rows = item.rows
        .map(
          (row) =>
            `<tr${row.id ? ` id="${h(row.id)}"` : ''}${row.tone ? ` class="tone-${row.tone}"` : ''}>${row.cells.map((cell) => `<td>${text(cell)}</td>`).join('')}</tr>`,
        )
        .join('\n');
      return `<div class="table-wrap"><table${item.id ? ` id="${h(item.id)}"` : ''}>${head}<tbody>\n${rows}\n</tbody></table></div>`;
    }
    case 'code':
      return `<figure class="code">${item.title ? `<figcaption>${text(item.title)}</figcaption>` : ''}<pre><code class="language-${item.language}">${h(item.text)}</code></pre></figure>`;
    case 'note':
      return `<div class="note note-${item.tone}">${text(item.text)}</div>`;
    case 'example':
      return example(item);
  }
}

/** One self-contained HTML page: inline CSS, no scripts, relative links only. */
export function renderHtmlPage(page: Page, pages: readonly Page[], siteTitle: string): string {
  const groups = (Object.keys(GROUP_TITLES) as PageGroup[])
    .map((group) => {
      const members = pages.filter((member) => member.group === group && !member.hidden);
      if (members.length === 0) return '';
      const items = members
        .map(
          (member) =>
            `<li><a href="${member.id}.html"${member.id === page.id ? ' aria-current="page"' : ''}>${h(member.nav)}</a></li>`,
        )
        .join('');
      return `<h2>${h(GROUP_TITLES[group])}</h2><ul>${items}</ul>`;
    })
    .join('\n');
  const sections = page.blocks.filter(
    (item): item is Extract<Block, { kind: 'heading' }> => item.kind === 'heading' && item.level === 2,
  );
  const toc =
    sections.length > 2
      ? `<nav class="toc" aria-label="On this page"><strong>On this page</strong><ul>${sections.map((section) => `<li><a href="#${h(section.id)}">${text(section.text)}</a></li>`).join('')}</ul></nav>`
      : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="wallet-conformance docs">
<title>${h(page.title)} · ${h(siteTitle)}</title>
<style>${CSS}</style>
</head>
<body>
<header class="top"><a class="home" href="index.html">${h(siteTitle)}</a><span>generated from the spec; works offline</span></header>
<div class="layout">
<nav class="site" aria-label="Site">
${groups}
</nav>
<main id="main">
<h1>${h(page.title)}</h1>
${toc}
${page.blocks.map(block).join('\n')}
</main>
</div>
<footer>Generated by <code>wallet-conformance docs</code> from <code>spec/wallet-api.yaml</code> and <code>spec/rules.yaml</code>. The same pages as Markdown: <a href="${page.id}.md">${h(page.id)}.md</a>.</footer>
</body>
</html>
`;
}
