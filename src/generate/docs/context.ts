import { createHash } from 'node:crypto';
import { stringifyExact } from '../../core/exact-json.js';
import { DEFAULT_PROFILE, type CryptoProfile, type Direction, type KeyHalf } from '../../core/profile.js';
import type { Rule } from '../../core/rules.js';
import { halfFor, sealJson } from '../../crypto/codec.js';
import { publicHalf, type RsaPrivateKey } from '../../crypto/keys.js';
import type { RsaEngine } from '../../crypto/rsa-engine.js';
import { anchorsOf, badge, c, join, link, linksOf, prose, ruleAnchor, t, type Block, type ExampleBlock, type Page, type Panel, type Row, type Text, type Tone } from './model.js';
import { CALLBACK_TYPE_TABLE, callbackTypeEntry, type CallbackTypeTable } from '../../spec/callback-types.js';
import { isNode, rulesOf, walkJson, type Node, type SpecSource } from '../../spec/document.js';
import { specModel, type SpecModel } from '../../spec/model.js';
import { SchemaView, unspecifiedOf, union, type Condition, type ObjectView, type UnspecifiedPoint } from './schema-view.js';
import type { ManualFile } from './manual-pages.js';

/** A registered check, as the docs need it (the runner's CHECKS registry fits). */
interface DocsCheck {
  id: string;
  title: string;
  rules: readonly string[];
}

/** A suite, as the docs need it (the runner's loadSuites() result fits). */
export interface DocsSuite {
  name: string;
  title: string;
  side: string;
  cases: ReadonlyArray<{
    id: string;
    title: string;
    rules: readonly string[];
    steps: ReadonlyArray<{ expect?: ReadonlyArray<{ check: string; rules?: readonly string[] }> }>;
  }>;
}

/** A non-zero envelope code of an implementation (the interface names none: U-CODES). */
interface DocsBusinessCode {
  code: number | string;
  name: string;
}

/** A card close errorCode of an implementation (U-CODES, U-CARD-VALUES). */
interface DocsCardError {
  errorCode: string;
  name: string;
  errorMessage: string;
  errorMessageEn: string;
}

/** The demo key pair that encrypts the examples, and how. */
interface DemoCrypto {
  /** A private key carries its public half: both halves are used, as the profile says. */
  key: RsaPrivateKey;
  profile?: CryptoProfile;
  /** The RSA engine (inject one for reproducible padding bytes); node:crypto by default. */
  engine?: RsaEngine;
}

/** What generateDocs needs besides the spec, the rule catalog and the suites. */
export interface DocsOptions {
  checks: readonly DocsCheck[];
  demo: DemoCrypto;
  /** The emulator's business codes, shown as its choice where the interface is silent (U-CODES). */
  businessCodes?: readonly DocsBusinessCode[];
  /** The emulator's card close errorCodes (U-CODES). */
  cardErrors?: readonly DocsCardError[];
  /** The reference merchant's idempotency key, shown for each callback example. */
  idempotencyKey?: (payload: Record<string, unknown>) => string;
  /** The callback types' names (default: the built-in table). */
  callbackTypes?: CallbackTypeTable;
  /** The manual (README.md, docs/**), rendered beside the reference; none by default. */
  manual?: readonly ManualFile[];
}

/** One case expectation that judges a rule: rule → check → suite/case. */
interface Coverage {
  check: string;
  suite: string;
  caseId: string;
  caseTitle: string;
}

/** An order or card endpoint of the interface (the control API is not one). */
export interface Endpoint {
  pageId: string;
  operationId: string;
  method: string;
  path: string;
  server: string;
  operation: Node;
}

/** One callback type, from the dispatch of the callback payload schema. */
export interface CallbackType {
  pageId: string;
  type: number;
  schemaName: string;
  label: string;
  /** The webhook operation that delivers it. */
  operation: Node;
  webhook: string;
}

/** An example as examples.json lists it. */
export interface ExampleRecord {
  page: string;
  id: string;
  direction: Direction;
  keyHalf: KeyHalf;
  /** The exact plain JSON text that was encrypted. */
  plain: string;
  /** Standard Base64 of the RSA blocks. */
  encrypted: string;
}

/** Every default resolved once: the one object each page builder reads. */
export interface DocsContext {
  source: SpecSource;
  spec: SchemaView;
  document: Node;
  rules: Rule[];
  ruleById: Map<string, Rule>;
  ruleIds: Set<string>;
  checks: Map<string, DocsCheck>;
  coverage: Map<string, Coverage[]>;
  endpoints: Endpoint[];
  callbacks: CallbackType[];
  /** The callback type table the callbacks are named from. */
  callbackTable: CallbackTypeTable;
  /** Every x-unspecified of the spec, located. */
  unspecified: UnspecifiedPoint[];
  demo: { key: RsaPrivateKey; profile: CryptoProfile; engine?: RsaEngine; bits: number; fingerprint: string; publicPem: string; privatePem: string };
  options: DocsOptions;
  /** Filled while pages are built; becomes examples.json. */
  examples: ExampleRecord[];
}

/** Builds the context: discovery of endpoints and callback types, coverage, the demo key. */
export function createContext(source: SpecSource, rules: Rule[], suites: readonly DocsSuite[], options: DocsOptions): DocsContext {
  const model = specModel(source);
  const document = model.document;
  const spec = new SchemaView(model);
  const key = options.demo.key;
  const publicDer = publicHalf(key).keyObject.export({ type: 'spki', format: 'der' });
  return {
    source,
    spec,
    document,
    rules,
    ruleById: new Map(rules.map((rule) => [rule.id, rule])),
    ruleIds: new Set(rules.map((rule) => rule.id)),
    checks: new Map(options.checks.map((check) => [check.id, check])),
    coverage: coverageOf(suites),
    endpoints: endpointsOf(model),
    callbacks: callbackTypesOf(model, options.callbackTypes ?? CALLBACK_TYPE_TABLE),
    callbackTable: options.callbackTypes ?? CALLBACK_TYPE_TABLE,
    unspecified: unspecifiedPointsOf(document),
    demo: {
      key,
      profile: options.demo.profile ?? { ...DEFAULT_PROFILE },
      ...(options.demo.engine ? { engine: options.demo.engine } : {}),
      bits: key.bits,
      fingerprint: createHash('sha256').update(publicDer).digest('hex'),
      publicPem: publicHalf(key).keyObject.export({ type: 'spki', format: 'pem' }).toString(),
      privatePem: key.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
    options,
    examples: [],
  };
}

/** rule → every (check, suite, case) that judges it, as the engine attributes results. */
function coverageOf(suites: readonly DocsSuite[]): Map<string, Coverage[]> {
  const coverage = new Map<string, Coverage[]>();
  const seen = new Set<string>();
  for (const suite of suites) {
    for (const testCase of suite.cases) {
      for (const step of testCase.steps) {
        for (const expectation of step.expect ?? []) {
          // The engine's attribution: an expectation's rules, else its case's.
          for (const rule of expectation.rules ?? testCase.rules) {
            const key = `${rule}\u0000${expectation.check}\u0000${suite.name}\u0000${testCase.id}`;
            if (seen.has(key)) continue;
            seen.add(key);
            coverage.set(rule, [...(coverage.get(rule) ?? []), { check: expectation.check, suite: suite.name, caseId: testCase.id, caseTitle: testCase.title }]);
          }
        }
      }
    }
  }
  return coverage;
}

function endpointsOf(model: SpecModel): Endpoint[] {
  const rootServer = firstServer(model.document.servers) ?? '';
  return model
    .operations()
    .filter((operation) => !operation.control)
    .map(({ method, path, operationId, node, item }) => {
      const id = operationId ?? String(node.operationId ?? `${method}-${path}`);
      return {
        pageId: `endpoint-${slug(id)}`,
        operationId: id,
        method: method.toUpperCase(),
        path,
        server: firstServer(node.servers) ?? firstServer(item.servers) ?? rootServer,
        operation: node,
      };
    });
}

function firstServer(servers: unknown): string | undefined {
  return Array.isArray(servers) && isNode(servers[0]) ? String(servers[0].url) : undefined;
}

/**
 * Callback types come from the spec: each webhook's encrypted body names its plain schema, whose
 * `if: {type: {const: N}}` branches name one schema per type. Their names come from the callback
 * type table (a type the table lacks is named after its schema).
 */
function callbackTypesOf(model: SpecModel, table: CallbackTypeTable): CallbackType[] {
  return model.callbackTypes().map(({ type, schema: schemaName, webhook }) => {
    const name = callbackTypeEntry(type, table)?.name;
    const label = name ? name.charAt(0).toUpperCase() + name.slice(1) : humanize(schemaName.replace(/Callback$/, ''));
    return { pageId: `callback-${type}-${slug(label)}`, type, schemaName, label, operation: webhook.node, webhook: webhook.name };
  });
}

/** The schema of an operation's request body (first media type). */
export function requestSchema(spec: SchemaView, operation: Node): Node | undefined {
  return spec.model.requestSchema(operation);
}

/** `DepositCallback` → `Deposit callback`; `NotEnoughHotMoney` → `Not enough hot money`. */
export function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A file-name-safe slug. */
export function slug(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function unspecifiedPointsOf(document: Node): UnspecifiedPoint[] {
  const out: UnspecifiedPoint[] = [];
  walkJson(document, (node, pointer) => {
    if (Array.isArray(node['x-unspecified'])) out.push(...unspecifiedOf(node, describePointer(pointer)));
  });
  return out;
}

/** A JSON pointer of the spec in words: `#/components/schemas/OrderRequest/properties/expiryHours` → `OrderRequest.expiryHours`. */
function describePointer(pointer: string): string {
  const parts = pointer.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (parts.length === 0) return 'the whole interface';
  if (parts[0] === 'info') return 'the whole interface';
  if (parts[0] === 'paths' && parts.length >= 3) return `${parts[2]!.toUpperCase()} ${parts[1]}${parts.length > 3 ? ` (${parts.slice(3).join(' ')})` : ''}`;
  if (parts[0] === 'webhooks' && parts.length >= 3) return `callback ${parts[1]}${parts.length > 3 ? ` (${parts.slice(3).join(' ')})` : ''}`;
  if (parts[0] === 'components' && parts.length >= 3) {
    const rest = parts.slice(3).filter((part) => part !== 'properties');
    return [parts[2], ...rest].join('.');
  }
  return parts.join('.');
}

/** Which half of the demo key encrypts `direction`, and the ciphertext of the exact JSON text. */
function seal(ctx: DocsContext, compact: string, direction: Direction): { cipher: string; keyHalf: KeyHalf } {
  const keyHalf = halfFor(direction, 'encrypt', ctx.demo.profile);
  const key = keyHalf === 'private' ? ctx.demo.key : publicHalf(ctx.demo.key);
  const cipher = sealJson(compact, direction, key, { profile: ctx.demo.profile, ...(ctx.demo.engine ? { engine: ctx.demo.engine } : {}) });
  return { cipher, keyHalf };
}

/** How the demo key encrypted a direction, in words. */
export function sealedWith(ctx: DocsContext, direction: Direction, keyHalf: KeyHalf): Text {
  return [t(`encrypted with the demo key's `), badge('encrypted', `${keyHalf.toUpperCase()} half`), t(` (${direction} direction, ${ctx.demo.profile.padding}, ${ctx.demo.bits}-bit)`)];
}

/**
 * An example block: the plain JSON beside its encrypted form; `wrap` turns the Base64 into what
 * travels (a form body, an envelope, a raw body). Records it for examples.json.
 */
export function exampleBlock(
  ctx: DocsContext,
  page: string,
  id: string,
  title: Text,
  value: unknown,
  direction: Direction,
  wrap: (cipher: string) => Panel[],
): ExampleBlock {
  const compact = stringifyExact(value);
  const { cipher, keyHalf } = seal(ctx, compact, direction);
  ctx.examples.push({ page, id, direction, keyHalf, plain: compact, encrypted: cipher });
  return {
    kind: 'example',
    id,
    title,
    direction,
    keyHalf,
    cipher,
    plain: { label: [t('plain JSON (before encryption)')], text: stringifyExact(value, 2) },
    encrypted: wrap(cipher),
  };
}

/** Links to the catalog for a list of rule ids. */
export function ruleLinks(ids: readonly string[]): Text {
  return join(ids.map((id) => [link('rules', [c(id)], ruleAnchor(id))]), t(' '));
}

/** A severity badge. */
export function severityBadge(ctx: DocsContext, id: string): Text {
  const severity = ctx.ruleById.get(id)?.severity;
  if (!severity) return [badge('uncovered', 'not in the catalog')];
  return [badge(toneOf(severity), severity)];
}

/** The tone of a severity. */
export function toneOf(severity: string): Tone {
  return severity === 'MUST' ? 'must' : severity === 'SHOULD' ? 'should' : 'unspecified';
}

/** A field table from an object view; `keyFields` marks idempotency key fields. */
export function fieldTable(ctx: DocsContext, view: ObjectView, options: { id?: string; keyFields?: ReadonlySet<string>; plainLink?: (name: string) => Text } = {}): Block {
  const rows: Row[] = view.fields.map((field) => {
    const description: Text = [];
    if (field.encrypted) {
      description.push(badge('encrypted', 'encrypted'), t(` Base64 of RSA blocks (${field.encrypted.direction} direction); plain form: `), ...(options.plainLink?.(field.encrypted.plaintext) ?? [c(field.encrypted.plaintext)]), t('. '));
    }
    if (options.keyFields?.has(field.path)) description.push(badge('key', 'idempotency key'), t(' '));
    if (field.description) description.push(...prose(field.description, ctx.ruleIds));
    if (field.constraints.length > 0) description.push(t(field.description ? ' ' : ''), ...join(field.constraints.map((constraint) => [c(constraint)])));
    for (const point of field.unspecified) description.push(t(' '), ...unspecifiedInline(ctx, point));
    return {
      cells: [[c(field.path)], [t(field.type)], [t(field.required ? 'yes' : 'no')], ruleLinks(field.rules), description],
      ...(field.encrypted ? { tone: 'encrypted' as Tone } : field.unspecified.length > 0 ? { tone: 'unspecified' as Tone } : {}),
    };
  });
  return { kind: 'table', ...(options.id ? { id: options.id } : {}), columns: ['field', 'type', 'required', 'rules', 'description'], rows, empty: 'no fields' };
}

/** Conditional requirements of a schema (if/then). */
export function conditionTable(ctx: DocsContext, conditions: Condition[], id?: string): Block[] {
  if (conditions.length === 0) return [];
  return [
    {
      kind: 'table',
      ...(id ? { id } : {}),
      columns: ['when', 'then', 'rules'],
      rows: conditions.map((condition) => ({
        cells: [[c(condition.when)], join(condition.then.map((effect) => prose(effect, ctx.ruleIds)), t('; ')), ruleLinks(condition.rules)],
      })),
    },
  ];
}

/** An unspecified point in a sentence: badge, rule link, note. */
function unspecifiedInline(ctx: DocsContext, point: UnspecifiedPoint): Text {
  return [badge('unspecified', 'unspecified'), t(' '), link('rules', [c(point.rule)], ruleAnchor(point.rule)), t(': '), ...prose(point.note, ctx.ruleIds)];
}

/** A table of unspecified points: rule, where, what the toolkit assumes. */
export function unspecifiedTable(ctx: DocsContext, points: UnspecifiedPoint[], id = 'unspecified-table'): Block {
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
      cells: [[badge('unspecified', 'unspecified')], [link('rules', [c(point.rule)], ruleAnchor(point.rule))], [t(point.where)], prose(point.note, ctx.ruleIds)],
    })),
    empty: 'nothing unspecified here',
  };
}

/** The checks that judge a rule, linked to its traceability row. */
export function checksCell(ctx: DocsContext, rule: string): Text {
  const coverage = ctx.coverage.get(rule) ?? [];
  const checks = union(coverage.map((entry) => entry.check));
  if (checks.length === 0) {
    const catalog = ctx.ruleById.get(rule);
    if (catalog?.severity === 'UNSPECIFIED') return [badge('unspecified', 'unspecified'), t(' '), link('traceability', 'assumption', ruleAnchor(rule))];
    if (catalog && !catalog.blackBox) return [link('traceability', 'not black-box', ruleAnchor(rule))];
    return [badge('uncovered', 'no check'), t(' '), link('traceability', 'why', ruleAnchor(rule))];
  }
  return [...join(checks.map((check) => [c(check)]), t(' ')), t(' '), link('traceability', `(${union(coverage.map((e) => `${e.suite}/${e.caseId}`)).length} cases)`, ruleAnchor(rule))];
}

/**
 * Appends the "Rules on this page" table: every rule the page links to, with severity, text and
 * the checks that judge it.
 */
export function withRulesOnPage(ctx: DocsContext, page: Page): Page {
  const ids = union(linksOf(page).filter((target) => target.page === 'rules' && target.anchor?.startsWith('rule-')).map((target) => target.anchor!.slice(5)));
  const rows: Row[] = ids
    .filter((id) => ctx.ruleById.has(id))
    .map((id) => ({ cells: [[link('rules', [c(id)], ruleAnchor(id))], severityBadge(ctx, id), prose(ctx.ruleById.get(id)!.text), checksCell(ctx, id)] }));
  const anchors = anchorsOf(page);
  const headingId = anchors.has('rules-on-this-page') ? 'rules-on-this-page-2' : 'rules-on-this-page';
  return {
    ...page,
    blocks: [...page.blocks, { kind: 'heading', level: 2, id: headingId, text: [t('Rules on this page')] }, { kind: 'table', columns: ['rule', 'severity', 'text', 'checked by'], rows }],
  };
}

/** The x-rules of a node plus those of its referenced component. */
export function rulesWithRef(spec: SchemaView, node: unknown): string[] {
  return union(rulesOf(node), isNode(node) && typeof node.$ref === 'string' ? rulesOf(spec.resolve(node).node) : []);
}
