import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseExactJson, stringifyExact } from '../src/core/exact-json.js';
import { RULES_PATH, SPEC_PATH } from '../src/platform/package-paths.js';
import { DEFAULT_PROFILE, type CryptoProfile, type Direction } from '../src/core/profile.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { halfFor, openJson } from '../src/crypto/codec.js';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { parseKey, publicHalf, type RsaKey, type RsaPrivateKey } from '../src/crypto/keys.js';
import type { ExampleRecord } from '../src/generate/docs/docs-context.js';
import { generateDocs } from '../src/generate/docs/site.js';
import { parseSpec, walkJson, type SpecSource } from '../src/spec/document.js';
import { CHECKS } from '../src/runner/checks/index.js';
import { loadSuites, SUITES_DIR } from '../src/runner/suite.js';
import { ROOT, runCli } from './support/cli.js';
import { runCliInProcess } from './support/cli-in-process.js';

const specText = readFileSync(SPEC_PATH, 'utf8');
const spec = parseSpec(specText, 'spec/wallet-api.yaml');
const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const suites = loadSuites();
const key = parseKey(generateMerchantKeyPair(1024).privatePem, { expect: 'private' }) as RsaPrivateKey;

type Files = Map<string, string>;

function site(source: SpecSource = spec, profile?: CryptoProfile): Files {
  const files = generateDocs(source, rules, suites, { checks: CHECKS, demo: { key, ...(profile ? { profile } : {}) } });
  return new Map(files.map((file) => [file.path, file.contents]));
}

const files = site();
const page = (path: string): string => {
  const contents = files.get(path);
  if (contents === undefined) throw new Error(`no generated file ${path}`);
  return contents;
};

/** HTML to the text a reader sees: tags dropped, entities decoded, whitespace collapsed. */
function visible(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<\/?(td|th|tr|p|div|li|ul|h\d|pre|table|thead|tbody|section|figure|figcaption|nav|br)\b[^>]*>/g, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A prose note or rule text as the site shows it: `code` spans lose their backticks. */
const shown = (text: string): string => text.replace(/`/g, '').replace(/\s+/g, ' ').trim();

/** The inner HTML of the element with this id (tr, table, section). */
function element(html: string, tag: 'tr' | 'table' | 'section', id: string): string {
  const match = new RegExp(`<${tag}[^>]*\\sid="${id}"[^>]*>([\\s\\S]*?)</${tag}>`).exec(html);
  if (!match) throw new Error(`no <${tag} id="${id}">`);
  return match[1]!;
}

/** The cells of a table row, as inner HTML. */
const cells = (row: string): string[] => [...row.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
/** The rows of a table, as inner HTML. */
const rowsOf = (table: string): string[] =>
  [...table.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!).filter((row) => row.includes('<td>'));
/** `<code>` texts in a piece of HTML. */
const codes = (html: string): string[] => [...html.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => visible(m[1]!));

type SchemaNode = Record<string, unknown>;
const document = spec.document as unknown as SchemaNode;
const schemas = (document.components as { schemas: Record<string, SchemaNode> }).schemas;
const refName = (node: unknown): string =>
  String((node as { $ref: string }).$ref)
    .split('/')
    .pop()!;

/** The interface's operations (the emulator's control API is not part of it). */
const operations = Object.entries(document.paths as Record<string, Record<string, SchemaNode>>).flatMap(
  ([path, item]) =>
    Object.entries(item)
      .filter(
        ([method, op]) =>
          ['get', 'put', 'post', 'delete', 'patch'].includes(method) &&
          !(op.tags as string[] | undefined)?.includes('control'),
      )
      .map(([method, op]) => ({ path, method, op, operationId: String(op.operationId) })),
);

const ENDPOINT_PAGES = ['endpoint-get-energy-max-count', 'endpoint-withdraw-without-verify', 'endpoint-close-card'];
const CALLBACK_PAGES = [
  'callback-1-deposit',
  'callback-2-withdrawal-request',
  'callback-3-withdrawal',
  'callback-4-address',
  'callback-5-invalid-address',
  'callback-6-not-enough-money',
  'callback-7-not-enough-hot-money',
];
const REFERENCE_PAGES = ['index', 'rules', 'traceability', 'idempotency', 'errors', 'receiver'];
const PAGES = [...REFERENCE_PAGES, ...ENDPOINT_PAGES, ...CALLBACK_PAGES];

/** Callback types of the spec: the `if: {type: {const: N}} then: $ref` branches of the payload. */
const callbackTypes = (schemas.CallbackPayload!.allOf as SchemaNode[])
  .filter((part) => part.if && part.then)
  .map((part) => ({
    type: Number(((part.if as SchemaNode).properties as Record<string, { const: number }>).type!.const),
    schema: refName(part.then),
  }));

const xRules = (node: unknown): string[] => ((node as { 'x-rules'?: string[] })['x-rules'] ?? []).map(String);

/** Every property of a schema and of its allOf parts (refs followed), with the rules all its declarations cite. */
function properties(name: string): Map<string, string[]> {
  const schema = schemas[name]!;
  const parts = [
    ...((schema.allOf as SchemaNode[] | undefined) ?? []).map((part) => (part.$ref ? schemas[refName(part)]! : part)),
    schema,
  ];
  const out = new Map<string, string[]>();
  for (const part of parts) {
    for (const [field, property] of Object.entries((part.properties as Record<string, SchemaNode> | undefined) ?? {})) {
      out.set(field, [...new Set([...(out.get(field) ?? []), ...xRules(property)])]);
    }
  }
  return out;
}

describe('generateDocs: pages', () => {
  it('renders every page as HTML and as Markdown, plus examples.json and the demo key, and nothing else', () => {
    expect(operations.map((op) => op.operationId)).toEqual(['getEnergyMaxCount', 'withdrawWithoutVerify', 'closeCard']);
    expect(callbackTypes.map((entry) => entry.type)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const expected = [
      ...PAGES.flatMap((id) => [`${id}.html`, `${id}.md`]),
      'examples.json',
      'demo-key/merchant-public.pem',
      'demo-key/merchant-private.pem',
    ];
    expect([...files.keys()].sort()).toEqual(expected.sort());
    for (const id of PAGES) {
      expect(page(`${id}.html`), id).toMatch(/^<!doctype html>/);
      expect(page(`${id}.md`), id).toMatch(/^<!-- Generated by wallet-conformance docs/);
      // Both forms carry the same title.
      const title = /<h1>([\s\S]*?)<\/h1>/.exec(page(`${id}.html`))![1]!;
      expect(page(`${id}.md`), id).toContain(`\n# ${visible(title).replace(/[\\`*_[\]<>|#]/g, (ch) => `\\${ch}`)}\n`);
    }
  });

  it('lists every endpoint and callback page in the navigation of every page, in both forms', () => {
    for (const id of PAGES) {
      for (const target of [...ENDPOINT_PAGES, ...CALLBACK_PAGES, ...REFERENCE_PAGES]) {
        expect(page(`${id}.html`), `${id} → ${target}`).toMatch(
          new RegExp(`<nav class="site"[\\s\\S]*href="${target}\\.html"[\\s\\S]*</nav>`),
        );
        if (target !== id) expect(page(`${id}.md`), `${id} → ${target}`).toContain(`](${target}.md)`);
      }
    }
  });

  it('gives each endpoint page the method, the path and the plain fields with their types and rules', () => {
    const energy = page('endpoint-get-energy-max-count.html');
    expect(visible(energy)).toContain('POST {base_url}/api/v1/api/order/getEnergyMaxCount');
    expect(visible(page('endpoint-close-card.html'))).toContain('POST {card_base_url}/card/close');

    // Every plain field of each encrypted request, from the spec, with its rules linked.
    for (const [pageId, plain] of [
      ['endpoint-get-energy-max-count', 'EnergyMaxCountRequest'],
      ['endpoint-withdraw-without-verify', 'OrderRequest'],
    ] as const) {
      expect(Object.keys(schemas), plain).toContain(plain);
      const table = element(page(`${pageId}.html`), 'table', 'request-plain-fields');
      const rows = new Map(rowsOf(table).map((row) => [codes(cells(row)[0]!)[0]!, cells(row)]));
      expect([...rows.keys()].sort(), plain).toEqual([...properties(plain).keys()].sort());
      for (const [name, fieldRules] of properties(plain)) {
        const row = rows.get(name);
        for (const rule of fieldRules) expect(row![3], `${plain}.${name}`).toContain(`href="rules.html#rule-${rule}"`);
      }
    }
    const order = new Map(
      rowsOf(element(page('endpoint-withdraw-without-verify.html'), 'table', 'request-plain-fields')).map((row) => [
        codes(cells(row)[0]!)[0]!,
        cells(row).map(visible),
      ]),
    );
    expect(order.get('userId')!.slice(1, 3)).toEqual(['integer', 'yes']);
    expect(order.get('tenantUserId')!.slice(1, 3)).toEqual(['string', 'yes']);
    expect(order.get('tenantType')!.slice(1, 4)).toEqual(['const 1', 'yes', 'ORDER-TENANT-TYPE']);
    expect(order.get('amount')![1]).toMatch(/^Decimal: number \| string$/);
    expect(order.get('expiryHours')!.slice(1, 4)).toEqual(['integer', 'no', 'ORDER-EXPIRY']);

    const card = new Map(
      rowsOf(element(page('endpoint-close-card.html'), 'table', 'request-fields')).map((row) => [
        codes(cells(row)[0]!)[0]!,
        cells(row).map(visible),
      ]),
    );
    for (const name of ['merchantId', 'merchantUserId', 'powerCardId', 'channel', 'closeSerialNo']) {
      expect(card.get(name)?.[1], name).toBe('string');
      expect(card.get(name)?.[3], name).toContain('CARD-REQ');
    }
    // The headers table: X-API-KEY and Content-Type of the energy query.
    const headers = visible(element(energy, 'table', 'request-headers-table'));
    expect(headers).toContain('Content-Type yes string ENERGY-CT');
    expect(headers).toContain('X-API-KEY yes');
    // The Markdown form says the same.
    expect(page('endpoint-withdraw-without-verify.md')).toContain(
      '| `tenantType` | const 1 | yes | [`ORDER-TENANT-TYPE`](rules.md#rule-ORDER-TENANT-TYPE) |',
    );
  });

  it('gives each callback page its type, its payload fields and its own examples', () => {
    for (const [i, { type, schema }] of callbackTypes.entries()) {
      const html = page(`${CALLBACK_PAGES[i]}.html`);
      expect(visible(/<h1>([\s\S]*?)<\/h1>/.exec(html)![1]!)).toMatch(new RegExp(`^Callback type ${type}: `));
      const table = element(html, 'table', 'payload-fields');
      const names = rowsOf(table).map((row) => codes(cells(row)[0]!)[0]);
      expect(names, schema).toEqual(expect.arrayContaining([...properties(schema).keys()]));
      expect(html).toContain('id="example-1"');
    }
  });
});

describe('generateDocs: rule catalog and traceability', () => {
  it('lists every rule of spec/rules.yaml in the catalog with its severity, in both forms', () => {
    const raw = (
      parseYaml(readFileSync(RULES_PATH, 'utf8')) as { rules: Array<{ id: string; severity: string; text: string }> }
    ).rules;
    expect(raw.length).toBeGreaterThan(40);
    const html = page('rules.html');
    const md = page('rules.md');
    for (const rule of raw) {
      const row = cells(element(html, 'tr', `rule-${rule.id}`));
      expect(visible(row[0]!), rule.id).toBe(rule.id);
      expect(row[1], rule.id).toContain(
        `<span class="badge badge-${rule.severity === 'MUST' ? 'must' : rule.severity === 'SHOULD' ? 'should' : 'unspecified'}">${rule.severity}</span>`,
      );
      expect(visible(row[2]!), rule.id).toBe(shown(rule.text));
      expect(md, rule.id).toMatch(
        new RegExp(`\\| <a id="rule-${rule.id}"></a>\`${rule.id}\` \\| \\*\\*${rule.severity}\\*\\* \\|`),
      );
    }
    expect(rowsOf(element(html, 'table', 'rules-table'))).toHaveLength(raw.length);
  });

  it('links a rule to the checks and suite cases that cite it (picked from suites/*.yaml)', () => {
    const suite = (name: string) =>
      parseYaml(readFileSync(join(SUITES_DIR, `${name}.yaml`), 'utf8')) as {
        cases: Array<{
          id: string;
          rules: string[];
          steps: Array<{ expect?: Array<{ check: string; rules?: string[] }> }>;
        }>;
      };
    // merchant/idempotency: the second delivery's `processed` expectation judges CB-ID-DEPOSIT.
    const deposit = suite('merchant/idempotency').cases.find((c) => c.id === 'redelivered-deposit')!;
    expect(deposit.steps[1]!.expect!.find((e) => e.check === 'processed')!.rules).toContain('CB-ID-DEPOSIT');
    // service/errors: unknown-path has no expectation rules, so its case rule ERR-404 is judged by both checks.
    const unknown = suite('service/errors').cases.find((c) => c.id === 'unknown-path')!;
    expect(unknown.rules).toEqual(['ERR-404']);
    expect(unknown.steps[0]!.expect!.map((e) => e.check)).toEqual(['status', 'error-body']);

    const trace = page('traceability.html');
    const depositRow = cells(element(trace, 'tr', 'rule-CB-ID-DEPOSIT'));
    expect(codes(depositRow[2]!)).toContain('processed');
    expect(depositRow[2]).toContain('href="#check-processed"');
    expect(codes(depositRow[3]!)).toContain('merchant/idempotency/redelivered-deposit');
    expect(codes(depositRow[2]!)).not.toContain('answers'); // that case's `answers` expectations judge other rules
    const notFound = cells(element(trace, 'tr', 'rule-ERR-404'));
    expect(codes(notFound[2]!)).toEqual(expect.arrayContaining(['status', 'error-body']));
    expect(codes(notFound[3]!)).toEqual(
      expect.arrayContaining(['service/errors/unknown-path', 'service/errors/unversioned-path']),
    );
    expect(visible(notFound[4]!)).toMatch(/^checked \d+ cases?$/);
  });

  it('shows, for every rule, exactly the checks and cases the suites attribute to it', () => {
    const expected = new Map<string, { checks: Set<string>; cases: Set<string> }>();
    for (const s of suites) {
      for (const testCase of s.cases) {
        for (const step of testCase.steps) {
          for (const expectation of step.expect ?? []) {
            for (const rule of expectation.rules ?? testCase.rules) {
              const entry = expected.get(rule) ?? { checks: new Set(), cases: new Set() };
              entry.checks.add(expectation.check);
              entry.cases.add(`${s.name}/${testCase.id}`);
              expected.set(rule, entry);
            }
          }
        }
      }
    }
    const trace = page('traceability.html');
    for (const rule of rules) {
      const row = cells(element(trace, 'tr', `rule-${rule.id}`));
      expect(new Set(codes(row[2]!)), rule.id).toEqual(expected.get(rule.id)?.checks ?? new Set());
      expect(new Set(codes(row[3]!)), rule.id).toEqual(expected.get(rule.id)?.cases ?? new Set());
    }
    // Every registered check has a row (the anchors the rule rows link to).
    for (const check of CHECKS) expect(trace, check.id).toContain(`<tr id="check-${check.id}">`);
  });

  it('shows UNSPECIFIED rules and every x-unspecified point of the spec as unspecified', () => {
    const unspecifiedRules = rules.filter((rule) => rule.severity === 'UNSPECIFIED');
    expect(unspecifiedRules.map((rule) => rule.id)).toEqual(
      expect.arrayContaining(['U-CRYPTO', 'U-CODES', 'U-LIMITS']),
    );
    for (const rule of unspecifiedRules) {
      expect(page('rules.html')).toMatch(new RegExp(`<tr id="rule-${rule.id}" class="tone-unspecified">`));
      const row = cells(element(page('traceability.html'), 'tr', `rule-${rule.id}`));
      expect(row[4], rule.id).toContain('<span class="badge badge-unspecified">unspecified</span>');
    }
    const points: Array<{ rule: string; note: string }> = [];
    walkJson(document, (node) => {
      if (Array.isArray(node['x-unspecified']))
        points.push(...(node['x-unspecified'] as Array<{ rule: string; note: string }>));
    });
    expect(points.length).toBeGreaterThanOrEqual(12);
    const table = rowsOf(element(page('rules.html'), 'table', 'unspecified-table')).map(cells);
    for (const point of points) {
      const rows = table.filter(
        (cellsOfRow) => visible(cellsOfRow[1]!) === point.rule && visible(cellsOfRow[3]!) === shown(point.note),
      );
      expect(rows.length, `${point.rule}: ${point.note}`).toBe(1);
      expect(rows[0]![0]).toContain('badge-unspecified');
    }
    // Where a point applies, its page says so: expiryHours bounds on the order page, card auth on card close.
    const expiry = rowsOf(element(page('endpoint-withdraw-without-verify.html'), 'table', 'request-plain-fields')).find(
      (row) => codes(cells(row)[0]!)[0] === 'expiryHours',
    )!;
    expect(visible(expiry)).toContain('unspecified U-LIMITS: Bounds of expiryHours are not shown.');
    expect(visible(element(page('endpoint-close-card.html'), 'table', 'unspecified-table'))).toContain('U-CARD-AUTH');
    expect(visible(element(page('callback-1-deposit.html'), 'table', 'unspecified-table'))).toContain('U-CB-RESPONSE');
  });
});

describe('generateDocs: examples', () => {
  const examplesOf = (site: Files) =>
    JSON.parse(site.get('examples.json')!) as {
      demoKey: { bits: number; sha256: string; profile: CryptoProfile };
      examples: ExampleRecord[];
    };

  /** Decrypts every example with the other half of the demo key and compares it with the page. */
  function decryptAll(site: Files, demo: RsaPrivateKey, profile: CryptoProfile): ExampleRecord[] {
    const { examples } = examplesOf(site);
    for (const example of examples) {
      expect(example.keyHalf, example.id).toBe(halfFor(example.direction, 'encrypt', profile));
      const half: RsaKey = halfFor(example.direction, 'decrypt', profile) === 'private' ? demo : publicHalf(demo);
      const opened = openJson(example.encrypted, example.direction, half, { profile });
      expect(opened.text, `${example.page}#${example.id}`).toBe(example.plain);
      // The page shows this ciphertext beside exactly this plain JSON.
      const section = element(site.get(`${example.page}.html`)!, 'section', example.id);
      const attributes = new RegExp(
        `<section class="example" id="${example.id}" data-direction="${example.direction}" data-key-half="${example.keyHalf}" data-cipher="([^"]*)"`,
      ).exec(site.get(`${example.page}.html`)!);
      expect(attributes?.[1], example.id).toBe(example.encrypted);
      const plainPanel = /<div class="panel plain">[\s\S]*?<pre>([\s\S]*?)<\/pre>/.exec(section)![1]!;
      expect(stringifyExact(parseExactJson(visible(plainPanel)))).toBe(opened.text);
      expect(visible(section)).toContain(example.encrypted);
    }
    return examples;
  }

  it('decrypt with the demo key to exactly the plain JSON shown next to them, in every direction', () => {
    const examples = decryptAll(files, key, DEFAULT_PROFILE);
    expect(new Set(examples.map((example) => example.direction))).toEqual(new Set(['request', 'response', 'callback']));
    expect(new Set(examples.map((example) => example.page))).toEqual(
      new Set([...ENDPOINT_PAGES.filter((id) => id !== 'endpoint-close-card'), ...CALLBACK_PAGES]),
    );
    // Callbacks are sealed with the private half (CB-DECRYPT), requests with the public half.
    expect(
      examples.filter((example) => example.direction === 'callback').every((example) => example.keyHalf === 'private'),
    ).toBe(true);
    expect(
      examples.filter((example) => example.direction === 'request').every((example) => example.keyHalf === 'public'),
    ).toBe(true);
  });

  it('are the spec examples with their exact digits (a BigDecimal amount is not rounded)', () => {
    const { examples } = examplesOf(files);
    const orderPlain = (schemas.OrderRequest!.examples as unknown[]).map((example) => stringifyExact(example));
    const shownOrders = examples
      .filter((example) => example.page === 'endpoint-withdraw-without-verify' && example.direction === 'request')
      .map((example) => JSON.stringify(JSON.parse(example.plain)));
    expect(shownOrders).toEqual(orderPlain.map((text) => JSON.stringify(JSON.parse(text))));
    const big = examples.find((example) => /"amount":\d{17,}\.\d+/.test(example.plain));
    const literal = /"amount":(\d{17,}\.\d+)/.exec(big?.plain ?? '')?.[1];
    expect(literal, 'an example with a long decimal amount').toBe('12345678901234567890.123');
    expect(specText).toContain(`amount: ${literal}`);
  });

  it('names the demo key that made them, and another profile changes how they are sealed', () => {
    const { demoKey } = examplesOf(files);
    expect(demoKey.bits).toBe(1024);
    const spki = publicHalf(key).keyObject.export({ type: 'spki', format: 'der' });
    expect(demoKey.sha256).toBe(createHashHex(spki));
    expect(parseKey(page('demo-key/merchant-public.pem')).keyObject.export({ type: 'spki', format: 'der' })).toEqual(
      spki,
    );
    expect(
      parseKey(page('demo-key/merchant-private.pem'), { expect: 'private' }).keyObject.export({
        type: 'pkcs8',
        format: 'der',
      }),
    ).toEqual(key.keyObject.export({ type: 'pkcs8', format: 'der' }));

    const flipped: CryptoProfile = {
      padding: 'oaep-sha256',
      request: 'private',
      response: 'public',
      callback: 'public',
      plaintextBlock: 'auto',
    };
    const other = site(spec, flipped);
    expect(examplesOf(other).demoKey.profile).toEqual(flipped);
    const examples = decryptAll(other, key, flipped);
    expect(
      examples.filter((example) => example.direction === 'callback').every((example) => example.keyHalf === 'public'),
    ).toBe(true);
  });
});

function createHashHex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

describe('generateDocs: idempotency and error tables', () => {
  it('lists each callback type with the key fields that cite its CB-ID-* rule, never requestUUID', () => {
    const html = page('idempotency.html');
    for (const [i, { type, schema }] of callbackTypes.entries()) {
      const rule = xRules(schemas[schema]).find((id) => id.startsWith('CB-ID-'))!;
      expect(rule, schema).toBe(type === 1 ? 'CB-ID-DEPOSIT' : type === 3 ? 'CB-ID-WITHDRAW' : 'CB-ID-OTHER');
      const keyFields = [...properties(schema)]
        .filter(([, fieldRules]) => fieldRules.includes(rule))
        .map(([name]) => name);
      const row = cells(element(html, 'tr', `type-${type}`));
      expect(visible(row[0]!)).toBe(String(type));
      expect(row[1]).toContain(`href="${CALLBACK_PAGES[i]}.html"`);
      expect(visible(row[2]!)).toBe(rule);
      expect(codes(row[3]!), schema).toEqual(keyFields);
      expect(codes(row[3]!), schema).not.toContain('requestUUID');
    }
    expect(codes(cells(element(html, 'tr', 'type-1'))[3]!)).toEqual(['txid', 'chain', 'symbol', 'toAddress']);
    expect(codes(cells(element(html, 'tr', 'type-3'))[3]!)).toEqual(['txid']);
    expect(visible(element(page('callback-1-deposit.html'), 'table', 'payload-fields'))).toContain(
      'txid string yes CB-ID-DEPOSIT',
    );
  });

  it('lists the 401, 403 and 404 bodies exactly, on the error page and on the endpoint pages', () => {
    const bodies = {
      401: '{"code":"UNAUTHORIZED","message":"unauthorized"}',
      403: '{"code":"FORBIDDEN","message":"forbidden"}',
      404: '{"code":"NOT FOUND","message":"not found"}',
    };
    const errors = page('errors.html');
    for (const [status, body] of Object.entries(bodies)) {
      const row = cells(element(errors, 'tr', `http-${status}`));
      expect(visible(row[0]!)).toBe(`HTTP ${status}`);
      expect(codes(row[2]!)).toEqual([body]);
      expect(visible(row[3]!)).toBe(`ERR-${status}`);
      expect(row[4]).toContain('href="endpoint-get-energy-max-count.html"');
      expect(page('errors.md')).toContain(`| <a id="http-${status}"></a>\`HTTP ${status}\``);
      const energy = cells(element(page('endpoint-get-energy-max-count.html'), 'tr', `error-${status}`));
      expect(codes(energy[2]!)).toEqual([body]);
    }
    expect(visible(element(errors, 'table', 'http-error-table'))).not.toContain('HTTP 500');
  });
});

describe('generateDocs: a site that works offline', () => {
  it('resolves every internal href of every HTML page to a generated file and an existing id', () => {
    const ids = new Map(
      [...files]
        .filter(([path]) => path.endsWith('.html'))
        .map(([path, html]) => [path, new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!))]),
    );
    let checked = 0;
    for (const [path, html] of files) {
      if (!path.endsWith('.html')) continue;
      for (const [, raw] of html.matchAll(/\shref="([^"]*)"/g)) {
        const href = raw!.replace(/&amp;/g, '&');
        expect(href, `${path}: ${href}`).not.toMatch(/^[a-z]+:|^\/\//i);
        const [file, anchor] = href.split('#') as [string, string | undefined];
        const target = file === '' ? path : file;
        expect(files.has(target), `${path} links to a missing file: ${href}`).toBe(true);
        if (anchor !== undefined)
          expect(ids.get(target)?.has(decodeURIComponent(anchor)), `${path} links to a missing anchor: ${href}`).toBe(
            true,
          );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('defines every id at most once per page, in both forms', () => {
    for (const [path, contents] of files) {
      const pattern = path.endsWith('.html')
        ? /\sid="([^"]+)"/g
        : path.endsWith('.md')
          ? /<a id="([^"]+)"><\/a>/g
          : undefined;
      if (!pattern) continue;
      const ids = [...contents.matchAll(pattern)].map((m) => m[1]!);
      expect(
        ids.filter((id, i) => ids.indexOf(id) !== i),
        path,
      ).toEqual([]);
    }
  });

  it('resolves every internal link of every Markdown page to a generated file and an anchor it defines', () => {
    for (const [path, md] of files) {
      if (!path.endsWith('.md')) continue;
      for (const [, href] of md.matchAll(/\]\(([^)\s]+)\)/g)) {
        expect(href, `${path}: ${href}`).not.toMatch(/^[a-z]+:|^\/\//i);
        const [file, anchor] = href!.split('#') as [string, string | undefined];
        const target = file === '' ? path : file;
        expect(files.has(target), `${path} links to a missing file: ${href}`).toBe(true);
        if (anchor !== undefined)
          expect(files.get(target), `${path} links to a missing anchor: ${href}`).toContain(`<a id="${anchor}"></a>`);
      }
    }
  });

  it('loads no external resource: no scripts, no stylesheets, no fonts, no images from the network', () => {
    for (const [path, html] of files) {
      if (!path.endsWith('.html')) continue;
      expect(html, path).not.toMatch(/<script\b/i);
      expect(html, path).not.toMatch(/<link\b/i);
      expect(html, path).not.toMatch(/<(img|iframe|source|video|audio|embed|object)\b/i);
      expect(html, path).not.toMatch(/\ssrc=/i);
      expect(html, path).not.toMatch(/@import|url\(/i);
      expect(html, path).not.toMatch(/(src|href)="(https?:)?\/\//i);
      // Hosts only inside a URL (Base64 has no ':'): random ciphertext on the page may well spell "cdn".
      expect(html, path).not.toMatch(/https?:\/\/[^\s"'<>]*(cdn|googleapis|unpkg|jsdelivr)/i);
    }
  });
});

describe('generateDocs: follows the spec', () => {
  it('shows a changed field description, and only the spec it was given', () => {
    const original = 'Merchant-generated; the merchant keeps it unique.';
    expect(visible(page('endpoint-withdraw-without-verify.html'))).toContain(original);
    const copy = parseDocument(specText);
    const path = ['components', 'schemas', 'OrderRequest', 'properties', 'callBackId', 'description'];
    expect(String(copy.getIn(path))).toBe(original);
    copy.setIn(path, 'The renamed description of callBackId, unique per order.');
    const changed = site(parseSpec(String(copy), 'changed.yaml'));
    const html = visible(changed.get('endpoint-withdraw-without-verify.html')!);
    expect(html).toContain('The renamed description of callBackId, unique per order.');
    expect(html).not.toContain(original);
    expect(changed.get('endpoint-withdraw-without-verify.md')).toContain(
      'The renamed description of callBackId, unique per order.',
    );
    expect(visible(changed.get('index.html')!)).toContain('Generated from changed.yaml');
    // Pages that do not show the field are unchanged.
    expect(changed.get('rules.html')).toBe(page('rules.html'));
  });

  it('refuses, as a SpecError, a spec that cites a rule the catalog does not list', () => {
    const fewer = rules.filter((rule) => rule.id !== 'ENERGY-PATH');
    expect(() => generateDocs(spec, fewer, suites, { checks: CHECKS, demo: { key } })).toThrow(
      expect.objectContaining({
        name: 'SpecError',
        message: 'spec/wallet-api.yaml cites rules that the rule catalog does not list: ENERGY-PATH',
      }),
    );
  });

  it('drops the pages of an endpoint removed from the spec', () => {
    const copy = parseDocument(specText);
    copy.deleteIn(['paths', '/card/close']);
    const changed = site(parseSpec(String(copy), 'changed.yaml'));
    expect(changed.has('endpoint-close-card.html')).toBe(false);
    expect(changed.has('endpoint-close-card.md')).toBe(false);
    expect(changed.get('index.html')).not.toContain('endpoint-close-card.html');
    expect(changed.get('errors.html')).toContain('href="endpoint-get-energy-max-count.html"');
  });
});

describe('docs (the real CLI)', () => {
  it('writes the site into --out and prints one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const out = join(dir, 'site');
    const run = runCli(['docs', '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // The 16 reference pages, and a page for every Markdown file of the manual (README.md, docs/**).
    const manual =
      1 +
      (readdirSync(join(ROOT, 'docs'), { recursive: true }) as string[]).filter((file) => file.endsWith('.md')).length;
    expect(run.stdout).toBe(
      `docs: ${16 + manual} HTML pages and ${16 + manual} Markdown pages in ${out}; open ${join(out, 'index.html')}\n`,
    );
    expect(readFileSync(join(out, 'manual-merchant-guide.html'), 'utf8')).toContain(
      '<h2 id="what-to-answer-in-every-situation">',
    );
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('href="manual-merchant-guide.html"');
    // Every link of the manual's pages stays inside the site and finds its file.
    for (const page of readdirSync(out).filter((file) => file.startsWith('manual-') && file.endsWith('.html'))) {
      for (const [, href] of readFileSync(join(out, page), 'utf8').matchAll(/\shref="([^"#]*)(?:#[^"]*)?"/g)) {
        if (href) expect(existsSync(join(out, href)), `${page} → ${href}`).toBe(true);
      }
    }
    for (const id of PAGES) {
      expect(existsSync(join(out, `${id}.html`)), id).toBe(true);
      expect(existsSync(join(out, `${id}.md`)), id).toBe(true);
    }
    expect(statSync(join(out, 'demo-key', 'merchant-private.pem')).mode & 0o777).toBe(0o600);
    // The examples decrypt with the private key the CLI wrote next to them.
    const demo = parseKey(readFileSync(join(out, 'demo-key', 'merchant-private.pem')), { expect: 'private' });
    const { examples } = JSON.parse(readFileSync(join(out, 'examples.json'), 'utf8')) as {
      examples: Array<{ direction: Direction; plain: string; encrypted: string }>;
    };
    const callback = examples.find((example) => example.direction === 'callback')!;
    expect(openJson(callback.encrypted, 'callback', publicHalf(demo)).text).toBe(callback.plain);
    const request = examples.find((example) => example.direction === 'request')!;
    expect(openJson(request.encrypted, 'request', demo).text).toBe(request.plain);
  });

  // The runs below read and write files only: the built main in-process (test/support/cli-in-process.ts).
  // The run above and the relative --out below (it needs its own working directory) are real processes.
  it('refuses a --demo-key that is not a demo key (it would publish a real private key), with one line and exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const pair = generateMerchantKeyPair(1024);
    writeFileSync(join(dir, 'real.pem'), pair.privatePem);
    const run = await runCliInProcess(['docs', '--out', join(dir, 'site'), '--demo-key', join(dir, 'real.pem')]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      /is not a demo key .*keys generate --demo --out DIR.*--publish-private-key "I understand this key is public"/,
    );
    expect(existsSync(join(dir, 'site'))).toBe(false);
    const words = await runCliInProcess([
      'docs',
      '--out',
      join(dir, 'site'),
      '--demo-key',
      join(dir, 'real.pem'),
      '--publish-private-key',
      'yes',
    ]);
    expect(words.status).toBe(2);
    expect(words.stderr).toMatch(/--publish-private-key takes the words "I understand this key is public"/);
  });

  it('takes a key of keys generate --demo, and the demo key a site published, as demo keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    expect((await runCliInProcess(['keys', 'generate', '--demo', '--out', join(dir, 'keys')])).status).toBe(0);
    const run = await runCliInProcess([
      'docs',
      '--out',
      join(dir, 'site'),
      '--demo-key',
      join(dir, 'keys', 'merchant-private.pem'),
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const again = await runCliInProcess([
      'docs',
      '--out',
      join(dir, 'site2'),
      '--demo-key',
      join(dir, 'site', 'demo-key', 'merchant-private.pem'),
    ]);
    expect(again.status, again.stderr).toBe(0);
  });

  it('uses the --demo-key it is given and writes it next to the site', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const pair = generateMerchantKeyPair(1024);
    const keyFile = join(dir, 'demo.pem');
    writeFileSync(keyFile, pair.privatePem);
    const out = join(dir, 'site');
    const run = await runCliInProcess([
      'docs',
      '--out',
      out,
      '--demo-key',
      keyFile,
      '--publish-private-key',
      'I understand this key is public',
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(readFileSync(join(out, 'demo-key', 'merchant-public.pem'), 'utf8')).toBe(pair.publicPem);
    const { demoKey } = JSON.parse(readFileSync(join(out, 'examples.json'), 'utf8')) as { demoKey: { sha256: string } };
    expect(demoKey.sha256).toBe(
      createHashHex(parseKey(pair.publicPem).keyObject.export({ type: 'spki', format: 'der' })),
    );
  });

  it('exits 2 with one line on stderr and no stack trace when --spec does not exist, writing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const out = join(dir, 'site');
    const missing = join(dir, 'no-such-spec.yaml');
    const run = await runCliInProcess(['docs', '--out', out, '--spec', missing]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`wallet-conformance: cannot read spec ${missing}: no such file\n`);
    expect(existsSync(out)).toBe(false);
  });

  it('exits 2 with one line on stderr when --spec is not YAML', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'paths: [\n');
    const run = await runCliInProcess(['docs', '--out', join(dir, 'site'), '--spec', bad]);
    expect(run.status).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('not valid YAML');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('builds the traceability table from the --suites folder it is given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    mkdirSync(join(dir, 'suites', 'service'), { recursive: true });
    copyFileSync(join(SUITES_DIR, 'service', 'errors.yaml'), join(dir, 'suites', 'service', 'errors.yaml'));
    const run = await runCliInProcess(['docs', '--out', join(dir, 'site'), '--suites', join(dir, 'suites')]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const trace = readFileSync(join(dir, 'site', 'traceability.html'), 'utf8');
    expect(codes(cells(element(trace, 'tr', 'rule-ERR-404'))[3]!)).toContain('service/errors/unknown-path');
    const deposit = cells(element(trace, 'tr', 'rule-CB-ID-DEPOSIT'));
    expect(codes(deposit[3]!)).toEqual([]);
    expect(visible(deposit[4]!)).toBe('no check');
  });

  it('exits 2 with one line when --suites is not a folder, or the rule catalog lacks a rule the spec cites', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const missing = await runCliInProcess(['docs', '--out', join(dir, 'a'), '--suites', join(dir, 'no-such-folder')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      `wallet-conformance: cannot read suites folder ${join(dir, 'no-such-folder')}: no such folder\n`,
    );
    const catalog = parseDocument(readFileSync(RULES_PATH, 'utf8'));
    const list = catalog.get('rules') as { items: Array<{ get(key: string): unknown }> };
    list.items = list.items.filter((item) => item.get('id') !== 'ENERGY-PATH');
    writeFileSync(join(dir, 'rules.yaml'), String(catalog));
    const fewer = await runCliInProcess(['docs', '--out', join(dir, 'b'), '--rules', join(dir, 'rules.yaml')]);
    expect(fewer.status).toBe(2);
    expect(fewer.stderr).toBe(
      'wallet-conformance: spec/wallet-api.yaml cites rules that the rule catalog does not list: ENERGY-PATH\n',
    );
    expect(existsSync(join(dir, 'b'))).toBe(false);
  });

  it('exits 2 when --demo-key is a public key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const keyFile = join(dir, 'public.pem');
    writeFileSync(keyFile, generateMerchantKeyPair(1024).publicPem);
    const run = await runCliInProcess(['docs', '--out', join(dir, 'site'), '--demo-key', keyFile]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `wallet-conformance: ${keyFile}: expected the private key of the merchant key pair, but this is the public key\n`,
    );
    expect(existsSync(join(dir, 'site'))).toBe(false);
  });

  it('resolves a relative --out against the working directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-docs-'));
    const run = runCli(['docs', '--out', 'here'], undefined, { cwd: dir });
    expect(run.status).toBe(0);
    expect(existsSync(resolve(dir, 'here', 'index.html'))).toBe(true);
  });
});
