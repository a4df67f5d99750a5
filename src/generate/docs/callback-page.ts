import { stringifyExact } from '../../core/exact-json.js';
import { exampleBlock, fieldTable, requestSchema, ruleLinks, sealedWith, unspecifiedTable, type CallbackType, type DocsContext } from './context.js';
import { headerRows } from './endpoint-page.js';
import { b, badge, c, heading, join, link, para, paragraphs, prose, t, type Block, type Page, type Row } from './model.js';
import { isNode, literal, rulesOf, type Node } from '../../spec/document.js';
import { union, unspecifiedOf, type FieldRow, type ObjectView } from './schema-view.js';

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
  const { spec } = ctx;
  const op = callback.operation;
  const page = callback.pageId;
  const view = spec.objectView({ $ref: `#/components/schemas/${callback.schemaName}` });
  const idempotency = idempotencyOf(view);
  const keyFields = new Set(idempotency?.fields.map((field) => field.path) ?? []);
  const unspecified = [...unspecifiedOf(op, `callback ${callback.webhook}`), ...view.unspecified, ...view.fields.flatMap((field) => field.unspecified)];
  const headers = headerRows(ctx, op);
  const bodySchema = requestSchema(spec, op);
  const body = bodySchema ? spec.objectView(bodySchema) : undefined;
  const bodyNode = bodySchema ? spec.resolve(bodySchema).node : undefined;
  if (body) unspecified.push(...body.unspecified);
  const others = ctx.callbacks.filter((other) => other.type !== callback.type);

  const blocks: Block[] = [
    para(badge('plain', 'POST'), t(' '), c("the merchant's callback URL"), t(` (configured with the platform; webhook `), c(callback.webhook), t(')')),
    para(b(`Callback type ${callback.type}: ${callback.label}. `), ...prose(view.description, ctx.ruleIds)),
    ...paragraphs(String(op.description ?? ''), ctx.ruleIds),
    para(t('Rules of the delivery: '), ...ruleLinks(rulesOf(op)), t('. Rules of this type: '), ...ruleLinks(view.rules)),
    para(t('Other callback types: '), ...join(others.map((other) => [link(other.pageId, `${other.type} ${other.label}`)]))),
    heading(2, 'request', 'Delivery'),
    heading(3, 'request-headers', 'Headers'),
    {
      kind: 'table',
      id: 'request-headers-table',
      columns: ['header', 'required', 'type', 'rules', 'description', 'example'],
      rows: headers.map((header) => ({
        cells: [[c(header.name)], [t(header.required ? 'yes' : 'no')], [t(header.type)], ruleLinks(header.rules), prose(header.description, ctx.ruleIds), header.example ? [c(header.example)] : []],
      })),
    },
    heading(3, 'request-body', 'Body'),
    para(
      badge('encrypted', 'encrypted'),
      t(' The raw body is '),
      c(body?.name ?? 'Base64'),
      t(': '),
      ...prose(String(bodyNode?.description ?? ''), ctx.ruleIds),
      t(' Pattern '),
      c(String(bodyNode?.pattern ?? '')),
      t('. Rules: '),
      ...ruleLinks(union(rulesOf(bodyNode), rulesOf(op.requestBody))),
    ),
    heading(3, 'payload', `Payload fields (plain, after decryption): ${callback.schemaName}`),
    fieldTable(ctx, view, { id: 'payload-fields', keyFields }),
  ];

  blocks.push(heading(2, 'idempotency', 'Idempotency key'));
  if (idempotency) {
    blocks.push(
      para(t('Rule '), ...ruleLinks([idempotency.rule]), t(': '), ...prose(ctx.ruleById.get(idempotency.rule)?.text ?? '', ctx.ruleIds)),
      para(t('Key fields: '), ...join(idempotency.fields.map((field) => [c(field.path), ...(field.required ? [] : [t(' (when present)')])])), t('. '), c('requestUUID'), t(' is never part of a key: it is new on every delivery ('), ...ruleLinks(['CB-UUID']), t('). All types: '), link('idempotency', 'the idempotency table'), t('.')),
    );
  } else {
    blocks.push({ kind: 'note', tone: 'info', text: [t('The spec names no idempotency rule for this type.')] });
  }

  blocks.push(
    heading(2, 'examples', 'Examples'),
    para(t('The plain payload and the raw body the service sends, '), ...sealedWith(ctx, 'callback', ctx.demo.profile.callback), t('. The merchant decrypts it with the other half.')),
  );
  view.examples.forEach((example, i) => {
    blocks.push(
      exampleBlock(ctx, page, `example-${i + 1}`, [t(`Type ${callback.type} example ${i + 1}`)], example, 'callback', (cipher) => [
        { label: [t('raw body on the wire (Base64; not a form field '), c('data='), t(')')], text: cipher, cipher: true },
        { label: [t('the delivery')], text: deliveryText(headers) },
      ]),
    );
    const keyFn = ctx.options.idempotencyKey;
    if (keyFn && isNode(example)) {
      let key: string;
      try {
        key = keyFn(example);
      } catch (error) {
        key = `(no key: ${(error as Error).message})`;
      }
      blocks.push(para(t("The reference merchant's idempotency key for this example: "), c(key)));
    }
  });

  blocks.push(...answerBlocks(ctx, op, unspecified));
  blocks.push(heading(2, 'unspecified', 'Unspecified points'), unspecifiedTable(ctx, unspecified));
  return { id: page, title: `Callback type ${callback.type}: ${callback.label}`, nav: `${callback.type} ${callback.label}`, group: 'callbacks', blocks };
}

function deliveryText(headers: ReturnType<typeof headerRows>): string {
  const lines = ["POST <the merchant's callback path> HTTP/1.1"];
  for (const header of headers) lines.push(`${header.name}: ${header.example ?? '…'}`);
  return `${lines.join('\n')}\n\n<the Base64 text, as the whole body>`;
}

/** The merchant's answer: statuses, the answer fields, examples; shared with the error tables. */
export function answerBlocks(ctx: DocsContext, op: Node, unspecified: ReturnType<typeof unspecifiedOf>): Block[] {
  const rows: Row[] = [];
  let answer: ObjectView | undefined;
  for (const [status, raw] of Object.entries(isNode(op.responses) ? op.responses : {})) {
    const { node: response } = ctx.spec.resolve(raw);
    const media = isNode(response.content) ? Object.values(response.content).find(isNode) : undefined;
    const view = media && isNode(media.schema) ? ctx.spec.objectView(media.schema) : undefined;
    answer ??= view;
    rows.push({ id: `answer-${status}`, cells: [[c(`HTTP ${status}`)], prose(String(response.description ?? ''), ctx.ruleIds), ruleLinks(rulesOf(response))] });
  }
  if (answer) unspecified.push(...answer.unspecified, ...answer.fields.flatMap((field) => field.unspecified));
  return [
    heading(2, 'answer', "The merchant's answer"),
    { kind: 'table', id: 'answer-table', columns: ['answer', 'meaning', 'rules'], rows },
    ...(answer
      ? [
          ...paragraphs(answer.description, ctx.ruleIds),
          fieldTable(ctx, answer, { id: 'answer-fields' }),
          ...answer.examples.map((example, i): Block => ({ kind: 'code', title: [t(`Answer example ${i + 1}${literal(isNode(example) ? example.errCode : '') === '0' ? ': acknowledged' : ': not acknowledged (retried)'}`)], language: 'json', text: stringifyExact(example, 2) })),
        ]
      : []),
  ];
}
