import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded } from '../src/cli/embedded.js';
import { RULES_PATH } from '../src/core/package-paths.js';
import { parseRuleCatalog } from '../src/core/rules.js';
import { EMULATOR_FAULTS, FAULT_NAMES, type EmulatorFault } from '../src/emulator/faults.js';
import { runSuites } from '../src/runner/engine.js';
import { loadSuites } from '../src/runner/suite.js';
import type { Report } from '../src/runner/types.js';

const rules = parseRuleCatalog(readFileSync(RULES_PATH, 'utf8'));
// Cases that wait for a person to trigger a callback (--listen) are covered in listen.test.ts.
const suites = loadSuites()
  .filter((suite) => suite.side === 'service')
  .map((suite) => ({ ...suite, cases: suite.cases.filter((c) => !c.needs?.includes('listen')) }));

/** Runs every service suite against the emulator with `faults` switched on. */
async function verify(faults: EmulatorFault[]): Promise<Report> {
  const embedded = await startEmbedded({ emulatorFaults: faults });
  try {
    return await runSuites({ target: embedded.service, suites, rules });
  } finally {
    await embedded.close();
  }
}

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

  it('pass every check against the fault-free emulator, with nothing skipped', () => {
    const report = reports.get('none')!;
    expect(report.results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.message}`)).toEqual([]);
  });

  for (const fault of FAULT_NAMES) {
    it(`catch "${fault}" (${EMULATOR_FAULTS[fault].effect}) with a check naming ${EMULATOR_FAULTS[fault].rules.join(' or ')}`, () => {
      const caught = reports.get(fault)!.results.filter((r) => r.status === 'failed' && r.rules.some((rule) => EMULATOR_FAULTS[fault].rules.includes(rule)));
      expect(caught.map((r) => r.id)).not.toEqual([]);
    });
  }
});
