/**
 * docs/rule-coverage.md is complete and true: every MUST rule of spec/rules.yaml has its row in the
 * section of the party it binds, each row names at least two deliberately faulty implementations,
 * and each of them has a catch (test/fixtures/service-catches.ts, test/fixtures/merchant-catches.ts)
 * whose case is in the row and whose rule is the row's. The catch tables are proven by
 * test/service-faults.test.ts and test/merchant-faults.test.ts (faulty merchant clients, `msw:<name>`:
 * test/msw-client-faults.test.ts); this test holds the document to them. The party a rule binds is
 * the catalog's `binds`: `service` or `merchant` rules have their row in that section only; a rule
 * binding `both` has a row in one section at least, one per section at most.
 * One `describe` per section: each side is judged on its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { loadSuites } from '../src/runner/suite.js';
import { EMULATOR_FAULTS, FAULT_NAMES } from './fixtures/emulator-faults.js';
import { MSW_CLIENT_FAULT_NAMES, MSW_CLIENT_FAULTS } from './fixtures/msw-client-faults.js';
import { SERVICE_CATCHES } from './fixtures/service-catches.js';
import { WALLET_ENDPOINTS } from '../src/generated/msw-handlers.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
const MUST = rules.filter((rule) => rule.severity === 'MUST').map((rule) => rule.id);
const severity = new Map(rules.map((rule) => [rule.id, rule.severity]));

/** The party each rule binds, read from the catalog (`binds`; absent means both). */
const partyOf = new Map(rules.map((rule) => [rule.id, rule.binds ?? 'both']));
const party = (rule: string): 'service' | 'merchant' | 'both' => partyOf.get(rule) ?? 'both';

interface Row {
  rule: string;
  cases: string[];
  faults: string[];
  line: number;
}

const DOC = join(PACKAGE_ROOT, 'docs', 'rule-coverage.md');
const SECTIONS = { service: '## Service rules', merchant: '## Merchant rules' } as const;

/** The rows of one section's table, with their line numbers; a malformed row throws naming its line. */
function rowsOf(text: string, section: keyof typeof SECTIONS): Row[] {
  const lines = text.split('\n');
  const start = lines.indexOf(SECTIONS[section]);
  if (start < 0) throw new Error(`${DOC}: no section "${SECTIONS[section]}"`);
  const rows: Row[] = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const line = lines[i]!.trim();
    if (!line.startsWith('|') || /^\|\s*(rule|---)/.test(line)) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 3)
      throw new Error(`${DOC}:${i + 1}: a row has three cells (rule | cases | faults), not ${cells.length}`);
    const list = (cell: string) =>
      cell
        .split(',')
        .map((item) => item.trim().replace(/^`|`$/g, ''))
        .filter((item) => item !== '');
    rows.push({ rule: cells[0]!.replace(/^`|`$/g, ''), cases: list(cells[1]!), faults: list(cells[2]!), line: i + 1 });
  }
  return rows;
}

const text = readFileSync(DOC, 'utf8');
/**
 * The case ids a section may name: `suite/case` of its suites; the merchant section also
 * `msw:<operationId>`, the MSW handler that refuses a faulty merchant client (rules that bind the
 * merchant as the API client, test/msw-client-faults.test.ts).
 */
const caseIds = (side: 'service' | 'merchant') =>
  new Set([
    ...loadSuites()
      .filter((suite) => suite.side === side)
      // The suite's name under its side: `energy`, or `derived/<row>` for a derived suite (src/runner/derive/).
      .flatMap((suite) => suite.cases.map((c) => `${suite.name.slice(side.length + 1)}/${c.id}`)),
    ...(side === 'merchant' ? WALLET_ENDPOINTS.map((endpoint) => `msw:${endpoint.operationId}`) : []),
  ]);

/** What a section's rows are held to: its registry of faults and where each is caught. */
interface Registry {
  names: readonly string[];
  /** The rules a fault breaks. */
  rulesOf(fault: string): readonly string[];
  /** Where a fault is caught: case (`suite/case`) and rule. */
  catchesOf(fault: string): Array<{ case: string; rule: string }>;
}

function describeSection(section: keyof typeof SECTIONS, registry: () => Registry) {
  const own = MUST.filter((rule) => party(rule) === section);
  let rows: Row[];
  let reg: Registry;
  beforeAll(() => {
    rows = rowsOf(text, section);
    reg = registry();
  });
  const at = (row: Row) => `${DOC}:${row.line} (${row.rule})`;

  it(`has exactly one row for each MUST rule that binds only the ${section} (${own.length} rules)`, () => {
    const count = (rule: string) => rows.filter((row) => row.rule === rule).length;
    expect(own.filter((rule) => count(rule) !== 1).map((rule) => `${rule}: ${count(rule)} rows`)).toEqual([]);
  });

  it("has at most one row per rule, each a rule of the catalog that binds this section's party", () => {
    const seen = rows.map((row) => row.rule);
    expect(seen.filter((rule, i) => seen.indexOf(rule) !== i)).toEqual([]);
    const other = section === 'service' ? 'merchant' : 'service';
    expect(rows.filter((row) => !severity.has(row.rule) || party(row.rule) === other).map(at)).toEqual([]);
  });

  it('names at least two faults in every row', () => {
    expect(
      rows.filter((row) => row.faults.length < 2).map((row) => `${at(row)}: ${row.faults.length} fault(s)`),
    ).toEqual([]);
  });

  it('names only cases of its suites', () => {
    const known = caseIds(section);
    expect(
      rows.flatMap((row) => row.cases.filter((id) => !known.has(id)).map((id) => `${at(row)}: no case ${id}`)),
    ).toEqual([]);
  });

  it("names only faults of its registry, each caught by one of the row's cases under the row's rule", () => {
    const problems = rows.flatMap((row) =>
      row.faults.flatMap((fault) => {
        if (!reg.names.includes(fault)) return [`${at(row)}: no fault ${fault}`];
        const catches = reg.catchesOf(fault);
        return catches.some((c) => c.rule === row.rule && row.cases.includes(c.case))
          ? []
          : [`${at(row)}: ${fault} is caught at ${catches.map((c) => `${c.case} under ${c.rule}`).join('; ')}`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('lists every fault of the registry (but pure readings of open points) in some row', () => {
    const listed = new Set(rows.flatMap((row) => row.faults));
    const judged = reg.names.filter((fault) => reg.rulesOf(fault).some((rule) => !rule.startsWith('U-')));
    expect(judged.filter((fault) => !listed.has(fault))).toEqual([]);
  });
}

describe('docs/rule-coverage.md, service rules', () => {
  describeSection('service', () => ({
    names: FAULT_NAMES,
    rulesOf: (fault) => EMULATOR_FAULTS[fault as keyof typeof EMULATOR_FAULTS].rules,
    catchesOf: (fault) => SERVICE_CATCHES[fault as keyof typeof SERVICE_CATCHES].catches,
  }));
});

/** One catch of the merchant table: `case` or an `id` `merchant/<suite>/<case>/<check>`, and a rule. */
type MerchantCatch = { case?: string; id?: string; rule: string };

describe('docs/rule-coverage.md, merchant rules', () => {
  let merchant: Registry | undefined;
  beforeAll(async () => {
    // Loaded by path: the merchant engineer moves the table there (test/fixtures/merchant-catches.ts).
    const path = './fixtures/merchant-catches.js';
    const catches = (
      (await import(path)) as {
        MERCHANT_CATCHES: Record<string, MerchantCatch | MerchantCatch[] | { catches: MerchantCatch[] }>;
      }
    ).MERCHANT_CATCHES;
    const { MERCHANT_FAULTS } = await import('./fixtures/faulty-merchant.js');
    const list = (entry: MerchantCatch | MerchantCatch[] | { catches: MerchantCatch[] }): MerchantCatch[] =>
      Array.isArray(entry) ? entry : 'catches' in entry ? entry.catches : [entry];
    // `suite/case` as the document names it: the suite's name under its side (`derived/<row>` for a derived suite), then the case.
    const caseOf = (c: MerchantCatch) => c.case ?? c.id!.split('/').slice(1, -1).join('/');
    // `msw:<name>`: a faulty merchant client (test/fixtures/msw-client-faults.ts) the MSW handlers refuse.
    const client = (fault: string) =>
      fault.startsWith('msw:') ? MSW_CLIENT_FAULTS[fault.slice('msw:'.length)] : undefined;
    merchant = {
      names: [
        ...Object.keys(MERCHANT_FAULTS).filter((name) => name !== 'none'),
        ...MSW_CLIENT_FAULT_NAMES.map((name) => `msw:${name}`),
      ],
      rulesOf: (fault) => client(fault)?.rules ?? (catches[fault] ? list(catches[fault]).map((c) => c.rule) : []),
      catchesOf: (fault) =>
        client(fault)?.catches.map((c) => ({ case: c.case, rule: c.rule })) ??
        (catches[fault] ? list(catches[fault]).map((c) => ({ case: caseOf(c), rule: c.rule })) : []),
    };
  });
  describeSection('merchant', () => merchant!);
});

describe('docs/rule-coverage.md, rules that bind both parties', () => {
  it('has a row for each of them in one section at least', () => {
    const rows = [...rowsOf(text, 'service'), ...rowsOf(text, 'merchant')];
    expect(MUST.filter((rule) => party(rule) === 'both' && !rows.some((row) => row.rule === rule))).toEqual([]);
  });
});
