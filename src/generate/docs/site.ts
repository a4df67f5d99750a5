import { SpecError } from '../../core/errors.js';
import type { Rule } from '../../core/rules.js';
import { callbackPage } from './callback-page.js';
import { createContext } from './docs-context.js';
import { endpointPage } from './endpoint-page.js';
import { renderHtmlPage } from './html.js';
import { renderMarkdownPage } from './markdown.js';
import { anchorsOf, linksOf, type Page } from './model.js';
import { manualPages } from './manual-pages.js';
import type { DocsOptions, DocsSuite } from './options.js';
import { receiverPage } from './receiver-page.js';
import { errorsPage, idempotencyPage, indexPage, rulesPage, traceabilityPage } from './reference-pages.js';
import { withRulesOnPage } from './rule-cells.js';
import type { SpecSource } from '../../spec/document.js';
import type { GeneratedFile } from '../generated-file.js';

/** The entry page of the site. */
export const DOCS_INDEX = 'index.html';

/**
 * The documentation site, from the spec, the rule catalog and the suites: one page per endpoint
 * and per callback type, an index, the rule catalog, the traceability table, the idempotency and
 * error tables; each page as self-contained HTML and as Markdown, plus `examples.json` and the
 * demo key that encrypted the examples. Paths are relative to the site's folder. Pure: the demo
 * key (and, optionally, the RSA engine) is injected; nothing touches the file system.
 *
 * @example generateDocs(spec, rules, loadSuites(), { checks: CHECKS, demo: { key } }).find((f) => f.path === 'index.html')
 */
export function generateDocs(
  spec: SpecSource,
  rules: Rule[],
  suites: readonly DocsSuite[],
  options: DocsOptions,
): GeneratedFile[] {
  const ctx = createContext(spec, rules, suites, options);
  const index = indexPage(ctx);
  const endpoints = ctx.endpoints.map((endpoint) => withRulesOnPage(ctx, endpointPage(ctx, endpoint)));
  const callbacks = ctx.callbacks.map((callback) => withRulesOnPage(ctx, callbackPage(ctx, callback)));
  const traceability = traceabilityPage(ctx);
  const idempotency = idempotencyPage(ctx);
  const errors = errorsPage(ctx);
  const citing = [...endpoints, ...callbacks, idempotency, errors];
  const citedOn = new Map<string, Array<{ id: string; nav: string }>>();
  for (const page of citing) {
    for (const target of linksOf(page)) {
      if (target.page !== 'rules' || !target.anchor?.startsWith('rule-')) continue;
      const id = target.anchor.slice(5);
      const list = citedOn.get(id) ?? [];
      if (!list.some((entry) => entry.id === page.id)) citedOn.set(id, [...list, { id: page.id, nav: page.nav }]);
    }
  }
  const pages: Page[] = [
    index,
    ...endpoints,
    ...callbacks,
    receiverPage(ctx),
    rulesPage(ctx, citedOn),
    traceability,
    idempotency,
    errors,
    ...manualPages(options.manual ?? []),
  ];
  assertRulesKnown(pages, ctx.ruleIds, ctx.source.name);
  assertLinks(pages);
  const siteTitle = ctx.model.info().title ?? 'Interface reference';
  const files: GeneratedFile[] = [];
  for (const page of pages) {
    files.push({ path: `${page.id}.html`, contents: renderHtmlPage(page, pages, siteTitle) });
    files.push({ path: `${page.id}.md`, contents: renderMarkdownPage(page, pages, siteTitle) });
  }
  files.push(
    {
      path: 'examples.json',
      contents: `${JSON.stringify({ demoKey: { bits: ctx.demo.bits, sha256: ctx.demo.fingerprint, profile: ctx.demo.profile }, examples: ctx.examples }, null, 2)}\n`,
    },
    { path: 'demo-key/merchant-public.pem', contents: ctx.demo.publicPem },
    { path: 'demo-key/merchant-private.pem', contents: ctx.demo.privatePem },
  );
  return files;
}

/** A rule the spec cites but the catalog lacks is a mismatch of the user's inputs, not a bug of ours. */
function assertRulesKnown(pages: Page[], ruleIds: ReadonlySet<string>, specName: string): void {
  const unknown = new Set<string>();
  for (const page of pages) {
    for (const target of linksOf(page)) {
      if (target.page === 'rules' && target.anchor?.startsWith('rule-') && !ruleIds.has(target.anchor.slice(5)))
        unknown.add(target.anchor.slice(5));
    }
  }
  if (unknown.size > 0)
    throw new SpecError(
      'unknown-rule',
      `${specName} cites rules that the rule catalog does not list: ${[...unknown].join(', ')}`,
    );
}

/** Every internal link names a generated page and an anchor it defines: a broken link is a bug of ours. */
function assertLinks(pages: Page[]): void {
  const anchors = new Map(pages.map((page) => [page.id, anchorsOf(page)]));
  for (const page of pages) {
    for (const target of linksOf(page)) {
      const defined = anchors.get(target.page);
      if (!defined) throw new Error(`docs: ${page.id} links to a page that does not exist: ${target.page}`);
      if (target.anchor && !defined.has(target.anchor))
        throw new Error(`docs: ${page.id} links to ${target.page}#${target.anchor}, which does not exist`);
    }
  }
}
