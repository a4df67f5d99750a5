import {
  anchorsOf,
  badge,
  codeText,
  join,
  link,
  linksOf,
  prose,
  ruleAnchor,
  plainText,
  type Page,
  type Row,
  type Text,
  type Tone,
} from './model.js';
import { union } from './lists.js';
import type { RuleIndex } from './rule-index.js';

/** Links to the catalog for a list of rule ids. */
export function ruleLinks(ids: readonly string[]): Text {
  return join(
    ids.map((id) => [link('rules', [codeText(id)], ruleAnchor(id))]),
    plainText(' '),
  );
}

/** A severity badge. */
export function severityBadge(index: Pick<RuleIndex, 'ruleById'>, id: string): Text {
  const severity = index.ruleById.get(id)?.severity;
  if (!severity) return [badge('uncovered', 'not in the catalog')];
  return [badge(toneOf(severity), severity)];
}

/** The tone of a severity. */
export function toneOf(severity: string): Tone {
  return severity === 'MUST' ? 'must' : severity === 'SHOULD' ? 'should' : 'unspecified';
}

/** The checks that judge a rule, linked to its traceability row. */
export function checksCell(index: Pick<RuleIndex, 'ruleById' | 'coverage'>, rule: string): Text {
  const coverage = index.coverage.get(rule) ?? [];
  const checks = union(coverage.map((entry) => entry.check));
  if (checks.length === 0) {
    const catalog = index.ruleById.get(rule);
    if (catalog?.severity === 'UNSPECIFIED')
      return [
        badge('unspecified', 'unspecified'),
        plainText(' '),
        link('traceability', 'assumption', ruleAnchor(rule)),
      ];
    if (catalog && !catalog.blackBox) return [link('traceability', 'not black-box', ruleAnchor(rule))];
    return [badge('uncovered', 'no check'), plainText(' '), link('traceability', 'why', ruleAnchor(rule))];
  }
  return [
    ...join(
      checks.map((check) => [codeText(check)]),
      plainText(' '),
    ),
    plainText(' '),
    link('traceability', `(${union(coverage.map((e) => `${e.suite}/${e.caseId}`)).length} cases)`, ruleAnchor(rule)),
  ];
}

/**
 * Appends the "Rules on this page" table: every rule the page links to, with severity, text and
 * the checks that judge it.
 */
export function withRulesOnPage(index: Pick<RuleIndex, 'ruleById' | 'coverage'>, page: Page): Page {
  const ids = union(
    linksOf(page)
      .filter((target) => target.page === 'rules' && target.anchor?.startsWith('rule-'))
      .map((target) => target.anchor!.slice(5)),
  );
  const rows: Row[] = ids
    .filter((id) => index.ruleById.has(id))
    .map((id) => ({
      cells: [
        [link('rules', [codeText(id)], ruleAnchor(id))],
        severityBadge(index, id),
        prose(index.ruleById.get(id)!.text),
        checksCell(index, id),
      ],
    }));
  const anchors = anchorsOf(page);
  const headingId = anchors.has('rules-on-this-page') ? 'rules-on-this-page-2' : 'rules-on-this-page';
  return {
    ...page,
    blocks: [
      ...page.blocks,
      { kind: 'heading', level: 2, id: headingId, text: [plainText('Rules on this page')] },
      { kind: 'table', columns: ['rule', 'severity', 'text', 'checked by'], rows },
    ],
  };
}
