/**
 * The documentation site as data: pages of blocks of inline text. Page builders produce it; the
 * HTML and Markdown renderers turn the same pages into two formats, so both always say the same.
 */

/** Tones give a badge or a table row its meaning (and its colour in HTML). */
export type Tone = 'must' | 'should' | 'unspecified' | 'encrypted' | 'covered' | 'uncovered' | 'key' | 'plain';

/** One piece of inline text. */
export type Inline =
  | { kind: 'text'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'strong'; text: string }
  /** A link to another page of the site (`page` is its id; '' is this page) and an anchor on it. */
  | { kind: 'link'; page: string; anchor?: string; text: Text }
  /** A link to a non-page file of the site, relative to its root (`demo-key/merchant-public.pem`). */
  | { kind: 'file'; href: string; text: string }
  | { kind: 'badge'; tone: Tone; text: string };

/** A run of inline pieces. */
export type Text = Inline[];

/** One row of a table; `id` becomes an anchor. */
export interface Row {
  id?: string;
  tone?: Tone;
  cells: Text[];
}

/** One side of an example: a label and preformatted text. */
export interface Panel {
  label: Text;
  text: string;
  /** The text is RSA ciphertext (Base64), shown so. */
  cipher?: boolean;
}

/** A payload shown plain next to its encrypted form. */
export interface ExampleBlock {
  kind: 'example';
  id: string;
  title: Text;
  direction: 'request' | 'response' | 'callback';
  /** Which half of the demo key pair encrypted it. */
  keyHalf: 'public' | 'private';
  /** The exact Base64 ciphertext (also inside one of the panels). */
  cipher: string;
  plain: Panel;
  encrypted: Panel[];
}

/** A block of a page. */
export type Block =
  | { kind: 'heading'; level: 2 | 3 | 4; id: string; text: Text }
  | { kind: 'paragraph'; text: Text }
  | { kind: 'list'; items: Text[] }
  | { kind: 'table'; id?: string; columns: string[]; rows: Row[]; empty?: string }
  | { kind: 'code'; title?: Text; language: 'json' | 'http' | 'text' | 'sh'; text: string }
  | { kind: 'note'; tone: 'unspecified' | 'info'; text: Text }
  | ExampleBlock;

/** Where a page sits in the navigation. */
export type PageGroup = 'overview' | 'endpoints' | 'callbacks' | 'reference' | 'manual';

/** One page: `<id>.html` and `<id>.md`. */
export interface Page {
  id: string;
  title: string;
  /** The short label in the navigation. */
  nav: string;
  group: PageGroup;
  blocks: Block[];
  /** Reachable by links but not listed in the navigation (the manual's decisions, one page each). */
  hidden?: boolean;
}

/** Plain text. */
export const plainText = (text: string): Inline => ({ kind: 'text', text });
/** Inline code. */
export const codeText = (text: string): Inline => ({ kind: 'code', text });
/** Strong text. */
export const boldText = (text: string): Inline => ({ kind: 'strong', text });
/** A badge. */
export const badge = (tone: Tone, text: string): Inline => ({ kind: 'badge', tone, text });
/** A link to a page (and anchor). */
export const link = (page: string, text: Text | string, anchor?: string): Inline => ({
  kind: 'link',
  page,
  text: typeof text === 'string' ? [plainText(text)] : text,
  ...(anchor === undefined ? {} : { anchor }),
});

/** A heading block. */
export const heading = (level: 2 | 3 | 4, id: string, text: string | Text): Block => ({
  kind: 'heading',
  level,
  id,
  text: typeof text === 'string' ? [plainText(text)] : text,
});
/** A paragraph block. */
export const para = (...text: Inline[]): Block => ({ kind: 'paragraph', text });

/** Joins texts with a separator. */
export function join(texts: Text[], separator: Inline = plainText(', ')): Text {
  return texts.flatMap((text, i) => (i === 0 ? text : [separator, ...text]));
}

/** The anchor of a rule's row in the catalog and in the traceability table. */
export const ruleAnchor = (id: string): string => `rule-${id}`;

/**
 * Prose from the spec or the catalog: `backticks` become code, known rule ids become links to the
 * catalog, blank lines are kept as paragraph breaks by the caller.
 */
export function prose(text: string, ruleIds: ReadonlySet<string> = new Set()): Text {
  const out: Text = [];
  const parts = text
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .split(/(`[^`]*`)/);
  for (const part of parts) {
    if (part === '') continue;
    if (part.startsWith('`') && part.endsWith('`') && part.length >= 2) {
      out.push(codeText(part.slice(1, -1)));
      continue;
    }
    const pieces = part.split(/\b([A-Z0-9]+(?:-[A-Z0-9]+)+)\b/);
    pieces.forEach((piece, i) => {
      if (piece === '') return;
      if (i % 2 === 1 && ruleIds.has(piece)) out.push(link('rules', [codeText(piece)], ruleAnchor(piece)));
      else out.push(plainText(piece));
    });
  }
  return out;
}

/** Splits a description into paragraphs at blank lines. */
export function paragraphs(text: string, ruleIds: ReadonlySet<string> = new Set()): Block[] {
  return text
    .split(/\n\s*\n/)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.length > 0)
    .map((chunk) => ({ kind: 'paragraph', text: prose(chunk, ruleIds) }));
}

/** Every link target of a page: the page ids (and anchors) its links name. */
export function linksOf(page: Page): Array<{ page: string; anchor?: string }> {
  const out: Array<{ page: string; anchor?: string }> = [];
  const visit = (text: Text) => {
    for (const inline of text) {
      if (inline.kind === 'link') {
        out.push({ page: inline.page || page.id, ...(inline.anchor === undefined ? {} : { anchor: inline.anchor }) });
        visit(inline.text);
      }
    }
  };
  for (const block of page.blocks) {
    if (block.kind === 'heading' || block.kind === 'paragraph' || block.kind === 'note') visit(block.text);
    else if (block.kind === 'list') block.items.forEach(visit);
    else if (block.kind === 'table') block.rows.forEach((row) => row.cells.forEach(visit));
    else if (block.kind === 'code' && block.title) visit(block.title);
    else if (block.kind === 'example') {
      visit(block.title);
      visit(block.plain.label);
      block.encrypted.forEach((panel) => visit(panel.label));
    }
  }
  return out;
}

/** Every anchor id a page defines: headings, table ids, row ids, example ids. */
export function anchorsOf(page: Page): Set<string> {
  const out = new Set<string>();
  for (const block of page.blocks) {
    if (block.kind === 'heading' || block.kind === 'example') out.add(block.id);
    if (block.kind === 'table') {
      if (block.id) out.add(block.id);
      for (const row of block.rows) if (row.id) out.add(row.id);
    }
  }
  return out;
}
