import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded } from '../src/cli/embedded.js';
import { RULES_PATH } from '../src/platform/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { SealPool } from '../src/emulator/seal-pool.js';
import { EMULATOR_FAULTS, FAULT_NAMES, faultyVariant, type EmulatorFault } from './fixtures/emulator-faults.js';
import { SERVICE_CATCHES as CATCHES } from './fixtures/service-catches.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { CheckResult, Report } from '../src/runner/types.js';
import { limit } from './support/limit.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
// Cases that wait for a person to trigger a callback (--listen) are covered in listen.test.ts.
const suites = loadSuites()
  .filter((suite) => suite.side === 'service')
  .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

/** One pool of sealing threads for every emulator (loading a thread per emulator cost more CPU than its run). */
const sealer = new SealPool();

/** Runs every service suite against the emulator with `faults` switched on. */
async function verify(faults: EmulatorFault[]): Promise<Report> {
  const embedded = await startEmbedded({ emulatorVariant: faultyVariant(faults), emulatorSealer: sealer });
  try {
    return await runSuites({ target: embedded.service, suites, rules });
  } finally {
    await embedded.close();
  }
}

const isOpenPoint = (rule: string) => rule.startsWith('U-');
const show = (results: CheckResult[]) =>
  results.map((r) => `${r.status} ${r.id} [${r.rules.join(', ')}] ${r.message.slice(0, 160)}`);

describe('service suites against deliberately faulty emulators', () => {
  const reports = new Map<string, Report>();
  beforeAll(async () => {
    await sealer.warm();
    // The faults caught (or cascading) in the callback cases first: their runs wait for callbacks
    // that never come (10 s per emit, 15 s for the order's callback), so they set the file's end.
    const waits = (fault: EmulatorFault) =>
      [...CATCHES[fault].catches.map((c) => c.case), ...Object.keys(CATCHES[fault].cascades ?? {})].some((id) =>
        id.includes('callbacks/'),
      );
    const names: Array<EmulatorFault | 'none'> = [
      ...FAULT_NAMES.filter(waits),
      'none',
      ...FAULT_NAMES.filter((fault) => !waits(fault)),
    ];
    // 24 emulators at a time, the next starting as soon as one ends: a run mostly waits on
    // loopback, callback retries and the wait for a callback a fault never sends, so a slot kept by
    // such a run does not hold the others back as a batch would.
    const slot = limit(24);
    await Promise.all(
      names.map((name) => slot(async () => void reports.set(name, await verify(name === 'none' ? [] : [name])))),
    );
  }, 300_000);
  afterAll(() => sealer.close());

  it('pass every check against the fault-free emulator, with nothing skipped or warned', () => {
    const report = reports.get('none')!;
    expect(show(report.results.filter((r) => r.status !== 'passed'))).toEqual([]);
  });

  it('have a catch for every fault and for every rule each fault breaks', () => {
    for (const fault of FAULT_NAMES) {
      expect([...new Set(CATCHES[fault].catches.map((c) => c.rule))].sort(), fault).toEqual(
        [...EMULATOR_FAULTS[fault].rules].sort(),
      );
    }
  });

  it('have, for every check of the service suites, a fault that no other check catches (a check that cannot fail would show)', () => {
    const used = new Set(
      suites.flatMap((suite) =>
        suite.cases.flatMap((c) => c.steps.flatMap((step) => (step.expect ?? []).map((e) => e.check))),
      ),
    );
    const checkOf = (r: CheckResult) => r.id.replace(/#\d+$/, '').split('/').at(-1)!;
    const onlyCatcher = new Set(
      FAULT_NAMES.map(
        (fault) =>
          new Set(
            reports
              .get(fault)!
              .results.filter((r) => r.status === 'failed' || r.status === 'warning')
              .map(checkOf),
          ),
      )
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
      // A cascade names a result id; '*' in it stands for any characters (a whole case, or every case of a suite).
      const patterns = Object.keys(cascades).map(
        (key) =>
          new RegExp(
            `^${key
              .split('*')
              .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
              .join('.*')}$`,
          ),
      );
      const cascaded = (id: string) => patterns.some((pattern) => pattern.test(id.replace(/#\d+$/, '')));
      const wrong = reports
        .get(fault)!
        .results.filter((r) => r.status === 'failed' && !r.rules.some((rule) => own.includes(rule)) && !cascaded(r.id));
      expect(show(wrong)).toEqual([]);
    });
  }
});
