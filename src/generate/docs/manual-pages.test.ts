import { describe, expect, it } from 'vitest';
import { manualPageId, manualPages } from './manual-pages.js';
import { anchorsOf, linksOf } from './model.js';

const FILES = [
  {
    path: 'docs/merchant-guide.md',
    text: '# Merchant guide\n\nIntro with **bold**, `code` and [the index](README.md).\n\n## What arrives\n\n<!-- not run: a reason -->\n```sh\nnpx wallet-conformance run\n```\n\n| flag | what |\n| --- | --- |\n| `--direction <d>` | request \\| response |\n| see [below](#what-arrives) | [keys](crypto-profiles.md#keys) |\n\n- one item\n  continued\n- [an example](../examples/decrypt/CallbackDecrypt.java) and [the web](https://example.com/x)\n\n## What arrives\n',
  },
  { path: 'docs/README.md', text: '# The manual\n\nStart at the [README](../README.md) or [probe.md](probe.md).\n' },
  { path: 'README.md', text: '# wallet-conformance\n\nSee [the guide](docs/merchant-guide.md#what-arrives).\n' },
  { path: 'docs/crypto-profiles.md', text: '# Crypto profiles\n\n## Keys\n\nText.\n' },
  { path: 'docs/decisions/0038-oaep.md', text: '# OAEP\n\nWhy.\n' },
  { path: 'docs/observe.md', text: '# Observe\n\n![The live page](images/live.png)\n\nWow! [the index](README.md)\n' },
];

describe('manualPages', () => {
  const pages = manualPages(FILES);
  const page = (id: string) => pages.find((p) => p.id === id)!;

  it('gives each file a page id of its own, in the navigation order README, index, guides, the rest', () => {
    expect(pages.map((p) => p.id)).toEqual([
      'manual-readme',
      'manual-index',
      'manual-merchant-guide',
      'manual-crypto-profiles',
      'manual-decisions-0038-oaep',
      'manual-observe',
    ]);
    expect(manualPageId('docs/decisions/README.md')).toBe('manual-decisions');
    expect(pages.every((p) => p.group === 'manual')).toBe(true);
    expect(page('manual-decisions-0038-oaep').hidden).toBe(true);
    expect(page('manual-merchant-guide').hidden).toBeUndefined();
  });

  it('takes the first heading as the title and the others as anchored headings, as GitHub names them', () => {
    const guide = page('manual-merchant-guide');
    expect(guide.title).toBe('Merchant guide');
    expect([...anchorsOf(guide)]).toEqual(['what-arrives', 'what-arrives-1']);
  });

  it('reads paragraphs, fenced code (without the not-run marker), tables with escaped pipes, and lists with continuations', () => {
    const kinds = page('manual-merchant-guide').blocks.map((block) => block.kind);
    expect(kinds).toEqual(['paragraph', 'heading', 'code', 'table', 'list', 'heading']);
    const [intro, , code, table, list] = page('manual-merchant-guide').blocks;
    expect(intro).toEqual({
      kind: 'paragraph',
      text: [
        { kind: 'text', text: 'Intro with ' },
        { kind: 'strong', text: 'bold' },
        { kind: 'text', text: ', ' },
        { kind: 'code', text: 'code' },
        { kind: 'text', text: ' and ' },
        { kind: 'link', page: 'manual-index', text: [{ kind: 'text', text: 'the index' }] },
        { kind: 'text', text: '.' },
      ],
    });
    expect(code).toEqual({ kind: 'code', language: 'sh', text: 'npx wallet-conformance run' });
    expect(table).toMatchObject({
      kind: 'table',
      columns: ['flag', 'what'],
      rows: [
        { cells: [[{ kind: 'code', text: '--direction <d>' }], [{ kind: 'text', text: 'request | response' }]] },
        {},
      ],
    });
    expect(list).toMatchObject({
      kind: 'list',
      items: [[{ kind: 'text', text: 'one item continued' }], expect.any(Array)],
    });
  });

  it('links manual files to their pages and anchors; shows other files and web addresses without linking them', () => {
    expect(linksOf(page('manual-merchant-guide'))).toEqual([
      { page: 'manual-index' },
      { page: 'manual-merchant-guide', anchor: 'what-arrives' },
      { page: 'manual-crypto-profiles', anchor: 'keys' },
    ]);
    expect(linksOf(page('manual-readme'))).toEqual([{ page: 'manual-merchant-guide', anchor: 'what-arrives' }]);
    expect(linksOf(page('manual-index'))).toEqual([{ page: 'manual-readme' }]);
    const list = page('manual-merchant-guide').blocks[4] as { items: Array<Array<{ kind: string; text?: unknown }>> };
    expect(list.items[1]).toEqual([
      { kind: 'text', text: 'an example' },
      { kind: 'text', text: ' (' },
      { kind: 'code', text: '../examples/decrypt/CallbackDecrypt.java' },
      { kind: 'text', text: ')' },
      { kind: 'text', text: ' and ' },
      { kind: 'text', text: 'the web' },
      { kind: 'text', text: ' (' },
      { kind: 'code', text: 'https://example.com/x' },
      { kind: 'text', text: ')' },
    ]);
  });

  it('reads an image as its alt text and its file (the site has no images); a ! before a plain link stays', () => {
    const [image, text] = page('manual-observe').blocks as Array<{ text: Array<{ kind: string; text?: unknown }> }>;
    expect(image!.text).toEqual([
      { kind: 'text', text: 'The live page' },
      { kind: 'text', text: ' (' },
      { kind: 'code', text: 'images/live.png' },
      { kind: 'text', text: ')' },
    ]);
    expect(text!.text[0]).toEqual({ kind: 'text', text: 'Wow! ' });
  });

  it('reads numbered lists as lists and quotes as notes', () => {
    const [only] = manualPages([{ path: 'docs/x.md', text: '# X\n\n1. first\n2. second\n\n> a quoted\n> note\n' }]);
    expect(only!.blocks).toEqual([
      { kind: 'list', items: [[{ kind: 'text', text: 'first' }], [{ kind: 'text', text: 'second' }]] },
      { kind: 'note', tone: 'info', text: [{ kind: 'text', text: 'a quoted note' }] },
    ]);
  });
});
