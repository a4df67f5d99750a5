import { isNode } from '../../spec/document.js';
import type { UnspecifiedNote } from '../../spec/flatten.js';
import type { SpecModel } from '../../spec/model.js';
import { badge, codeText, link, prose, ruleAnchor, plainText, type Block, type Text } from './model.js';
import type { RuleIndex } from './rule-index.js';

/** One `x-unspecified` entry: what the interface leaves open and what the toolkit assumes. */
export interface UnspecifiedPoint {
  rule: string;
  note: string;
  /** Where the spec marks it, in words (`OrderRequest.expiryHours`, `POST /card/close`). */
  where: string;
}

/** The `x-unspecified` notes of one place of the spec, located. */
export function located(notes: readonly UnspecifiedNote[], where: string): UnspecifiedPoint[] {
  return notes.map(({ rule, note }) => ({ rule, note, where }));
}

/** Every x-unspecified of the spec, in document order, located. */
export function unspecifiedPointsOf(model: SpecModel): UnspecifiedPoint[] {
  return model.annotations().flatMap(({ pointer, unspecified }) => {
    if (!Array.isArray(unspecified)) return [];
    return unspecified.filter(isNode).map((entry) => ({
      rule: String(entry.rule ?? ''),
      note: String(entry.note ?? ''),
      where: describePointer(pointer),
    }));
  });
}

/** A JSON pointer of the spec in words: `#/components/schemas/OrderRequest/properties/expiryHours` → `OrderRequest.expiryHours`. */
function describePointer(pointer: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (parts.length === 0) return 'the whole interface';
  if (parts[0] === 'info') return 'the whole interface';
  if (parts[0] === 'paths' && parts.length >= 3)
    return `${parts[2]!.toUpperCase()} ${parts[1]}${parts.length > 3 ? ` (${parts.slice(3).join(' ')})` : ''}`;
  if (parts[0] === 'webhooks' && parts.length >= 3)
    return `callback ${parts[1]}${parts.length > 3 ? ` (${parts.slice(3).join(' ')})` : ''}`;
  if (parts[0] === 'components' && parts.length >= 3) {
    const rest = parts.slice(3).filter((part) => part !== 'properties');
    return [parts[2], ...rest].join('.');
  }
  return parts.join('.');
}

/** An unspecified point in a sentence: badge, rule link, note. */
export function unspecifiedInline(index: Pick<RuleIndex, 'ruleIds'>, point: UnspecifiedPoint): Text {
  return [
    badge('unspecified', 'unspecified'),
    plainText(' '),
    link('rules', [codeText(point.rule)], ruleAnchor(point.rule)),
    plainText(': '),
    ...prose(point.note, index.ruleIds),
  ];
}

/** A table of unspecified points: rule, where, what the toolkit assumes. */
export function unspecifiedTable(
  index: Pick<RuleIndex, 'ruleIds'>,
  points: UnspecifiedPoint[],
  id = 'unspecified-table',
): Block {
  const seen = new Set<string>();
  const unique = points.filter((point) => {
    const key = `${point.rule}\u0000${point.note}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    kind: 'table',
    id,
    columns: ['', 'rule', 'where', 'what the interface leaves open, and what the toolkit assumes'],
    rows: unique.map((point) => ({
      tone: 'unspecified',
      cells: [
        [badge('unspecified', 'unspecified')],
        [link('rules', [codeText(point.rule)], ruleAnchor(point.rule))],
        [plainText(point.where)],
        prose(point.note, index.ruleIds),
      ],
    })),
    empty: 'nothing unspecified here',
  };
}
