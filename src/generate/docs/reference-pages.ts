import { stringifyExact } from '../../core/exact-json.js';
import { answerBlocks, idempotencyOf, keyFieldsText } from './callback-page.js';
import type { DocsContext } from './docs-context.js';
import { businessFailures } from './endpoint-page.js';
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
  ruleAnchor,
  plainText,
  type Block,
  type Page,
  type Row,
  type Text,
} from './model.js';
import { isNode, literal } from '../../spec/document.js';
import { union } from './lists.js';
import { checksCell, ruleLinks, severityBadge, toneOf } from './rule-cells.js';
import { conditionTable, fieldTable } from './schema-tables.js';
import { objectView } from './schema-view.js';
import { unspecifiedTable } from './unspecified.js';
import { humanize, slug } from './words.js';

/** The anchor of a check's row on the traceability page. */
const checkAnchor = (id: string): string => `check-${id}`;

/** The index: what the interface is, every page, the demo key that made the examples. */
export function indexPage(ctx: DocsContext): Page {
  const info = ctx.model.info();
  const title = info.title ?? 'Interface';
  const blocks: Block[] = [
    para(
      plainText(`Version ${info.version ?? ''}. `),
      ...(info.summary ? [plainText(info.summary)] : []),
      plainText(' Generated from '),
      codeText(ctx.source.name),
      plainText(` (sha256 ${ctx.source.sha256.slice(0, 12)}…) and the rule catalog.`),
    ),
    ...paragraphs(info.description ?? '', ctx.ruleIds),
    ...interfaceTables(ctx),
    ...referenceList(ctx),
    heading(2, 'unspecified', 'Unspecified across the interface'),
    unspecifiedTable(
      ctx,
      ctx.unspecified.filter((point) => point.where === 'the whole interface'),
    ),
    para(
      plainText('Every other unspecified point is shown where it applies, and all of them in the '),
      link('rules', 'rule catalog', 'unspecified'),
      plainText('.'),
    ),
    ...demoKeySection(ctx),
    ...controlApi(ctx),
  ];
  return { id: 'index', title: `${title}: reference`, nav: 'Overview', group: 'overview', blocks };
}

/** The endpoints and the callbacks of the interface, one row each. */
function interfaceTables(ctx: DocsContext): Block[] {
  return [
    heading(2, 'endpoints', 'Endpoints'),
    {
      kind: 'table',
      id: 'endpoints-table',
      columns: ['endpoint', 'method and path', 'summary', 'rules'],
      rows: ctx.endpoints.map((endpoint) => ({
        cells: [
          [link(endpoint.pageId, endpoint.operationId)],
          [codeText(`${endpoint.method} ${endpoint.server}${endpoint.path}`)],
          [plainText(endpoint.operation.summary ?? '')],
          ruleLinks(endpoint.operation.rules),
        ],
      })),
    },
    heading(2, 'callbacks', 'Callbacks'),
    para(
      plainText(
        "The service POSTs each event to the merchant's callback URL as the Base64 text of the RSA-encrypted JSON payload, the raw body.",
      ),
    ),
    {
      kind: 'table',
      id: 'callbacks-table',
      columns: ['type', 'callback', 'idempotency key', 'rules'],
      rows: ctx.callbacks.map((callback) => {
        const view = objectView(ctx.model.flatten(callback.schemaName));
        const key = idempotencyOf(view);
        return {
          cells: [
            [plainText(String(callback.type))],
            [link(callback.pageId, callback.label)],
            key ? [plainText(keyFieldsText(key))] : [plainText('—')],
            ruleLinks(view.rules),
          ],
        };
      }),
    },
  ];
}

/** The reference pages, each with what it counts. */
function referenceList(ctx: DocsContext): Block[] {
  const checked = ctx.rules.filter((rule) => (ctx.coverage.get(rule.id) ?? []).length > 0).length;
  return [
    heading(2, 'reference', 'Reference'),
    {
      kind: 'list',
      items: [
        [
          link('rules', 'Rule catalog'),
          plainText(
            `: ${ctx.rules.length} rules (${count(ctx, 'MUST')} MUST, ${count(ctx, 'SHOULD')} SHOULD, ${count(ctx, 'UNSPECIFIED')} unspecified), and every unspecified point of the spec.`,
          ),
        ],
        [
          link('traceability', 'Traceability'),
          plainText(
            `: rule → checks → suites and cases; ${checked} of ${ctx.rules.length} rules are judged by a check.`,
          ),
        ],
        [link('idempotency', 'Callback idempotency'), plainText(': the key of every callback type.')],
        [
          link('errors', 'Error tables'),
          plainText(
            ": HTTP error bodies, failure envelopes and business codes, card close failures, the merchant's answers.",
          ),
        ],
      ],
    },
  ];
}

/** The demo key the examples were sealed with, the crypto profile, and how to decrypt an example. */
function demoKeySection(ctx: DocsContext): Block[] {
  const profile = ctx.demo.profile;
  const requestHalf = profile.request === 'public' ? 'private' : 'public';
  return [
    heading(2, 'demo-key', 'Examples and the demo key'),
    para(
      plainText('Every encrypted example in these pages was made for this build with a throwaway '),
      boldText(`${ctx.demo.bits}-bit demo key pair`),
      plainText(' (public key SHA-256 fingerprint '),
      codeText(ctx.demo.fingerprint.slice(0, 16)),
      plainText(
        "…), never a real merchant key. Private-key PKCS#1 encryption is deterministic, public-key encryption is not; a new build makes a new key, so ciphertexts differ from build to build. The plain payloads are the spec's own examples, exact digits kept.",
      ),
    ),
    {
      kind: 'table',
      id: 'profile-table',
      columns: ['direction', 'encrypted with', 'decrypted with'],
      rows: (['request', 'response', 'callback'] as const).map((direction) => ({
        cells: [
          [codeText(direction)],
          [plainText(`the ${profile[direction]} key`)],
          [plainText(`the ${profile[direction] === 'public' ? 'private' : 'public'} key`)],
        ],
      })),
    },
    para(
      plainText(`Padding `),
      codeText(profile.padding),
      plainText(', plaintext blocks '),
      codeText(String(profile.plaintextBlock)),
      plainText('. The demo key files: '),
      { kind: 'file', href: 'demo-key/merchant-public.pem', text: 'merchant-public.pem' },
      plainText(', '),
      { kind: 'file', href: 'demo-key/merchant-private.pem', text: 'merchant-private.pem' },
      plainText('; every example as data: '),
      { kind: 'file', href: 'examples.json', text: 'examples.json' },
      plainText('. Decrypt one yourself:'),
    ),
    {
      kind: 'code',
      language: 'sh',
      text: `echo '<Base64 of a request example>' | npx wallet-conformance crypto decrypt --direction request \\\n  --${requestHalf}-key demo-key/merchant-${requestHalf}.pem --pretty`,
    },
  ];
}

function count(ctx: DocsContext, severity: string): number {
  return ctx.rules.filter((rule) => rule.severity === severity).length;
}

/** The emulator's control API, listed for completeness: it is not part of the interface. */
function controlApi(ctx: DocsContext): Block[] {
  const rows: Row[] = [];
  for (const { method, path, summary } of ctx.model.controlOperations()) {
    rows.push({ cells: [[codeText(`${method.toUpperCase()} ${path}`)], [plainText(summary ?? '')]] });
  }
  if (rows.length === 0) return [];
  return [
    heading(2, 'control-api', 'Control API (test doubles only)'),
    para(
      plainText(
        'Not part of the wallet service: the emulator (and any service test double that offers it) lets a suite set up state and make the service emit callbacks. Every call carries ',
      ),
      codeText('X-Control-Token'),
      plainText('.'),
    ),
    { kind: 'table', id: 'control-table', columns: ['call', 'what it does'], rows },
  ];
}

/** The rule catalog: every rule with its anchor, where the pages cite it, and every unspecified point. */
export function rulesPage(ctx: DocsContext, citedOn: Map<string, Array<{ id: string; nav: string }>>): Page {
  const rows: Row[] = ctx.rules.map((rule) => ({
    id: ruleAnchor(rule.id),
    tone: toneOf(rule.severity),
    cells: [
      [codeText(rule.id)],
      severityBadge(ctx, rule.id),
      prose(rule.text),
      [plainText(rule.source)],
      rule.blackBox ? [plainText('yes')] : [boldText('no'), plainText(': '), ...prose(rule.reason ?? '', ctx.ruleIds)],
      join((citedOn.get(rule.id) ?? []).map((page) => [link(page.id, page.nav)])),
      checksCell(ctx, rule.id),
    ],
  }));
  return {
    id: 'rules',
    title: 'Rule catalog',
    nav: 'Rule catalog',
    group: 'reference',
    blocks: [
      para(
        plainText(`${ctx.rules.length} rules of the interface, from `),
        codeText('spec/rules.yaml'),
        plainText('. '),
        badge('must', 'MUST'),
        plainText(' fails a run; '),
        badge('should', 'SHOULD'),
        plainText(' warns unless '),
        codeText('--strict'),
        plainText('; '),
        badge('unspecified', 'UNSPECIFIED'),
        plainText(' is a point the interface leaves open, where the toolkit states an assumption (its checks warn).'),
      ),
      heading(2, 'catalog', 'Rules'),
      {
        kind: 'table',
        id: 'rules-table',
        columns: ['rule', 'severity', 'text', 'source', 'black-box', 'cited on', 'checked by'],
        rows,
      },
      heading(2, 'unspecified', 'Unspecified points'),
      para(
        plainText('Every '),
        codeText('x-unspecified'),
        plainText(' of the spec: what the interface leaves open, where, and what the toolkit assumes.'),
      ),
      unspecifiedTable(ctx, ctx.unspecified, 'unspecified-table'),
    ],
  };
}

/** How far the checks reach, counted over the rule rows of the traceability page. */
interface CoverageTally {
  checked: number;
  notBlackBox: number;
  missing: number;
  assumptions: number;
}

/** rule → checks → suites/cases; MUST rules without a check show why; unspecified points show as such. */
export function traceabilityPage(ctx: DocsContext): Page {
  const tally: CoverageTally = { checked: 0, notBlackBox: 0, missing: 0, assumptions: 0 };
  const rows = ctx.rules.map((rule) => traceabilityRow(ctx, rule, tally));
  const { checkRows, unknown } = checkTable(ctx);
  return {
    id: 'traceability',
    title: 'Traceability: rule → checks → suites',
    nav: 'Traceability',
    group: 'reference',
    blocks: [
      para(
        plainText(
          "For every rule of the catalog: the registered checks that judge it and the suite cases that run them (an expectation judges its own rules, else its case's rules, exactly as the runner attributes results).",
        ),
      ),
      {
        kind: 'list',
        items: [
          [
            badge('covered', 'checked'),
            plainText(` ${tally.checked} MUST/SHOULD rules are judged by at least one check.`),
          ],
          [
            badge('plain', 'not black-box'),
            plainText(` ${tally.notBlackBox} MUST/SHOULD rules cannot be observed from outside; the catalog says why.`),
          ],
          [badge('uncovered', 'no check'), plainText(` ${tally.missing} MUST/SHOULD rules have no check.`)],
          [badge('unspecified', 'unspecified'), plainText(` ${tally.assumptions} points the interface leaves open.`)],
        ],
      },
      heading(2, 'rules', 'Rules'),
      {
        kind: 'table',
        id: 'traceability-table',
        columns: ['rule', 'severity', 'checks', 'suites/cases', 'status'],
        rows,
      },
      heading(2, 'checks', 'Checks'),
      para(
        plainText('Every registered check, the rules it declares, and the rules suites use it for.'),
        ...(unknown.length > 0
          ? [plainText(' Suites name unknown checks: '), ...join(unknown.map((id) => [codeText(id)]))]
          : []),
      ),
      {
        kind: 'table',
        id: 'checks-table',
        columns: ['check', 'title', 'declares', 'judges in suites'],
        rows: checkRows,
      },
    ],
  };
}

/** A rule's row: the checks and cases that judge it, and its status, counted into `tally`. */
function traceabilityRow(ctx: DocsContext, rule: DocsContext['rules'][number], tally: CoverageTally): Row {
  const coverage = ctx.coverage.get(rule.id) ?? [];
  const checks = union(coverage.map((entry) => entry.check));
  const cases = union(coverage.map((entry) => `${entry.suite}/${entry.caseId}`));
  let status: Text;
  let tone: Row['tone'];
  if (rule.severity === 'UNSPECIFIED') {
    tally.assumptions++;
    const places = union(ctx.unspecified.filter((point) => point.rule === rule.id).map((point) => point.where));
    status = [
      badge('unspecified', 'unspecified'),
      plainText(
        ` the interface is silent; ${checks.length > 0 ? 'checks of the assumption warn' : 'no check'}. Marked at: ${places.join('; ') || '—'}`,
      ),
    ];
    tone = 'unspecified';
  } else if (checks.length > 0) {
    tally.checked++;
    status = [badge('covered', 'checked'), plainText(` ${cases.length} case${cases.length === 1 ? '' : 's'}`)];
    tone = 'covered';
  } else if (!rule.blackBox) {
    tally.notBlackBox++;
    status = [
      badge('plain', 'not black-box'),
      plainText(' '),
      ...prose(rule.reason ?? 'no check can observe it from outside.', ctx.ruleIds),
    ];
    tone = 'plain';
  } else {
    tally.missing++;
    status = [badge('uncovered', 'no check')];
    tone = 'uncovered';
  }
  return {
    id: ruleAnchor(rule.id),
    tone,
    cells: [
      [link('rules', [codeText(rule.id)], ruleAnchor(rule.id))],
      severityBadge(ctx, rule.id),
      join(
        checks.map((check) => [link('', [codeText(check)], checkAnchor(check))]),
        plainText(' '),
      ),
      join(
        cases.map((name) => [codeText(name)]),
        plainText(' '),
      ),
      status,
    ],
  };
}

/** Every registered check with the rules suites use it for; the check ids suites name that no check has. */
function checkTable(ctx: DocsContext): { checkRows: Row[]; unknown: string[] } {
  const expectations = new Map<string, { count: number; rules: string[] }>();
  for (const [rule, coverage] of ctx.coverage) {
    for (const entry of coverage) {
      const current = expectations.get(entry.check) ?? { count: 0, rules: [] };
      expectations.set(entry.check, { count: current.count + 1, rules: union(current.rules, [rule]) });
    }
  }
  const checkRows: Row[] = [...ctx.checks.values()].map((check) => {
    const used = expectations.get(check.id);
    return {
      id: checkAnchor(check.id),
      cells: [
        [codeText(check.id)],
        [plainText(check.title)],
        ruleLinks(check.rules),
        used ? ruleLinks(used.rules) : [badge('uncovered', 'unused')],
      ],
    };
  });
  return { checkRows, unknown: [...expectations.keys()].filter((id) => !ctx.checks.has(id)) };
}

/** Every callback type with its idempotency key (CB-ID-*), from the spec. */
export function idempotencyPage(ctx: DocsContext): Page {
  const keyFn = ctx.options.idempotencyKey;
  const rows: Row[] = ctx.callbacks.map((callback) => {
    const view = objectView(ctx.model.flatten(callback.schemaName));
    const key = idempotencyOf(view);
    const example = view.examples[0];
    let sample = '';
    if (keyFn && isNode(example)) {
      try {
        sample = keyFn(example);
      } catch (error) {
        sample = `(no key: ${(error as Error).message})`;
      }
    }
    return {
      id: `type-${callback.type}`,
      cells: [
        [plainText(String(callback.type))],
        [link(callback.pageId, callback.label)],
        key ? ruleLinks([key.rule]) : [plainText('—')],
        key
          ? join(
              key.fields.map((field) => [
                codeText(field.path),
                ...(field.required ? [] : [plainText(' (when present)')]),
              ]),
            )
          : [plainText('—')],
        ...(keyFn ? [sample ? [codeText(sample)] : [plainText('—')]] : []),
      ],
    };
  });
  const cite = (id: string): Block =>
    para(...ruleLinks([id]), plainText(': '), ...prose(ctx.ruleById.get(id)?.text ?? '', ctx.ruleIds));
  return {
    id: 'idempotency',
    title: 'Callback idempotency',
    nav: 'Idempotency',
    group: 'reference',
    blocks: [
      para(
        plainText(
          "The service may deliver one event several times; the merchant processes each event once and acknowledges every duplicate. The key of each type comes from the spec: the fields of the type's schema that cite its ",
        ),
        codeText('CB-ID-*'),
        plainText(' rule.'),
      ),
      ...['CB-ONCE', 'CB-DUP-ACK', 'CB-UUID'].filter((id) => ctx.ruleById.has(id)).map(cite),
      heading(2, 'keys', 'Keys per type'),
      {
        kind: 'table',
        id: 'idempotency-table',
        columns: [
          'type',
          'callback',
          'rule',
          'key fields',
          ...(keyFn ? ["reference merchant's key of the spec example"] : []),
        ],
        rows,
      },
      para(
        codeText('requestUUID'),
        plainText(' is new on every delivery and is never part of a key; '),
        codeText('trackingId'),
        plainText(' is stable across the deliveries of one event.'),
      ),
    ],
  };
}

/** Every error table of the interface on one page. */
export function errorsPage(ctx: DocsContext): Page {
  const blocks: Block[] = [
    para(
      plainText(
        "Errors of the order endpoints are HTTP errors with fixed bodies, or HTTP 200 failure envelopes; card close fails inside HTTP 200; callbacks fail through the merchant's answer.",
      ),
    ),
    heading(2, 'http-errors', 'HTTP error bodies'),
    httpErrorTable(ctx),
  ];
  const orderSubmission = ctx.unspecified.filter((point) => point.rule === 'U-CODES' && point.where.startsWith('POST'));
  for (const point of orderSubmission)
    blocks.push({
      kind: 'note',
      tone: 'unspecified',
      text: [badge('unspecified', 'unspecified'), plainText(` ${point.where}: `), ...prose(point.note, ctx.ruleIds)],
    });
  blocks.push(...envelopeFailureSection(ctx), ...businessCodeSection(ctx));
  for (const endpoint of ctx.endpoints) {
    const failures = businessFailures(ctx, endpoint.operation);
    if (failures.length === 0 || failures.some((block) => block.kind === 'heading' && block.id === 'business-failures'))
      continue;
    blocks.push(
      heading(2, `failures-${slug(endpoint.operationId)}`, [
        link(endpoint.pageId, endpoint.operationId),
        plainText(': failures'),
      ]),
      ...failures,
    );
  }
  const webhook = ctx.callbacks[0];
  if (webhook) {
    const answers = answerBlocks(ctx, webhook.operation, []);
    blocks.push(
      heading(2, 'callback-answers', "Callbacks: the merchant's answer"),
      ...answers.filter((block) => !(block.kind === 'heading' && block.id === 'answer')),
    );
  }
  return { id: 'errors', title: 'Error tables', nav: 'Error tables', group: 'reference', blocks };
}

/** The HTTP error responses of every endpoint, one row per shared response with the endpoints that answer it. */
function httpErrorTable(ctx: DocsContext): Block {
  const byResponse = new Map<
    string,
    { status: string; meaning: string; body: string; rules: string[]; pages: Array<{ id: string; nav: string }> }
  >();
  for (const endpoint of ctx.endpoints) {
    for (const response of endpoint.operation.responses) {
      const { status } = response;
      if (status.startsWith('2')) continue;
      const key = response.component ?? `${endpoint.operationId}-${status}`;
      const schema = response.media[0]?.schema;
      const view = schema ? objectView(schema) : undefined;
      const entry = byResponse.get(key) ?? {
        status,
        meaning: response.description ?? '',
        body: view?.examples[0] === undefined ? '(no body)' : stringifyExact(view.examples[0]),
        rules: union(response.rules, view?.rules ?? []),
        pages: [],
      };
      entry.pages.push({ id: endpoint.pageId, nav: endpoint.operationId });
      byResponse.set(key, entry);
    }
  }
  return {
    kind: 'table',
    id: 'http-error-table',
    columns: ['status', 'meaning', 'body (exact)', 'rules', 'answered by'],
    rows: [...byResponse.values()].map((entry) => ({
      id: `http-${entry.status}`,
      cells: [
        [codeText(`HTTP ${entry.status}`)],
        prose(entry.meaning, ctx.ruleIds),
        [codeText(entry.body)],
        ruleLinks(entry.rules),
        join(entry.pages.map((page) => [link(page.id, page.nav)])),
      ],
    })),
  };
}

/** The order endpoints' envelope with its failure examples (code not 0). */
function envelopeFailureSection(ctx: DocsContext): Block[] {
  const envelope = envelopeSchema(ctx);
  if (!envelope) return [];
  const view = objectView(ctx.model.flatten(envelope));
  return [
    heading(2, 'envelope-failures', 'Failure envelopes (HTTP 200)'),
    ...paragraphs(view.description, ctx.ruleIds),
    fieldTable(ctx, view, { id: 'envelope-fields' }),
    ...conditionTable(ctx, view.conditions, 'envelope-conditions'),
    ...view.examples
      .filter((example) => isNode(example) && literal(example.code) !== '0')
      .map((example, i): Block => ({
        kind: 'code',
        title: [plainText(`Failure envelope ${i + 1}`)],
        language: 'json',
        text: stringifyExact(example, 2),
      })),
  ];
}

/** The emulator's business codes, marked as its own: the interface names only 0 (U-CODES). */
function businessCodeSection(ctx: DocsContext): Block[] {
  const codes = ctx.options.businessCodes ?? [];
  return [
    heading(2, 'business-codes', 'Business codes'),
    {
      kind: 'note',
      tone: 'unspecified',
      text: [
        badge('unspecified', 'unspecified'),
        plainText(' '),
        link('rules', [codeText('U-CODES')], ruleAnchor('U-CODES')),
        plainText(': '),
        ...prose(ctx.ruleById.get('U-CODES')?.text ?? 'non-zero business codes are not shown.'),
        plainText(' The interface names only '),
        codeText('0'),
        plainText(" (success); the codes below are the emulator's choice, not the service's."),
      ],
    },
    {
      kind: 'table',
      id: 'business-code-table',
      columns: ['code', 'name', "meaning (the emulator's)"],
      rows: codes.map((code) => ({
        id: `code-${literal(code.code)}`,
        tone: 'unspecified',
        cells: [[codeText(literal(code.code))], [codeText(code.name)], [plainText(humanize(code.name))]],
      })),
      empty: 'no implementation codes were given',
    },
  ];
}

/** The order endpoints' envelope: the schema an encrypted 200 inherits from. */
function envelopeSchema(ctx: DocsContext): string | undefined {
  for (const endpoint of ctx.endpoints) {
    const schema = endpoint.operation.responses.find((response) => response.status === '200')?.media[0]?.schema;
    const base = schema?.parts.map((part) => part.name).find(Boolean);
    if (base) return base;
  }
  return undefined;
}
