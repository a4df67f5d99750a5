import { codeText, link, plainText, type Block, type Inline, type Page, type Text } from './model.js';

/** One Markdown file of the manual: its path in the package (`README.md`, `docs/merchant-guide.md`) and its text. */
export interface ManualFile {
  path: string;
  text: string;
}

/** The site page id of a manual file: `manual-<name>` (never one of the reference pages' ids). */
export function manualPageId(path: string): string {
  if (path === 'README.md') return 'manual-readme';
  const name = path
    .replace(/^docs\//, '')
    .replace(/\.md$/, '')
    .replace(/(^|\/)README$/, '$1index')
    .replace(/\/index$/, '');
  return `manual-${name.replace(/\//g, '-')}`;
}

/** GitHub's anchor of a heading (the one the manual's own links use). */
function headingAnchor(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/**
 * The manual (README.md and docs/**) as pages of the documentation site, beside the interface
 * reference: the subset of Markdown the manual is written in (headings, paragraphs, lists, tables,
 * fenced code, code spans, bold, links). A link to another manual file becomes a link to its page;
 * a link to anything else (an example file, a page not in the package) keeps its text and shows the
 * path, and a web address is shown, never linked (the site links nothing outside itself).
 * Decisions are reachable from their index but not listed in the navigation.
 */
export function manualPages(files: readonly ManualFile[]): Page[] {
  const paths = new Set(files.map((file) => file.path));
  return [...files]
    .sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path))
    .map((file) => {
      const blocks = parseBlocks(file.text, (target) => resolveTarget(file.path, target, paths));
      const first = blocks.findIndex((block) => block.kind === 'heading' && block.id === TITLE);
      const title = first >= 0 ? plain((blocks[first] as Extract<Block, { kind: 'heading' }>).text) : file.path;
      if (first >= 0) blocks.splice(first, 1);
      const decision = /^docs\/decisions\/(?!README\.md$)/.test(file.path);
      return {
        id: manualPageId(file.path),
        title,
        nav: navLabel(file.path, title),
        group: 'manual',
        blocks,
        ...(decision ? { hidden: true } : {}),
      };
    });
}

const TITLE = '\u0000title';

/** The navigation's order: the README, the index and the two guides first, then the rest by name. */
const FIRST = ['README.md', 'docs/README.md', 'docs/merchant-guide.md', 'docs/service-guide.md'];
function rank(path: string): number {
  const at = FIRST.indexOf(path);
  return at >= 0 ? at : FIRST.length;
}

function navLabel(path: string, title: string): string {
  if (path === 'README.md') return 'README';
  if (path === 'docs/README.md') return 'Index';
  return title.length > 40 ? `${title.slice(0, 37)}…` : title;
}

function plain(text: Text): string {
  return text.map((piece) => ('text' in piece && typeof piece.text === 'string' ? piece.text : '')).join('');
}

type Resolve = (target: string) => { page: string; anchor?: string } | undefined;

function resolveTarget(
  from: string,
  target: string,
  paths: ReadonlySet<string>,
): { page: string; anchor?: string } | undefined {
  const [path = '', anchor] = target.split('#') as [string, string?];
  const anchorPart = anchor ? { anchor } : {};
  if (path === '') return { page: '', ...anchorPart };
  if (/^[a-z][a-z+.-]*:/i.test(path)) return undefined;
  const parts = from.split('/').slice(0, -1);
  for (const segment of decodeURI(path).split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  const resolved = parts.join('/');
  return paths.has(resolved) ? { page: manualPageId(resolved), ...anchorPart } : undefined;
}

/** A block read from the manual's lines and the index of the line after it. */
interface Parsed {
  block: Block;
  next: number;
}

/** The list item marker: `-`, `*` or `1.` after any indent. */
const LIST_ITEM = /^\s*(?:[-*]|\d+\.) /;

/** The anchors given so far on a page; its first level-1 heading becomes the page's title. */
interface HeadingState {
  used: Set<string>;
  titled: boolean;
}

function parseBlocks(source: string, resolve: Resolve): Block[] {
  const lines = source.replace(/<!--[\s\S]*?-->\n?/g, '').split('\n');
  const blocks: Block[] = [];
  const headings: HeadingState = { used: new Set(), titled: false };
  for (let i = 0; i < lines.length;) {
    if (lines[i]!.trim() === '') {
      i++;
      continue;
    }
    const parsed =
      fencedCode(lines, i) ??
      headingBlock(lines, i, resolve, headings) ??
      tableBlock(lines, i, resolve) ??
      listBlock(lines, i, resolve) ??
      quoteBlock(lines, i, resolve) ??
      paragraphBlock(lines, i, resolve);
    blocks.push(parsed.block);
    i = parsed.next;
  }
  return blocks;
}

/** A fenced code block; an unclosed fence runs to the end of the file. */
function fencedCode(lines: string[], start: number): Parsed | undefined {
  const fence = /^(`{3,})(\S*)\s*$/.exec(lines[start]!);
  if (!fence) return undefined;
  const end = lines.findIndex((next, j) => j > start && next.startsWith(fence[1]!) && next.trim() === fence[1]);
  const stop = end < 0 ? lines.length : end;
  return {
    block: { kind: 'code', language: language(fence[2]!), text: lines.slice(start + 1, stop).join('\n') },
    next: stop + 1,
  };
}

/** A heading with GitHub's anchor, numbered when the page has it already; levels 2 to 4 on the site. */
function headingBlock(lines: string[], start: number, resolve: Resolve, headings: HeadingState): Parsed | undefined {
  const match = /^(#{1,6}) (.+)$/.exec(lines[start]!);
  if (!match) return undefined;
  const text = inline(match[2]!, resolve);
  if (match[1]!.length === 1 && !headings.titled) {
    headings.titled = true;
    return { block: { kind: 'heading', level: 2, id: TITLE, text }, next: start + 1 };
  }
  const base = headingAnchor(match[2]!);
  let id = base;
  for (let n = 1; headings.used.has(id); n++) id = `${base}-${n}`;
  headings.used.add(id);
  return {
    block: { kind: 'heading', level: Math.min(4, Math.max(2, match[1]!.length)) as 2 | 3 | 4, id, text },
    next: start + 1,
  };
}

/** A pipe table: a header row, a separator row, then every row that starts with `|`. */
function tableBlock(lines: string[], start: number, resolve: Resolve): Parsed | undefined {
  const line = lines[start]!;
  if (!(line.startsWith('|') && lines[start + 1]?.startsWith('|') && /^\|[\s:|-]+\|?\s*$/.test(lines[start + 1]!)))
    return undefined;
  const columns = cells(line).map((cell) => cell.replace(/`/g, ''));
  let j = start + 2;
  const rows: Array<{ cells: Text[] }> = [];
  for (; j < lines.length && lines[j]!.startsWith('|'); j++)
    rows.push({ cells: cells(lines[j]!).map((cell) => inline(cell, resolve)) });
  return { block: { kind: 'table', columns, rows }, next: j };
}

/** A list; an indented line continues the item above it. */
function listBlock(lines: string[], start: number, resolve: Resolve): Parsed | undefined {
  if (!LIST_ITEM.test(lines[start]!)) return undefined;
  const items: Text[] = [];
  let j = start;
  let current: string[] = [];
  for (; j < lines.length; j++) {
    const next = lines[j]!;
    if (LIST_ITEM.test(next)) {
      if (current.length) items.push(inline(current.join(' '), resolve));
      current = [next.replace(LIST_ITEM, '')];
    } else if (next.trim() !== '' && /^\s+/.test(next)) current.push(next.trim());
    else break;
  }
  if (current.length) items.push(inline(current.join(' '), resolve));
  return { block: { kind: 'list', items }, next: j };
}

/** A block quote, shown as a note. */
function quoteBlock(lines: string[], start: number, resolve: Resolve): Parsed | undefined {
  if (!lines[start]!.startsWith('>')) return undefined;
  const quoted: string[] = [];
  let j = start;
  for (; j < lines.length && lines[j]!.startsWith('>'); j++) quoted.push(lines[j]!.replace(/^>\s?/, ''));
  return { block: { kind: 'note', tone: 'info', text: inline(quoted.join(' '), resolve) }, next: j };
}

/** A paragraph: up to a blank line or the start of another kind of block. */
function paragraphBlock(lines: string[], start: number, resolve: Resolve): Parsed {
  const paragraph: string[] = [];
  let j = start;
  for (; j < lines.length; j++) {
    const next = lines[j]!;
    if (next.trim() === '' || /^(#{1,6} |`{3,}|\||>)/.test(next) || (j > start && LIST_ITEM.test(next))) break;
    paragraph.push(next.trim());
  }
  return { block: { kind: 'paragraph', text: inline(paragraph.join(' '), resolve) }, next: j };
}

function language(name: string): 'json' | 'http' | 'text' | 'sh' {
  if (['sh', 'bash', 'shell', 'console'].includes(name)) return 'sh';
  return name === 'json' || name === 'http' ? name : 'text';
}

/** The cells of a table row: split on `|` that is not escaped, `\|` kept as `|`. */
function cells(row: string): string[] {
  const parts = row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/);
  return parts.map((part) => part.trim().replace(/\\\|/g, '|'));
}

/** Code spans, bold, links and escapes of one run of text. */
function inline(source: string, resolve: Resolve): Text {
  const out: Text = [];
  let buffer = '';
  const flush = () => {
    if (buffer) out.push(plainText(buffer));
    buffer = '';
  };
  for (let i = 0; i < source.length;) {
    const ch = source[i]!;
    if (ch === '\\' && i + 1 < source.length && /[\\`*_[\]<>|#()]/.test(source[i + 1]!)) {
      buffer += source[i + 1];
      i += 2;
      continue;
    }
    if (ch === '`') {
      const run = /^`+/.exec(source.slice(i))![0];
      const end = source.indexOf(run, i + run.length);
      if (end > 0) {
        flush();
        out.push(codeText(source.slice(i + run.length, end).replace(/^ (.*) $/, '$1')));
        i = end + run.length;
        continue;
      }
    }
    if (source.startsWith('**', i)) {
      const end = source.indexOf('**', i + 2);
      if (end > 0) {
        flush();
        out.push({ kind: 'strong', text: source.slice(i + 2, end).replace(/`/g, '') });
        i = end + 2;
        continue;
      }
    }
    // An image reads as its alt text and its file: the site's pages are self-contained, without images.
    if (ch === '!' && /^!\[[^\]]*\]\([^)\s]+\)/.test(source.slice(i))) {
      i++;
      continue;
    }
    if (ch === '[') {
      const match = /^\[((?:[^\]`]|`[^`]*`)*)\]\(([^)\s]+)\)/.exec(source.slice(i));
      if (match) {
        flush();
        const label = inline(match[1]!, () => undefined);
        const target = resolve(match[2]!);
        if (target) out.push(link(target.page, label, target.anchor));
        else if (/^[a-z][a-z+.-]*:/i.test(match[2]!))
          out.push(...label, plainText(' ('), codeText(match[2]!), plainText(')'));
        else
          out.push(
            ...label,
            ...(plain(label) === match[2] || label.some((piece) => piece.kind === 'code' && piece.text === match[2])
              ? []
              : [plainText(' ('), codeText(match[2]!), plainText(')')]),
          );
        i += match[0].length;
        continue;
      }
    }
    buffer += ch;
    i++;
  }
  flush();
  return out as Inline[];
}
