import { stringifyExact } from '../../core/exact-json.js';
import { readAcknowledgement, type AcknowledgementVerdict } from '../../wire/acknowledgement.js';
import { isNode } from '../../spec/document.js';
import type { SpecOperationView } from '../../spec/endpoints.js';
import type { DocsContext } from './docs-context.js';
import { headerRows } from './endpoint-page.js';
import { exampleBlock, sealedWith } from './examples.js';
import { union } from './lists.js';
import {
  boldText,
  badge,
  codeText,
  heading,
  join,
  link,
  para,
  paragraphs,
  prose,
  plainText,
  type Block,
  type Page,
  type Row,
} from './model.js';
import { ruleLinks } from './rule-cells.js';
import { fieldTable } from './schema-tables.js';
import { objectView, type FieldRow, type ObjectView } from './schema-view.js';
import type { CallbackType } from './site-map.js';
import { located, unspecifiedTable, type UnspecifiedPoint } from './unspecified.js';

/** How the page titles an answer example, by the one reading of an acknowledgement (CB-ERRCODE). */
const EXAMPLE_READING: Record<AcknowledgementVerdict, string> = {
  acknowledged: 'acknowledged',
  ambiguous: 'ambiguous (U-CB-RESPONSE)',
  'not-acknowledged': 'not acknowledged (retried)',
};

/** The idempotency key of one callback type, from the spec: its CB-ID-* rule and the fields that carry it. */
interface IdempotencyKeyInfo {
  rule: string;
  fields: FieldRow[];
}

/**
 * The key rule is the CB-ID-* rule of the type's schema; the key fields are the payload fields
 * that cite the same rule (CB-UUID: requestUUID never does).
 */
export function idempotencyOf(view: ObjectView): IdempotencyKeyInfo | undefined {
  const rule = view.rules.find((id) => id.startsWith('CB-ID-'));
  if (!rule) return undefined;
  return { rule, fields: view.fields.filter((field) => field.depth === 0 && field.rules.includes(rule)) };
}

/** The key fields in words: `txid`, `chain`, … with optional ones marked. */
export function keyFieldsText(info: IdempotencyKeyInfo): string {
  return info.fields.map((field) => (field.required ? field.path : `${field.path} (when present)`)).join(', ');
}

/** One page per callback type: delivery, payload fields, idempotency key, examples, the merchant's answer. */
export function callbackPage(ctx: DocsContext, callback: CallbackType): Page {
  const op = callback.operation;
  const view = objectView(ctx.model.flatten(callback.schemaName));
  const idempotency = idempotencyOf(view);
  const unspecified = [
    ...located(op.unspecified, `callback ${callback.webhook}`),
    ...view.unspecified,
    ...view.fields.flatMap((field) => field.unspecified),
  ];
  const headers = headerRows(op);
  const blocks: Block[] = [
    ...deliverySection(ctx, callback, view, headers, unspecified),
    ...idempotencySection(ctx, idempotency),
    ...examplesSection(ctx, callback, view, headers),
    ...answerBlocks(ctx, op, unspecified),
    heading(2, 'unspecified', 'Unspecified points'),
    unspecifiedTable(ctx, unspecified),
  ];
  return {
    id: callback.pageId,
    title: `Callback type ${callback.type}: ${callback.label}`,
    nav: `${callback.type} ${callback.label}`,
    group: 'callbacks',
    blocks,
  };
}

/** The delivery: where it goes, its headers, the encrypted body and the plain payload's fields. */
function deliverySection(
  ctx: DocsContext,
  callback: CallbackType,
  view: ObjectView,
  headers: ReturnType<typeof headerRows>,
  unspecified: UnspecifiedPoint[],
): Block[] {
  const op = callback.operation;
  const keyFields = new Set(idempotencyOf(view)?.fields.map((field) => field.path) ?? []);
  const bodySchema = op.requestBody?.media[0]?.schema;
  const body = bodySchema ? objectView(bodySchema) : undefined;
  if (body) unspecified.push(...body.unspecified);
  const others = ctx.callbacks.filter((other) => other.type !== callback.type);
  return [
    para(
      badge('plain', 'POST'),
      plainText(' '),
      codeText("the merchant's callback URL"),
      plainText(` (configured with the platform; webhook `),
      codeText(callback.webhook),
      plainText(')'),
    ),
    para(boldText(`Callback type ${callback.type}: ${callback.label}. `), ...prose(view.description, ctx.ruleIds)),
    ...paragraphs(op.description ?? '', ctx.ruleIds),
    para(
      plainText('Rules of the delivery: '),
      ...ruleLinks(op.rules),
      plainText('. Rules of this type: '),
      ...ruleLinks(view.rules),
    ),
    para(
      plainText('Other callback types: '),
      ...join(others.map((other) => [link(other.pageId, `${other.type} ${other.label}`)])),
    ),
    heading(2, 'request', 'Delivery'),
    heading(3, 'request-headers', 'Headers'),
    {
      kind: 'table',
      id: 'request-headers-table',
      columns: ['header', 'required', 'type', 'rules', 'description', 'example'],
      rows: headers.map((header) => ({
        cells: [
          [codeText(header.name)],
          [plainText(header.required ? 'yes' : 'no')],
          [plainText(header.type)],
          ruleLinks(header.rules),
          prose(header.description, ctx.ruleIds),
          header.example ? [codeText(header.example)] : [],
        ],
      })),
    },
    heading(3, 'request-body', 'Body'),
    para(
      badge('encrypted', 'encrypted'),
      plainText(' The raw body is '),
      codeText(body?.name ?? 'Base64'),
      plainText(': '),
      ...prose(bodySchema?.description ?? '', ctx.ruleIds),
      plainText(' Pattern '),
      codeText(bodySchema?.pattern ?? ''),
      plainText('. Rules: '),
      ...ruleLinks(union(bodySchema?.ownRules ?? [], op.requestBody?.rules ?? [])),
    ),
    heading(3, 'payload', `Payload fields (plain, after decryption): ${callback.schemaName}`),
    fieldTable(ctx, view, { id: 'payload-fields', keyFields }),
  ];
}

/** The type's idempotency key: its CB-ID-* rule and the fields that carry it. */
function idempotencySection(ctx: DocsContext, idempotency: IdempotencyKeyInfo | undefined): Block[] {
  const title = heading(2, 'idempotency', 'Idempotency key');
  if (!idempotency)
    return [
      title,
      { kind: 'note', tone: 'info', text: [plainText('The spec names no idempotency rule for this type.')] },
    ];
  return [
    title,
    para(
      plainText('Rule '),
      ...ruleLinks([idempotency.rule]),
      plainText(': '),
      ...prose(ctx.ruleById.get(idempotency.rule)?.text ?? '', ctx.ruleIds),
    ),
    para(
      plainText('Key fields: '),
      ...join(
        idempotency.fields.map((field) => [
          codeText(field.path),
          ...(field.required ? [] : [plainText(' (when present)')]),
        ]),
      ),
      plainText('. '),
      codeText('requestUUID'),
      plainText(' is never part of a key: it is new on every delivery ('),
      ...ruleLinks(['CB-UUID']),
      plainText('). All types: '),
      link('idempotency', 'the idempotency table'),
      plainText('.'),
    ),
  ];
}

/** Each example payload sealed as the service sends it, with the reference merchant's key for it. */
function examplesSection(
  ctx: DocsContext,
  callback: CallbackType,
  view: ObjectView,
  headers: ReturnType<typeof headerRows>,
): Block[] {
  const blocks: Block[] = [
    heading(2, 'examples', 'Examples'),
    para(
      plainText('The plain payload and the raw body the service sends, '),
      ...sealedWith(ctx, 'callback', ctx.demo.profile.callback),
      plainText('. The merchant decrypts it with the other half.'),
    ),
  ];
  view.examples.forEach((example, i) => {
    blocks.push(
      exampleBlock(
        ctx,
        callback.pageId,
        `example-${i + 1}`,
        [plainText(`Type ${callback.type} example ${i + 1}`)],
        example,
        'callback',
        (cipher) => [
          {
            label: [plainText('raw body on the wire (Base64; not a form field '), codeText('data='), plainText(')')],
            text: cipher,
            cipher: true,
          },
          { label: [plainText('the delivery')], text: deliveryText(headers) },
        ],
      ),
    );
    const keyFn = ctx.options.idempotencyKey;
    if (keyFn && isNode(example)) {
      let key: string;
      try {
        key = keyFn(example);
      } catch (error) {
        key = `(no key: ${(error as Error).message})`;
      }
      blocks.push(para(plainText("The reference merchant's idempotency key for this example: "), codeText(key)));
    }
  });
  return blocks;
}

function deliveryText(headers: ReturnType<typeof headerRows>): string {
  const lines = ["POST <the merchant's callback path> HTTP/1.1"];
  for (const header of headers) lines.push(`${header.name}: ${header.example ?? '…'}`);
  return `${lines.join('\n')}\n\n<the Base64 text, as the whole body>`;
}

/** The merchant's answer: statuses, the answer fields, examples; shared with the error tables. */
export function answerBlocks(ctx: DocsContext, op: SpecOperationView, unspecified: UnspecifiedPoint[]): Block[] {
  const rows: Row[] = [];
  let answer: ObjectView | undefined;
  for (const response of op.responses) {
    const schema = response.media[0]?.schema;
    const view = schema ? objectView(schema) : undefined;
    answer ??= view;
    rows.push({
      id: `answer-${response.status}`,
      cells: [
        [codeText(`HTTP ${response.status}`)],
        prose(response.description ?? '', ctx.ruleIds),
        ruleLinks(response.rules),
      ],
    });
  }
  if (answer) unspecified.push(...answer.unspecified, ...answer.fields.flatMap((field) => field.unspecified));
  return [
    heading(2, 'answer', "The merchant's answer"),
    { kind: 'table', id: 'answer-table', columns: ['answer', 'meaning', 'rules'], rows },
    ...(answer
      ? [
          ...paragraphs(answer.description, ctx.ruleIds),
          fieldTable(ctx, answer, { id: 'answer-fields' }),
          ...answer.examples.map((example, i): Block => ({
            kind: 'code',
            title: [
              plainText(
                `Answer example ${i + 1}: ${EXAMPLE_READING[readAcknowledgement({ status: 200, body: stringifyExact(example) }).verdict]}`,
              ),
            ],
            language: 'json',
            text: stringifyExact(example, 2),
          })),
        ]
      : []),
  ];
}
