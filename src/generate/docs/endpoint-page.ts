import { stringifyExact } from '../../core/exact-json.js';
import type { Direction } from '../../core/profile.js';
import {
  conditionTable,
  exampleBlock,
  fieldTable,
  requestSchema,
  ruleLinks,
  rulesWithRef,
  sealedWith,
  unspecifiedTable,
  type DocsContext,
  type Endpoint,
} from './context.js';
import { badge, c, heading, link, para, paragraphs, prose, t, type Block, type Page, type Panel, type Row, type Text } from './model.js';
import { isNode, literal, rulesOf, type Node } from '../../spec/document.js';
import { union, unspecifiedOf, type ObjectView, type UnspecifiedPoint } from './schema-view.js';

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
  const { spec } = ctx;
  const op = endpoint.operation;
  const page = endpoint.pageId;
  const unspecified: UnspecifiedPoint[] = [...unspecifiedOf(op, `${endpoint.method} ${endpoint.path}`)];
  const blocks: Block[] = [
    para(badge('plain', endpoint.method), t(' '), c(`${endpoint.server}${endpoint.path}`)),
    ...(op.summary ? [para(t(String(op.summary)))] : []),
    ...paragraphs(String(op.description ?? ''), ctx.ruleIds),
    para(t('Rules of the operation: '), ...ruleLinks(rulesOf(op))),
  ];

  // Request
  blocks.push(heading(2, 'request', 'Request'));
  const headers = headerRows(ctx, op);
  const security = Array.isArray(op.security) ? op.security : undefined;
  if (security && security.length === 0) blocks.push({ kind: 'note', tone: 'info', text: [t('This endpoint declares no authentication; the toolkit sends none (see the unspecified points below).')] });
  blocks.push(heading(3, 'request-headers', 'Headers'), {
    kind: 'table',
    id: 'request-headers-table',
    columns: ['header', 'required', 'type', 'rules', 'description', 'example'],
    rows: headers.map((header) => ({
      cells: [[c(header.name)], [t(header.required ? 'yes' : 'no')], [t(header.type)], ruleLinks(header.rules), prose(header.description, ctx.ruleIds), header.example ? [c(header.example)] : []],
    })),
  });
  const bodySchema = requestSchema(spec, op);
  if (bodySchema) {
    const body = spec.resolve(op.requestBody).node;
    const mediaType = isNode(body.content) ? Object.keys(body.content)[0] ?? '' : '';
    const view = spec.objectView(bodySchema);
    unspecified.push(...view.unspecified, ...view.fields.flatMap((field) => field.unspecified));
    blocks.push(
      heading(3, 'request-body', 'Body'),
      para(t('Content-Type '), c(mediaType), t(`; ${body.required === true ? 'required' : 'optional'}. Schema `), c(view.name), t('. Rules: '), ...ruleLinks(union(rulesOf(body), rulesOf(isNode(body.content) ? body.content[mediaType] : undefined), view.rules))),
      ...paragraphs(view.description, ctx.ruleIds),
      fieldTable(ctx, view, { id: 'request-fields', plainLink: (name) => [link('', [c(name)], 'request-plain')] }),
      ...conditionTable(ctx, view.conditions),
    );
    const encrypted = view.fields.find((field) => field.encrypted);
    const marker = encrypted ? encryptedMarker(ctx, bodySchema, encrypted.path) : undefined;
    if (encrypted && marker) {
      const plain = spec.objectView(marker.plaintext);
      unspecified.push(...plain.unspecified, ...plain.fields.flatMap((field) => field.unspecified));
      blocks.push(
        heading(3, 'request-plain', [t('Plain '), c(encrypted.path), t(` (before encryption): ${plain.name}`)]),
        ...paragraphs(plain.description, ctx.ruleIds),
        para(t('Rules: '), ...ruleLinks(plain.rules)),
        fieldTable(ctx, plain, { id: 'request-plain-fields' }),
        ...conditionTable(ctx, plain.conditions, 'request-conditions'),
        heading(3, 'request-examples', 'Examples'),
        para(t(`Each example is the real plain JSON and the same JSON `), ...sealedWith(ctx, marker.direction, ctx.demo.profile[marker.direction]), t('. The form body on the wire percent-encodes the Base64 ('), c('+'), t(' → '), c('%2B'), t(').')),
      );
      plain.examples.forEach((example, i) => {
        blocks.push(
          exampleBlock(ctx, page, `request-example-${i + 1}`, [t(`Request example ${i + 1}`), ...exampleHint(example)], example, marker.direction, (cipher) => [
            { label: [t('form field '), c(encrypted.path), t(' (Base64)')], text: cipher, cipher: true },
            { label: [t('the request on the wire')], text: wireRequest(endpoint, mediaType, headers, `${encrypted.path}=${encodeURIComponent(cipher)}`) },
          ]),
        );
      });
    } else {
      blocks.push(heading(3, 'request-examples', 'Examples'), { kind: 'note', tone: 'info', text: [t('This body is plain JSON: it is not encrypted.')] });
      view.examples.forEach((example, i) => {
        blocks.push({ kind: 'code', title: [t(`Request example ${i + 1} (on the wire)`)], language: 'http', text: wireRequest(endpoint, mediaType, headers, stringifyExact(example, 2)) });
      });
    }
  }

  // Responses
  blocks.push(heading(2, 'responses', 'Responses'));
  const responses = isNode(op.responses) ? Object.entries(op.responses) : [];
  const errorRows: Row[] = [];
  const statusRows: Row[] = [];
  for (const [status, raw] of responses) {
    const { node: response, name } = spec.resolve(raw);
    const rules = union(rulesOf(raw), rulesOf(response));
    const schema = responseSchema(response);
    const view = schema ? spec.objectView(schema) : undefined;
    statusRows.push({ cells: [[c(status)], prose(String(response.description ?? ''), ctx.ruleIds), view ? [c(view.name)] : [], ruleLinks(union(rules, view?.rules ?? []))] });
    if (view) unspecified.push(...view.unspecified, ...view.fields.flatMap((field) => field.unspecified));
    if (!status.startsWith('2')) {
      const example = view?.examples[0];
      errorRows.push({
        id: `error-${status}`,
        cells: [[c(`HTTP ${status}`)], prose(String(response.description ?? name ?? ''), ctx.ruleIds), example === undefined ? [t('(no body)')] : [c(stringifyExact(example))], ruleLinks(union(rules, view?.rules ?? []))],
      });
      continue;
    }
    if (!view || !schema) continue;
    blocks.push(
      heading(3, `response-${status}`, `HTTP ${status}`),
      ...paragraphs(String(response.description ?? ''), ctx.ruleIds),
      para(t('Schema '), c(view.name), t('. Rules: '), ...ruleLinks(union(rules, view.rules))),
      ...paragraphs(view.description, ctx.ruleIds),
      fieldTable(ctx, view, { id: `response-${status}-fields`, plainLink: (plainName) => [link('', [c(plainName)], `response-${status}-plain`)] }),
      ...conditionTable(ctx, view.conditions, `response-${status}-conditions`),
    );
    blocks.push(...responseBody(ctx, endpoint, status, schema, view, unspecified));
  }
  blocks.push({ kind: 'table', id: 'status-table', columns: ['status', 'meaning', 'schema', 'rules'], rows: statusRows });

  // Errors
  blocks.push(
    heading(2, 'errors', 'Errors'),
    para(t('HTTP errors carry a fixed JSON body, exactly as shown. All error tables of the interface: '), link('errors', 'Error tables'), t('.')),
    { kind: 'table', id: 'error-table', columns: ['status', 'meaning', 'body (exact)', 'rules'], rows: errorRows, empty: 'no HTTP errors declared' },
  );
  blocks.push(...businessFailures(ctx, op));

  // Unspecified
  blocks.push(heading(2, 'unspecified', 'Unspecified points'), para(t('What the interface leaves open here, and what the toolkit assumes:')), unspecifiedTable(ctx, unspecified));
  return { id: page, title: `${endpoint.operationId}: ${String(op.summary ?? endpoint.path)}`, nav: endpoint.operationId, group: 'endpoints', blocks };
}

/** Headers of an operation: Content-Type from its body, then header parameters. */
export function headerRows(ctx: DocsContext, op: Node): HeaderRow[] {
  const rows: HeaderRow[] = [];
  for (const raw of Array.isArray(op.parameters) ? op.parameters : []) {
    const parameter = ctx.spec.resolve(raw).node;
    if (parameter.in !== 'header') continue;
    rows.push({
      name: String(parameter.name),
      required: parameter.required === true,
      type: ctx.spec.typeText(parameter.schema),
      description: String(parameter.description ?? ''),
      rules: rulesWithRef(ctx.spec, raw),
      ...(parameter.example === undefined ? {} : { example: literal(parameter.example) }),
    });
  }
  if (op.requestBody) {
    const body = ctx.spec.resolve(op.requestBody).node;
    const mediaType = isNode(body.content) ? Object.keys(body.content)[0] : undefined;
    if (mediaType) {
      rows.unshift({ name: 'Content-Type', required: true, type: 'string', description: `Exactly \`${mediaType}\`.`, rules: union(rulesOf(body.content && (body.content as Node)[mediaType]), rulesOf(body)), example: mediaType });
    }
  }
  return rows;
}

function encryptedMarker(ctx: DocsContext, schema: Node, path: string): { direction: Direction; plaintext: Node } | undefined {
  const view = ctx.spec.resolve(schema).node;
  const candidates: Node[] = [view, ...(Array.isArray(view.allOf) ? view.allOf.filter(isNode).map((part) => ctx.spec.resolve(part).node) : [])];
  for (const candidate of candidates.reverse()) {
    const property = isNode(candidate.properties) ? candidate.properties[path] : undefined;
    const marker = isNode(property) ? property['x-encrypted'] : undefined;
    if (isNode(marker) && isNode(marker.plaintext)) return { direction: String(marker.direction) as Direction, plaintext: marker.plaintext };
  }
  return undefined;
}

function responseSchema(response: Node): Node | undefined {
  const media = isNode(response.content) ? Object.values(response.content).find(isNode) : undefined;
  return media && isNode(media.schema) ? media.schema : undefined;
}

/** The plain form of an encrypted response field, its examples sealed into the envelope. */
function responseBody(ctx: DocsContext, endpoint: Endpoint, status: string, schema: Node, view: ObjectView, unspecified: UnspecifiedPoint[]): Block[] {
  const blocks: Block[] = [];
  const encrypted = view.fields.find((field) => field.encrypted);
  const marker = encrypted ? encryptedMarker(ctx, schema, encrypted.path) : undefined;
  const envelopeExamples = examplesWithInherited(ctx, schema);
  if (encrypted && marker) {
    const plain = ctx.spec.objectView(marker.plaintext);
    unspecified.push(...plain.unspecified, ...plain.fields.flatMap((field) => field.unspecified));
    blocks.push(
      heading(4, `response-${status}-plain`, [t('Decrypted '), c(encrypted.path), t(`: ${plain.name}`)]),
      ...paragraphs(plain.description, ctx.ruleIds),
      para(t('Rules: '), ...ruleLinks(plain.rules)),
      fieldTable(ctx, plain, { id: `response-${status}-plain-fields` }),
      ...conditionTable(ctx, plain.conditions),
      heading(4, `response-${status}-examples`, 'Examples'),
      para(t('The plain result and the envelope that carries it, '), ...sealedWith(ctx, marker.direction, ctx.demo.profile[marker.direction]), t('.')),
    );
    const success = envelopeExamples.find((example) => isNode(example) && literal(example.code) === '0');
    plain.examples.forEach((example, i) => {
      blocks.push(
        exampleBlock(ctx, endpoint.pageId, `response-${status}-example-${i + 1}`, [t(`Response example ${i + 1}`)], example, marker.direction, (cipher): Panel[] => [
          { label: [t('envelope on the wire (HTTP '), c(status), t(', application/json)')], text: stringifyExact({ ...(isNode(success) ? success : { code: 0, message: '' }), [encrypted.path]: cipher }, 2) },
        ]),
      );
    });
    return blocks;
  }
  blocks.push(heading(4, `response-${status}-examples`, 'Examples'), { kind: 'note', tone: 'info', text: [t('This body is plain JSON: it is not encrypted.')] });
  envelopeExamples.forEach((example, i) => blocks.push({ kind: 'code', title: [t(`Response example ${i + 1}${exampleOutcome(example)}`)], language: 'json', text: stringifyExact(example, 2) }));
  return blocks;
}

/** Examples of a schema and of the schemas it inherits (allOf), own first. */
function examplesWithInherited(ctx: DocsContext, schema: Node): unknown[] {
  const { node } = ctx.spec.resolve(schema);
  const own = Array.isArray(node.examples) ? node.examples : [];
  const inherited = (Array.isArray(node.allOf) ? node.allOf : []).flatMap((part) => {
    const resolved = isNode(part) && !('if' in part) ? ctx.spec.resolve(part).node : undefined;
    return resolved && Array.isArray(resolved.examples) ? resolved.examples : [];
  });
  const seen = new Set<string>();
  return [...own, ...inherited].filter((example) => {
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
  return isNode(example) && typeof example.symbol === 'string' ? [t(': '), c(`symbol ${example.symbol}`)] : [];
}

/**
 * Failures inside a 200 body: the envelope's non-zero code (U-CODES) or a body with `success:
 * false` (card close), with the failure examples of the spec.
 */
export function businessFailures(ctx: DocsContext, op: Node): Block[] {
  const ok = isNode(op.responses) ? op.responses['200'] : undefined;
  if (!ok) return [];
  const schema = responseSchema(ctx.spec.resolve(ok).node);
  if (!schema) return [];
  const view = ctx.spec.objectView(schema);
  const examples = examplesWithInherited(ctx, schema);
  const codeField = view.fields.find((field) => field.path === 'code' && field.unspecified.some((point) => point.rule === 'U-CODES'));
  if (codeField) {
    const failures = examples.filter((example) => isNode(example) && literal(example.code) !== '0');
    return [
      heading(3, 'business-failures', 'Business failures (HTTP 200, code ≠ 0)'),
      para(t('A failure is HTTP 200 with the envelope: '), c('code'), t(' not 0, '), c('message'), t(' the error text, and no result in '), c('data'), t(' (empty, null or absent). Rules: '), ...ruleLinks(union(...view.fields.map((field) => field.rules)))),
      ...codeField.unspecified.map((point) => ({ kind: 'note' as const, tone: 'unspecified' as const, text: [badge('unspecified', 'unspecified'), t(' '), link('rules', [c(point.rule)], `rule-${point.rule}`), t(': '), ...prose(point.note, ctx.ruleIds), t(' The emulator\'s codes: '), link('errors', 'business codes', 'business-codes'), t('.')] })),
      ...failures.map((example, i) => ({ kind: 'code' as const, title: [t(`Failure example ${i + 1} (plain JSON, nothing encrypted)`)], language: 'json' as const, text: stringifyExact(example, 2) })),
    ];
  }
  const failure = view.conditions.find((condition) => /= false$/.test(condition.when));
  if (!failure) return [];
  const fields = view.fields.filter((field) => field.rules.some((rule) => failure.rules.includes(rule)));
  const failureExamples = examples.filter((example) => isNode(example) && example.success === false);
  const codes = ctx.options.cardErrors ?? [];
  return [
    heading(3, 'failure-fields', 'Failure fields'),
    para(t('A failure is HTTP 200 with '), c(failure.when), t(' and every field below filled. Rules: '), ...ruleLinks(failure.rules)),
    {
      kind: 'table',
      id: 'failure-fields-table',
      columns: ['field', 'type', 'on failure', 'rules'],
      rows: fields.map((field) => ({ cells: [[c(field.path)], [t(field.type)], prose(failure.then.find((effect) => effect.startsWith(`${field.path}:`))?.slice(field.path.length + 2) ?? 'present', ctx.ruleIds), ruleLinks(field.rules)] })),
    },
    ...failureExamples.map((example, i) => ({ kind: 'code' as const, title: [t(`Failure example ${i + 1}`)], language: 'json' as const, text: stringifyExact(example, 2) })),
    ...(codes.length > 0
      ? [
          { kind: 'note' as const, tone: 'unspecified' as const, text: [badge('unspecified', 'unspecified'), t(' '), link('rules', [c('U-CODES')], 'rule-U-CODES'), t(': the interface names no errorCode values; these are the emulator\'s.')] },
          {
            kind: 'table' as const,
            id: 'card-error-codes',
            columns: ['errorCode', 'errorMessage', 'errorMessageEn'],
            rows: codes.map((code) => ({ tone: 'unspecified' as const, cells: [[c(code.errorCode)], [t(code.errorMessage)], [t(code.errorMessageEn)]] })),
          },
        ]
      : []),
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
