import { badge, codeText, join, prose, plainText, type Block, type Row, type Text, type Tone } from './model.js';
import { ruleLinks } from './rule-cells.js';
import type { RuleIndex } from './rule-index.js';
import type { Condition, ObjectView } from './schema-view.js';
import { unspecifiedInline } from './unspecified.js';

/** A field table from an object view; `keyFields` marks idempotency key fields. */
export function fieldTable(
  index: Pick<RuleIndex, 'ruleIds'>,
  view: ObjectView,
  options: { id?: string; keyFields?: ReadonlySet<string>; plainLink?: (name: string) => Text } = {},
): Block {
  const rows: Row[] = view.fields.map((field) => {
    const description: Text = [];
    if (field.encrypted) {
      description.push(
        badge('encrypted', 'encrypted'),
        plainText(` Base64 of RSA blocks (${field.encrypted.direction} direction); plain form: `),
        ...(options.plainLink?.(field.encrypted.plaintext) ?? [codeText(field.encrypted.plaintext)]),
        plainText('. '),
      );
    }
    if (options.keyFields?.has(field.path)) description.push(badge('key', 'idempotency key'), plainText(' '));
    if (field.description) description.push(...prose(field.description, index.ruleIds));
    if (field.constraints.length > 0)
      description.push(
        plainText(field.description ? ' ' : ''),
        ...join(field.constraints.map((constraint) => [codeText(constraint)])),
      );
    for (const point of field.unspecified) description.push(plainText(' '), ...unspecifiedInline(index, point));
    return {
      cells: [
        [codeText(field.path)],
        [plainText(field.type)],
        [plainText(field.required ? 'yes' : 'no')],
        ruleLinks(field.rules),
        description,
      ],
      ...(field.encrypted
        ? { tone: 'encrypted' as Tone }
        : field.unspecified.length > 0
          ? { tone: 'unspecified' as Tone }
          : {}),
    };
  });
  return {
    kind: 'table',
    ...(options.id ? { id: options.id } : {}),
    columns: ['field', 'type', 'required', 'rules', 'description'],
    rows,
    empty: 'no fields',
  };
}

/** Conditional requirements of a schema (if/then). */
export function conditionTable(index: Pick<RuleIndex, 'ruleIds'>, conditions: Condition[], id?: string): Block[] {
  if (conditions.length === 0) return [];
  return [
    {
      kind: 'table',
      ...(id ? { id } : {}),
      columns: ['when', 'then', 'rules'],
      rows: conditions.map((condition) => ({
        cells: [
          [codeText(condition.when)],
          join(
            condition.then.map((effect) => prose(effect, index.ruleIds)),
            plainText('; '),
          ),
          ruleLinks(condition.rules),
        ],
      })),
    },
  ];
}
