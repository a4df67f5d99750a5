import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded } from '../src/cli/embedded.js';
import { RULES_PATH } from '../src/core/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { EMULATOR_FAULTS, FAULT_NAMES, faultyVariant, type EmulatorFault } from './fixtures/emulator-faults.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { CheckResult, Report } from '../src/runner/types.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
// Cases that wait for a person to trigger a callback (--listen) are covered in listen.test.ts.
const suites = loadSuites()
  .filter((suite) => suite.side === 'service')
  .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

/** Where a fault must be caught: a check of a case (`suite/case`, `#n` for the n-th check of that id), a message, a rule. */
interface Catch {
  check: string;
  case: string;
  message: RegExp;
  /** The fault's own rule the result must name. */
  rule: string;
}

/**
 * Every fault and where it must be caught, under each rule it breaks. `cascades` lists results that
 * may fail under another rule, because the fault hides what they judge (and why).
 */
const CATCHES: Record<EmulatorFault, { catches: Catch[]; cascades?: Record<string, string> }> = {
  'err401-wrong-body': { catches: [{ check: 'error-body', case: 'energy/missing-key', message: /UNAUTHENTICATED.*does not match UnauthorizedError/, rule: 'ERR-401' }] },
  'err401-status-200': { catches: [{ check: 'status', case: 'energy/unknown-key', message: /expected HTTP 401, got 200/, rule: 'ERR-401' }] },
  'err401-expired-ok': { catches: [{ check: 'status', case: 'energy/expired-key', message: /expected HTTP 401, got 200/, rule: 'ERR-401' }] },
  'no-403': { catches: [{ check: 'status', case: 'energy/forbidden-key', message: /expected HTTP 403, got 200/, rule: 'ERR-403' }] },
  'err404-wrong-body': { catches: [{ check: 'error-body', case: 'errors/unknown-path', message: /does not match NotFoundError/, rule: 'ERR-404' }] },
  'err404-status-400': { catches: [{ check: 'status', case: 'errors/unknown-path', message: /expected HTTP 404, got 400/, rule: 'ERR-404' }] },
  'ct-any': {
    catches: [
      { check: 'refused', case: 'energy/form-body-wrong-content-type', message: /accepted \(code 0\)/, rule: 'ENERGY-CT' },
      { check: 'refused', case: 'orders/order-form-body-wrong-content-type', message: /accepted \(code 0\)/, rule: 'ORDER-CT' },
    ],
  },
  'envelope-code-string': { catches: [{ check: 'envelope', case: 'energy/success', message: /\/code must be integer/, rule: 'ENV-CODE' }] },
  'envelope-message-null': { catches: [{ check: 'envelope', case: 'energy/success', message: /\/message must be string/, rule: 'ENV-MSG' }] },
  'response-urlsafe-base64': { catches: [{ check: 'envelope', case: 'energy/success', message: /data is not standard Base64/, rule: 'CRYPTO-ENVELOPE' }] },
  'response-line-breaks': { catches: [{ check: 'envelope', case: 'orders/withdrawal', message: /data is not standard Base64/, rule: 'CRYPTO-ENVELOPE' }] },
  'response-wrong-key': { catches: [{ check: 'envelope', case: 'energy/success', message: /does not decrypt with the merchant's key.*another key/, rule: 'CRYPTO-SAME' }] },
  'energy-round': { catches: [{ check: 'energy-floor#2', case: 'energy/floor-of-live-balance', message: /energyMaxCount is 2, expected floor\(129999 \/ 65000\) = 1/, rule: 'ENERGY-FLOOR' }] },
  'energy-stale': { catches: [{ check: 'energy-floor', case: 'orders/energy-lease-uses-energy', message: /energyMaxCount is 312, expected floor\(1000000 \/ 65000\) = 15 or/, rule: 'ENERGY-FLOOR' }] },
  'order-tenant-type-any': { catches: [{ check: 'refused', case: 'orders/tenant-type-2', message: /accepted \(code 0\)/, rule: 'ORDER-TENANT-TYPE' }] },
  'order-energy-no-expiry': { catches: [{ check: 'refused', case: 'orders/energy-without-expiry', message: /accepted \(code 0\)/, rule: 'ORDER-EXPIRY' }] },
  'order-result-string': { catches: [{ check: 'result', case: 'orders/withdrawal', message: /\/tenantUserId must be integer/, rule: 'ORDER-RES' }] },
  'order-id-echo-wrong': { catches: [{ check: 'result', case: 'orders/withdrawal', message: /result id is wc-[\w-]+-1, expected the request's callBackId/, rule: 'ORDER-RES' }] },
  'order-amount-float': {
    catches: [{ check: 'callback-decrypts#3', case: 'callbacks/withdrawal-order-callback', message: /amount is 123456789012\.12346, expected 123456789012\.123456 exactly \(the digits were rounded/, rule: 'ORDER-FIELDS' }],
  },
  'card-missing-fields': { catches: [{ check: 'card-response', case: 'card/unknown-card', message: /must have required property 'errorMessageEn'/, rule: 'CARD-ERR' }] },
  // Refusing a reused closeSerialNo is a reading of an open point: caught as a warning, a failure under --strict.
  'card-repeat-serial-ok': { catches: [{ check: 'card-response#3', case: 'card/repeated-serial', message: /expected success false, got true/, rule: 'U-CARD-VALUES' }] },
  'callback-form-field': { catches: [{ check: 'callback-raw-body', case: 'callbacks/deposit-delivery', message: /sends a form field data=/, rule: 'CB-RAW-BODY' }] },
  'callback-no-api-key': {
    catches: [
      { check: 'callback-headers', case: 'callbacks/deposit-delivery', message: /no X-API-KEY header/, rule: 'CB-HEADERS' },
      { check: 'callback-headers', case: 'callbacks/deposit-delivery', message: /no X-API-KEY header/, rule: 'AUTH-KEY' },
    ],
  },
  'callback-wrong-api-key': {
    catches: [
      { check: 'callback-headers', case: 'callbacks/deposit-delivery', message: /not the merchant's own credential/, rule: 'CB-KEY-SAME' },
      { check: 'callback-headers', case: 'callbacks/withdrawal-order-callback', message: /not the merchant's own credential/, rule: 'AUTH-KEY' },
    ],
  },
  'callback-same-uuid': { catches: [{ check: 'callback-request-uuid', case: 'callbacks/retry-until-ack', message: /requestUUID [\w-]+ was sent on more than one delivery/, rule: 'CB-UUID' }] },
  'callback-new-tracking-id': { catches: [{ check: 'callback-tracking-id', case: 'callbacks/identical-resends', message: /the deliveries of one event carry 3 trackingIds/, rule: 'CB-ID-OTHER' }] },
  'callback-retry-after-ack': { catches: [{ check: 'callback-attempts', case: 'callbacks/no-retry-after-ack', message: /expected 1 deliveries, got 2/, rule: 'CB-ERRCODE' }] },
  'callback-no-retry': { catches: [{ check: 'callback-attempts', case: 'callbacks/retry-until-ack', message: /expected 4 deliveries, got 1/, rule: 'CB-ERRCODE' }] },
  'callback-public-key': {
    catches: [{ check: 'callback-decrypts', case: 'callbacks/deposit-delivery', message: /does not decrypt with the public key: .*another key pair/, rule: 'CB-DECRYPT' }],
    cascades: { 'service/callbacks/withdrawal-order-callback/callback-raw-body': 'the runner finds an order callback by its decrypted callBackId: an undecryptable one never arrives' },
  },
};

/** Runs every service suite against the emulator with `faults` switched on. */
async function verify(faults: EmulatorFault[]): Promise<Report> {
  const embedded = await startEmbedded({ emulatorVariant: faultyVariant(faults) });
  try {
    return await runSuites({ target: embedded.service, suites, rules });
  } finally {
    await embedded.close();
  }
}

const isOpenPoint = (rule: string) => rule.startsWith('U-');
const show = (results: CheckResult[]) => results.map((r) => `${r.status} ${r.id} [${r.rules.join(', ')}] ${r.message.slice(0, 160)}`);

describe('service suites against deliberately faulty emulators', () => {
  const reports = new Map<string, Report>();
  beforeAll(async () => {
    const names: Array<EmulatorFault | 'none'> = ['none', ...FAULT_NAMES];
    // Eight emulators at a time: each run is mostly waiting on loopback and callback retries.
    for (let i = 0; i < names.length; i += 8) {
      const batch = names.slice(i, i + 8);
      const done = await Promise.all(batch.map((name) => verify(name === 'none' ? [] : [name])));
      batch.forEach((name, j) => reports.set(name, done[j]!));
    }
  }, 300_000);

  it('pass every check against the fault-free emulator, with nothing skipped or warned', () => {
    const report = reports.get('none')!;
    expect(show(report.results.filter((r) => r.status !== 'passed'))).toEqual([]);
  });

  it('have a catch for every fault and for every rule each fault breaks', () => {
    for (const fault of FAULT_NAMES) {
      expect([...new Set(CATCHES[fault].catches.map((c) => c.rule))].sort(), fault).toEqual([...EMULATOR_FAULTS[fault].rules].sort());
    }
  });

  it('have, for every check of the service suites, a fault that no other check catches (a check that cannot fail would show)', () => {
    const used = new Set(suites.flatMap((suite) => suite.cases.flatMap((c) => c.steps.flatMap((step) => (step.expect ?? []).map((e) => e.check)))));
    const checkOf = (r: CheckResult) => r.id.replace(/#\d+$/, '').split('/').at(-1)!;
    const onlyCatcher = new Set(
      FAULT_NAMES.map((fault) => new Set(reports.get(fault)!.results.filter((r) => r.status === 'failed' || r.status === 'warning').map(checkOf)))
        .filter((checks) => checks.size === 1)
        .map((checks) => [...checks][0]!),
    );
    expect([...used].filter((check) => !onlyCatcher.has(check)).sort()).toEqual([]);
  });

  for (const fault of FAULT_NAMES) {
    const { catches, cascades = {} } = CATCHES[fault];
    for (const expected of catches) {
      const verdict = isOpenPoint(expected.rule) ? 'warning' : 'failed';
      it(`catch "${fault}" (${EMULATOR_FAULTS[fault].effect}) by ${expected.case}/${expected.check} under ${expected.rule} (${verdict})`, () => {
        const id = `service/${expected.case}/${expected.check}`;
        const results = reports.get(fault)!.results;
        expect(results.map((r) => r.id)).toContain(id);
        const result = results.find((r) => r.id === id);
        expect(show([result!])).toEqual([expect.stringMatching(new RegExp(`^${verdict} `))]);
        expect(result!.rules).toContain(expected.rule);
        expect(result!.message).toMatch(expected.message);
      });
    }

    it(`report "${fault}" only under the rules it breaks (every failure names one of ${EMULATOR_FAULTS[fault].rules.join(', ')})`, () => {
      const own = EMULATOR_FAULTS[fault].rules;
      const wrong = reports.get(fault)!.results.filter((r) => r.status === 'failed' && !r.rules.some((rule) => own.includes(rule)) && !cascades[r.id.replace(/#\d+$/, '')]);
      expect(show(wrong)).toEqual([]);
    });
  }
});
