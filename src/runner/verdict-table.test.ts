// Keeps the verdict model table (docs/decisions/0061-verdict-model.md) true: each row is an observation run through the real check
// and judged as the engine judges it (judgeFinding), and the verdict must be the row's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, checkContext, decryptedAnswer, exchange, merchantTarget } from '../../test/support/check-context.js';
import { PACKAGE_ROOT, RULES_PATH } from '../platform/package-paths.js';
import { parseRuleCatalog } from '../core/rules.js';
import { encodeBase64 } from '../crypto/base64.js';
import { LENIENT_BASE64_REASONS } from '../wire/crypto-failure.js';
import { answersCheck } from './checks/answers.js';
import { envelopeCheck } from './checks/envelope.js';
import { errorBodyCheck } from './checks/error-body.js';
import { refusedCheck } from './checks/refused.js';
import { statusCheck } from './checks/status.js';
import type { Exchange, ReceivedResponse } from './observation.js';
import { judgedRules, judgeFinding } from './verdict.js';
import { loadSuites } from './suite.js';
import type { Finding, Target } from './types.js';
import { GOOD_ORDER, ORDER_URL } from '../../test/support/order-request.js';

const rules = new Map(parseRuleCatalog(readFileSync(RULES_PATH, 'utf8')).map((rule) => [rule.id, rule]));

/** The rows of the table in docs/decisions/0061-verdict-model.md: what the target does → the verdict written. */
function tableRows(): Array<{ does: string; verdict: string }> {
  const section = readFileSync(join(PACKAGE_ROOT, 'docs/decisions/0061-verdict-model.md'), 'utf8');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| what') && !line.startsWith('| ---'))
    .map((line) => {
      const cells = line.split(' | ');
      return { does: cells[0]!.slice(2), verdict: cells[1]! };
    });
}

const suites = loadSuites();
/** The labels a shipped case gives its (first) expectation of `check`: the rows judge the suites as shipped. */
function labelsOf(suite: string, caseId: string, check: string): string[] {
  const testCase = suites.find((s) => s.name === suite)?.cases.find((c) => c.id === caseId);
  const expectation = testCase?.steps.flatMap((step) => step.expect ?? []).find((e) => e.check === check);
  if (!testCase || !expectation) throw new Error(`no ${check} in ${suite}/${caseId}`);
  return expectation.rules ?? testCase.rules;
}

const ORDER = ORDER_URL;
const good = GOOD_ORDER;
const json = { 'content-type': 'application/json' };
const accepted = answer(200, '{"code":0,"message":"","data":"AQID"}', { headers: json });
const order = (
  data: string,
  plain: Record<string, unknown> = good,
  contentType = 'application/x-www-form-urlencoded',
): Exchange => ({
  request: {
    method: 'POST',
    url: ORDER,
    headers: { 'content-type': contentType },
    body: new URLSearchParams({ data }).toString(),
    plain: JSON.stringify(plain),
  },
  response: accepted,
});
/** Every lenient Base64 form (unpadded, non-zero unused bits) of 2 bytes, from LENIENT_BASE64_REASONS. */
const lenientForms: Record<string, string> = {
  'missing-padding': encodeBase64(Buffer.from([1, 2])).replace(/=+$/, ''),
  'non-canonical-base64': 'AQJ=',
};

/** One observation: a check, its parameters, what the step produced, the expectation's labels, the side. */
interface Scenario {
  run(ctx: ReturnType<typeof checkContext>): Finding[];
  params?: Record<string, unknown>;
  exchanges: Exchange[];
  labels: string[];
  step?: Parameters<typeof checkContext>[0] extends infer O ? (O extends { step?: infer S } ? S : never) : never;
  target?: Target;
}
const refusal = (exchanges: Exchange[], labels: string[]): Scenario => ({
  run: (ctx) => refusedCheck.run(ctx),
  exchanges,
  labels,
});
const acks = (response: ReceivedResponse): Scenario => ({
  run: (ctx) => answersCheck.run(ctx),
  params: { errCode: 'zero' },
  exchanges: [exchange(response)],
  labels: ['CB-ERRCODE'],
  target: merchantTarget,
});

/** Each row's observations, by the row's first cell; every one must get the row's verdict. */
const SCENARIOS: Record<string, Scenario[]> = {
  'accepts `data` without its `=` padding, or with non-zero unused bits': [...LENIENT_BASE64_REASONS].map((reason) =>
    refusal([order(lenientForms[reason]!)], labelsOf('service/energy', 'unpadded-data', 'refused')),
  ),
  'accepts `data` with URL-safe letters or line breaks': [
    refusal([order('AQ-_')], ['ENERGY-DATA']),
    refusal([order('AQID\nAQID')], ['ENERGY-DATA']),
  ],
  'accepts `"1"` for tenantType, `"42"` for userId, `20931` for tenantUserId': [
    refusal([order('AQID', { ...good, tenantType: '1' })], ['ORDER-TENANT-TYPE']),
    refusal([order('AQID', { ...good, userId: '42', tenantUserId: 20931 })], ['ORDER-FIELDS']),
  ],
  'accepts an order without userId, or with tenantType `"2"`': [
    refusal([order('AQID', { ...good, userId: undefined })], ['ORDER-FIELDS']),
    refusal([order('AQID', { ...good, tenantType: '2' })], ['ORDER-FIELDS']),
  ],
  'accepts a form body under another Content-Type': [
    refusal([order('AQID', good, 'text/plain')], ['ENERGY-CT']),
    refusal([order('AQI', { ...good, tenantType: '1' }, 'application/json')], ['ENERGY-CT']),
  ],
  'answers a JSON envelope under a Content-Type other than JSON': [
    {
      run: (ctx) => envelopeCheck.run(ctx),
      exchanges: [
        exchange({
          ...decryptedAnswer(200, '{"code":0,"message":"","data":"AQID"}', '{}'),
          headers: { 'content-type': 'text/plain' },
        }),
      ],
      labels: ['ENV-CODE', 'ENV-MSG', 'ENV-DATA'],
    },
  ],
  'answers envelope `data` without its `=` padding': [
    {
      run: (ctx) => envelopeCheck.run(ctx),
      exchanges: [
        exchange({
          ...decryptedAnswer(200, '{"code":0,"message":"","data":"AQI"}', '{}'),
          headers: json,
          lenientBase64: 'missing-padding',
        }),
      ],
      labels: ['ENV-DATA'],
    },
  ],
  'accepts a long order (labelled U-LIMITS) and answers `data` that does not open': [
    {
      run: (ctx) => envelopeCheck.run(ctx),
      exchanges: [
        exchange(
          answer(200, '{"code":0,"message":"","data":"AQID"}', {
            headers: json,
            decryptError: 'no key opens it [wrong-key]',
          }),
        ),
      ],
      labels: labelsOf('service/orders', 'long-callback-id', 'envelope'),
    },
  ],
  'refuses that long order': [
    {
      run: (ctx) => envelopeCheck.run(ctx),
      exchanges: [exchange(answer(200, '{"code":40013,"message":"too long","data":""}', { headers: json }))],
      labels: labelsOf('service/orders', 'long-callback-id', 'envelope'),
    },
  ],
  'answers an order without a key with another 401 body': [
    {
      run: (ctx) => errorBodyCheck.run(ctx),
      params: { schema: 'UnauthorizedError' },
      exchanges: [exchange(answer(401, '{"error":"no key"}'))],
      labels: labelsOf('service/errors', 'order-missing-key', 'error-body'),
      step: { request: { endpoint: 'order' } },
    },
  ],
  'serves `/api/v2/…` (not 404)': [
    {
      run: (ctx) => statusCheck.run(ctx),
      params: { equals: 404 },
      exchanges: [exchange(accepted)],
      labels: labelsOf('service/errors', 'unversioned-path', 'status'),
    },
  ],
  'refuses a withdrawal carrying expiryHours': [
    {
      run: (ctx) => envelopeCheck.run(ctx),
      exchanges: [
        exchange(answer(200, '{"code":40010,"message":"expiryHours is for ENERGY","data":""}', { headers: json })),
      ],
      labels: labelsOf('service/orders', 'withdrawal-with-expiry', 'envelope'),
    },
  ],
  '(merchant) answers errCode 0 with HTTP 201, or written `0.0`': [
    acks(answer(201, '{"errCode":0}')),
    acks(answer(200, '{"errCode":0.0}')),
  ],
  '(merchant) answers `{"errCode":"0"}` where it processed': [acks(answer(200, '{"errCode":"0"}'))],
  "(service) fails a check labelled only with a merchant's rule (CB-KEY-FIRST)": [
    {
      run: (ctx) => statusCheck.run(ctx),
      params: { equals: 200 },
      exchanges: [exchange(answer(500, 'down'))],
      labels: ['CB-KEY-FIRST'],
    },
  ],
};

describe('docs/decisions/0061-verdict-model.md: the verdict model table', () => {
  const rows = tableRows();

  it('has a scenario for every row and a row for every scenario', () => {
    expect(rows.map((row) => row.does).sort()).toEqual(Object.keys(SCENARIOS).sort());
  });

  it.each(rows.map((row) => [row.does, row.verdict] as const))('%s → %s', (does, verdict) => {
    const [, status, rule] = /^(failed|warning|passed)(?: \(([A-Z0-9-]+)\))?$/.exec(verdict) ?? [];
    expect(status, `a verdict the table cannot hold: ${verdict}`).toBeDefined();
    for (const scenario of SCENARIOS[does] ?? []) {
      const target = scenario.target ?? checkContext().target;
      const findings = scenario.run(
        checkContext({
          target,
          params: scenario.params ?? {},
          outcome: { exchanges: scenario.exchanges },
          ...(scenario.step ? { step: scenario.step } : {}),
        }),
      );
      const worst = findings.find((f) => f.status === 'failed') ?? findings[0]!;
      expect(judgeFinding(worst, scenario.labels, rules, false, target.side).status, `${does}: ${worst.message}`).toBe(
        status,
      );
      if (rule) expect(judgedRules(worst, scenario.labels)).toContain(rule);
    }
  });
});
