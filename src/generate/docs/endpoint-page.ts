import { stringifyExact } from '../../core/exact-json.js';
import type { Direction } from '../../core/profile.js';
import { isNode, literal } from '../../spec/document.js';
import type { SpecMedia, SpecOperationView } from '../../spec/endpoints.js';
import type { FlatSchema } from '../../spec/flatten.js';
import type { DocsContext } from './docs-context.js';
import { exampleBlock, sealedWith } from './examples.js';
import { union } from './lists.js';
import {
  badge,
  codeText,
  heading,
  link,
  para,
  paragraphs,
  prose,
  plainText,
  type Block,
  type Page,
  type Panel,
  type Row,
  type Text,
} from './model.js';
import { ruleLinks } from './rule-cells.js';
import { conditionTable, fieldTable } from './schema-tables.js';
import { objectView, typeText, type Condition, type FieldRow, type ObjectView } from './schema-view.js';
import type { Endpoint } from './site-map.js';
import { located, unspecifiedTable, type UnspecifiedPoint } from './unspecified.js';

/** A header the request carries: from parameters, plus Content-Type from the body. */
interface HeaderRow {
  name: string;
  required: boolean;
  type: string;
  description: string;
  rules: string[];
  example?: string;
}

/** One page per endpoint: request (headers, body, plain fields, examples), responses, errors, unspecified points. */
export function endpointPage(ctx: DocsContext, endpoint: Endpoint): Page {
  const op = endpoint.operation;
  const unspecified: UnspecifiedPoint[] = [...located(op.unspecified, `${endpoint.method} ${endpoint.path}`)];
  const blocks: Block[] = [
    para(badge('plain', endpoint.method), plainText(' '), codeText(`${endpoint.server}${endpoint.path}`)),
    ...(op.summary ? [para(plainText(op.summary))] : []),
    ...paragraphs(op.description ?? '', ctx.ruleIds),
    para(plainText('Rules of the operation: '), ...ruleLinks(op.rules)),
    ...requestSection(ctx, endpoint, unspecified),
  ];
  const responses = responsesSection(ctx, endpoint, unspecified);
  blocks.push(
    ...responses.blocks,
    heading(2, 'errors', 'Errors'),
    para(
      plainText('HTTP errors carry a fixed JSON body, exactly as shown. All error tables of the interface: '),
      link('errors', 'Error tables'),
      plainText('.'),
    ),
    {
      kind: 'table',
      id: 'error-table',
      columns: ['status', 'meaning', 'body (exact)', 'rules'],
      rows: responses.errorRows,
      empty: 'no HTTP errors declared',
    },
    ...businessFailures(ctx, op),
    heading(2, 'unspecified', 'Unspecified points'),
    para(plainText('What the interface leaves open here, and what the toolkit assumes:')),
    unspecifiedTable(ctx, unspecified),
  );
  return {
    id: endpoint.pageId,
    title: `${endpoint.operationId}: ${op.summary ?? endpoint.path}`,
    nav: endpoint.operationId,
    group: 'endpoints',
    blocks,
  };
}

/** The request: its headers, then its body (fields, plain form, examples) when it has one. */
function requestSection(ctx: DocsContext, endpoint: Endpoint, unspecified: UnspecifiedPoint[]): Block[] {
  const op = endpoint.operation;
  const blocks: Block[] = [heading(2, 'request', 'Request')];
  const headers = headerRows(op);
  if (op.declaresSecurity && op.security.length === 0)
    blocks.push({
      kind: 'note',
      tone: 'info',
      text: [
        plainText(
          'This endpoint declares no authentication; the toolkit sends none (see the unspecified points below).',
        ),
      ],
    });
  blocks.push(heading(3, 'request-headers', 'Headers'), {
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
  });
  const body = op.requestBody;
  const media = body?.media[0];
  if (!body || !media) return blocks;
  const view = objectView(media.schema);
  unspecified.push(...view.unspecified, ...view.fields.flatMap((field) => field.unspecified));
  blocks.push(
    heading(3, 'request-body', 'Body'),
    para(
      plainText('Content-Type '),
      codeText(media.mediaType),
      plainText(`; ${body.required ? 'required' : 'optional'}. Schema `),
      codeText(view.name),
      plainText('. Rules: '),
      ...ruleLinks(union(body.rules, media.rules, view.rules)),
    ),
    ...paragraphs(view.description, ctx.ruleIds),
    fieldTable(ctx, view, { id: 'request-fields', plainLink: (name) => [link('', [codeText(name)], 'request-plain')] }),
    ...conditionTable(ctx, view.conditions),
  );
  const encrypted = encryptedOf(media);
  if (encrypted) {
    blocks.push(...encryptedRequest(ctx, endpoint, media.mediaType, headers, encrypted, unspecified));
    return blocks;
  }
  blocks.push(heading(3, 'request-examples', 'Examples'), {
    kind: 'note',
    tone: 'info',
    text: [plainText('This body is plain JSON: it is not encrypted.')],
  });
  view.examples.forEach((example, i) => {
    blocks.push({
      kind: 'code',
      title: [plainText(`Request example ${i + 1} (on the wire)`)],
      language: 'http',
      text: wireRequest(endpoint, media.mediaType, headers, stringifyExact(example, 2)),
    });
  });
  return blocks;
}

/** The plain form of an encrypted request field and its examples, sealed and as sent. */
function encryptedRequest(
  ctx: DocsContext,
  endpoint: Endpoint,
  mediaType: string,
  headers: HeaderRow[],
  encrypted: EncryptedField,
  unspecified: UnspecifiedPoint[],
): Block[] {
  const plain = objectView(encrypted.plain);
  unspecified.push(...plain.unspecified, ...plain.fields.flatMap((field) => field.unspecified));
  const blocks: Block[] = [
    heading(3, 'request-plain', [
      plainText('Plain '),
      codeText(encrypted.field),
      plainText(` (before encryption): ${plain.name}`),
    ]),
    ...paragraphs(plain.description, ctx.ruleIds),
    para(plainText('Rules: '), ...ruleLinks(plain.rules)),
    fieldTable(ctx, plain, { id: 'request-plain-fields' }),
    ...conditionTable(ctx, plain.conditions, 'request-conditions'),
    heading(3, 'request-examples', 'Examples'),
    para(
      plainText(`Each example is the real plain JSON and the same JSON `),
      ...sealedWith(ctx, encrypted.direction, ctx.demo.profile[encrypted.direction]),
      plainText('. The form body on the wire percent-encodes the Base64 ('),
      codeText('+'),
      plainText(' → '),
      codeText('%2B'),
      plainText(').'),
    ),
  ];
  plain.examples.forEach((example, i) => {
    blocks.push(
      exampleBlock(
        ctx,
        endpoint.pageId,
        `request-example-${i + 1}`,
        [plainText(`Request example ${i + 1}`), ...exampleHint(example)],
        example,
        encrypted.direction,
        (cipher) => [
          {
            label: [plainText('form field '), codeText(encrypted.field), plainText(' (Base64)')],
            text: cipher,
            cipher: true,
          },
          {
            label: [plainText('the request on the wire')],
            text: wireRequest(endpoint, mediaType, headers, `${encrypted.field}=${encodeURIComponent(cipher)}`),
          },
        ],
      ),
    );
  });
  return blocks;
}

/** The responses: a section per success status, the status table, and the rows of the error table. */
function responsesSection(
  ctx: DocsContext,
  endpoint: Endpoint,
  unspecified: UnspecifiedPoint[],
): { blocks: Block[]; errorRows: Row[] } {
  const blocks: Block[] = [heading(2, 'responses', 'Responses')];
  const errorRows: Row[] = [];
  const statusRows: Row[] = [];
  for (const response of endpoint.operation.responses) {
    const { status } = response;
    const media = response.media[0];
    const view = media ? objectView(media.schema) : undefined;
    const rules = ruleLinks(union(response.rules, view?.rules ?? []));
    statusRows.push({
      cells: [
        [codeText(status)],
        prose(response.description ?? '', ctx.ruleIds),
        view ? [codeText(view.name)] : [],
        rules,
      ],
    });
    if (view) unspecified.push(...view.unspecified, ...view.fields.flatMap((field) => field.unspecified));
    if (!status.startsWith('2')) {
      const example = view?.examples[0];
      errorRows.push({
        id: `error-${status}`,
        cells: [
          [codeText(`HTTP ${status}`)],
          prose(response.description ?? response.component ?? '', ctx.ruleIds),
          example === undefined ? [plainText('(no body)')] : [codeText(stringifyExact(example))],
          ruleLinks(union(response.rules, view?.rules ?? [])),
        ],
      });
      continue;
    }
    if (!view || !media) continue;
    blocks.push(
      heading(3, `response-${status}`, `HTTP ${status}`),
      ...paragraphs(response.description ?? '', ctx.ruleIds),
      para(
        plainText('Schema '),
        codeText(view.name),
        plainText('. Rules: '),
        ...ruleLinks(union(response.rules, view.rules)),
      ),
      ...paragraphs(view.description, ctx.ruleIds),
      fieldTable(ctx, view, {
        id: `response-${status}-fields`,
        plainLink: (plainName) => [link('', [codeText(plainName)], `response-${status}-plain`)],
      }),
      ...conditionTable(ctx, view.conditions, `response-${status}-conditions`),
      ...responseBody(ctx, endpoint, status, media, unspecified),
    );
  }
  blocks.push({
    kind: 'table',
    id: 'status-table',
    columns: ['status', 'meaning', 'schema', 'rules'],
    rows: statusRows,
  });
  return { blocks, errorRows };
}

/** Headers of an operation: Content-Type from its body, then header parameters. */
export function headerRows(op: SpecOperationView): HeaderRow[] {
  const rows: HeaderRow[] = op.parameters
    .filter((parameter) => parameter.in === 'header')
    .map((parameter) => ({
      name: parameter.name,
      required: parameter.required,
      type: typeText(parameter.schema),
      description: parameter.description ?? '',
      rules: parameter.rules,
      ...(parameter.example === undefined ? {} : { example: literal(parameter.example) }),
    }));
  const media = op.requestBody?.media[0];
  if (op.requestBody && media) {
    rows.unshift({
      name: 'Content-Type',
      required: true,
      type: 'string',
      description: `Exactly \`${media.mediaType}\`.`,
      rules: union(media.rules, op.requestBody.rules),
      example: media.mediaType,
    });
  }
  return rows;
}

/** An encrypted field of a body: its name, the direction it is sealed in and its plain schema. */
interface EncryptedField {
  field: string;
  direction: Direction;
  plain: FlatSchema;
}

/** The encrypted field of a body and its plain schema, when the body has one that names it. */
function encryptedOf(media: SpecMedia): EncryptedField | undefined {
  const encrypted = media.encrypted;
  if (!encrypted?.field || !encrypted.plain) return undefined;
  return { field: encrypted.field, direction: encrypted.marker.direction as Direction, plain: encrypted.plain };
}

/** The plain form of an encrypted response field, its examples sealed into the envelope. */
function responseBody(
  ctx: DocsContext,
  endpoint: Endpoint,
  status: string,
  media: SpecMedia,
  unspecified: UnspecifiedPoint[],
): Block[] {
  const blocks: Block[] = [];
  const encrypted = encryptedOf(media);
  const envelopeExamples = examplesWithInherited(media.schema);
  if (encrypted) {
    const plain = objectView(encrypted.plain);
    unspecified.push(...plain.unspecified, ...plain.fields.flatMap((field) => field.unspecified));
    blocks.push(
      heading(4, `response-${status}-plain`, [
        plainText('Decrypted '),
        codeText(encrypted.field),
        plainText(`: ${plain.name}`),
      ]),
      ...paragraphs(plain.description, ctx.ruleIds),
      para(plainText('Rules: '), ...ruleLinks(plain.rules)),
      fieldTable(ctx, plain, { id: `response-${status}-plain-fields` }),
      ...conditionTable(ctx, plain.conditions),
      heading(4, `response-${status}-examples`, 'Examples'),
      para(
        plainText('The plain result and the envelope that carries it, '),
        ...sealedWith(ctx, encrypted.direction, ctx.demo.profile[encrypted.direction]),
        plainText('.'),
      ),
    );
    const success = envelopeExamples.find((example) => isNode(example) && literal(example.code) === '0');
    plain.examples.forEach((example, i) => {
      blocks.push(
        exampleBlock(
          ctx,
          endpoint.pageId,
          `response-${status}-example-${i + 1}`,
          [plainText(`Response example ${i + 1}`)],
          example,
          encrypted.direction,
          (cipher): Panel[] => [
            {
              label: [plainText('envelope on the wire (HTTP '), codeText(status), plainText(', application/json)')],
              text: stringifyExact(
                { ...(isNode(success) ? success : { code: 0, message: '' }), [encrypted.field]: cipher },
                2,
              ),
            },
          ],
        ),
      );
    });
    return blocks;
  }
  blocks.push(heading(4, `response-${status}-examples`, 'Examples'), {
    kind: 'note',
    tone: 'info',
    text: [plainText('This body is plain JSON: it is not encrypted.')],
  });
  envelopeExamples.forEach((example, i) =>
    blocks.push({
      kind: 'code',
      title: [plainText(`Response example ${i + 1}${exampleOutcome(example)}`)],
      language: 'json',
      text: stringifyExact(example, 2),
    }),
  );
  return blocks;
}

/** Examples of a schema and of the schemas it inherits (its parts), own first. */
function examplesWithInherited(schema: FlatSchema): unknown[] {
  const seen = new Set<string>();
  return [...schema.examples, ...schema.parts.flatMap((part) => part.examples)].filter((example) => {
    const key = stringifyExact(example);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function exampleOutcome(example: unknown): string {
  if (!isNode(example)) return '';
  if (example.success === true) return ': success';
  if (example.success === false) return ': failure';
  return '';
}

function exampleHint(example: unknown): Text {
  return isNode(example) && typeof example.symbol === 'string'
    ? [plainText(': '), codeText(`symbol ${example.symbol}`)]
    : [];
}

/**
 * Failures inside a 200 body: the envelope's non-zero code (U-CODES) or a body with `success:
 * false` (card close), with the failure examples of the spec.
 */
export function businessFailures(ctx: DocsContext, op: SpecOperationView): Block[] {
  const schema = op.responses.find((response) => response.status === '200')?.media[0]?.schema;
  if (!schema) return [];
  const view = objectView(schema);
  const examples = examplesWithInherited(schema);
  const codeField = view.fields.find(
    (field) => field.path === 'code' && field.unspecified.some((point) => point.rule === 'U-CODES'),
  );
  if (codeField) return envelopeFailures(ctx, view, codeField, examples);
  const failure = view.conditions.find((condition) => /= false$/.test(condition.when));
  if (!failure) return [];
  return cardFailures(ctx, view, failure, examples);
}

/** An envelope's failure: a non-zero code, whose values the interface leaves open (U-CODES). */
function envelopeFailures(ctx: DocsContext, view: ObjectView, codeField: FieldRow, examples: unknown[]): Block[] {
  const failures = examples.filter((example) => isNode(example) && literal(example.code) !== '0');
  return [
    heading(3, 'business-failures', 'Business failures (HTTP 200, code ≠ 0)'),
    para(
      plainText('A failure is HTTP 200 with the envelope: '),
      codeText('code'),
      plainText(' not 0, '),
      codeText('message'),
      plainText(' the error text, and no result in '),
      codeText('data'),
      plainText(' (empty, null or absent). Rules: '),
      ...ruleLinks(union(...view.fields.map((field) => field.rules))),
    ),
    ...codeField.unspecified.map((point) => ({
      kind: 'note' as const,
      tone: 'unspecified' as const,
      text: [
        badge('unspecified', 'unspecified'),
        plainText(' '),
        link('rules', [codeText(point.rule)], `rule-${point.rule}`),
        plainText(': '),
        ...prose(point.note, ctx.ruleIds),
        plainText(" The emulator's codes: "),
        link('errors', 'business codes', 'business-codes'),
        plainText('.'),
      ],
    })),
    ...failures.map((example, i) => ({
      kind: 'code' as const,
      title: [plainText(`Failure example ${i + 1} (plain JSON, nothing encrypted)`)],
      language: 'json' as const,
      text: stringifyExact(example, 2),
    })),
  ];
}

/** A body with `success: false` (card close): the fields a failure fills, its examples and the emulator's codes. */
function cardFailures(ctx: DocsContext, view: ObjectView, failure: Condition, examples: unknown[]): Block[] {
  const fields = view.fields.filter((field) => field.rules.some((rule) => failure.rules.includes(rule)));
  const failureExamples = examples.filter((example) => isNode(example) && example.success === false);
  return [
    heading(3, 'failure-fields', 'Failure fields'),
    para(
      plainText('A failure is HTTP 200 with '),
      codeText(failure.when),
      plainText(' and every field below filled. Rules: '),
      ...ruleLinks(failure.rules),
    ),
    {
      kind: 'table',
      id: 'failure-fields-table',
      columns: ['field', 'type', 'on failure', 'rules'],
      rows: fields.map((field) => ({
        cells: [
          [codeText(field.path)],
          [plainText(field.type)],
          prose(
            failure.then.find((effect) => effect.startsWith(`${field.path}:`))?.slice(field.path.length + 2) ??
              'present',
            ctx.ruleIds,
          ),
          ruleLinks(field.rules),
        ],
      })),
    },
    ...failureExamples.map((example, i) => ({
      kind: 'code' as const,
      title: [plainText(`Failure example ${i + 1}`)],
      language: 'json' as const,
      text: stringifyExact(example, 2),
    })),
    ...cardErrorCodes(ctx),
  ];
}

/** The emulator's card errorCodes, marked as its own: the interface names none (U-CODES). */
function cardErrorCodes(ctx: DocsContext): Block[] {
  const codes = ctx.options.cardErrors ?? [];
  if (codes.length === 0) return [];
  return [
    {
      kind: 'note',
      tone: 'unspecified',
      text: [
        badge('unspecified', 'unspecified'),
        plainText(' '),
        link('rules', [codeText('U-CODES')], 'rule-U-CODES'),
        plainText(": the interface names no errorCode values; these are the emulator's."),
      ],
    },
    {
      kind: 'table',
      id: 'card-error-codes',
      columns: ['errorCode', 'errorMessage', 'errorMessageEn'],
      rows: codes.map((code) => ({
        tone: 'unspecified' as const,
        cells: [[codeText(code.errorCode)], [plainText(code.errorMessage)], [plainText(code.errorMessageEn)]],
      })),
    },
  ];
}

function wireRequest(endpoint: Endpoint, mediaType: string, headers: HeaderRow[], body: string): string {
  const lines = [`${endpoint.method} ${endpoint.path} HTTP/1.1`];
  for (const header of headers) {
    if (header.name === 'Content-Type') lines.push(`Content-Type: ${mediaType}`);
    else if (header.example) lines.push(`${header.name}: ${header.example}`);
  }
  return `${lines.join('\n')}\n\n${body}`;
}
