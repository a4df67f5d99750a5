import { join } from 'node:path';
import type { Rule } from '../core/rules.js';
import {
  makeStrangerKeys,
  probeCapabilities,
  type Capabilities,
  type CheckResult,
  type MerchantTarget,
  type Report,
  type RunEvent,
  type ServiceTarget,
  type Target,
} from '../runner/api.js';
import { folderExampleStore } from './example-store.js';
import type { Property } from './property.js';
import { checkProperties, mergeGenerated, newSeed, type GenerateOptions } from './run-properties.js';
import { serviceProperties } from './service-properties.js';
import { merchantProperties } from './merchant-properties.js';

/** What `--generate N --seed S` asks of a run, with the reports folder holding `examples/`. */
export interface GeneratedRun {
  numRuns: number;
  seed?: number;
  reportsDir: string;
  rules: Rule[];
  strict?: boolean;
  capabilities?: Capabilities;
  onEvent?: (event: RunEvent) => void;
  timeLimitMs?: number;
  /** Only these property ids (library use and the toolkit's own tests); all when absent. */
  only?: string[];
}

/** The generated properties of one side, run after the suites; results grouped per property. */
export async function runGenerated(target: Target, run: GeneratedRun): Promise<CheckResult[]> {
  if (run.numRuns <= 0) return [];
  const rules = new Map(run.rules.map((rule) => [rule.id, rule]));
  const options: GenerateOptions = {
    numRuns: run.numRuns,
    seed: run.seed ?? newSeed(),
    rules,
    strict: run.strict ?? false,
    store: folderExampleStore(join(run.reportsDir, 'examples')),
    ...(run.timeLimitMs === undefined ? {} : { timeLimitMs: run.timeLimitMs }),
    onResult: (result) => run.onEvent?.({ kind: 'result', result }),
  };
  const stranger = makeStrangerKeys(target.side === 'service' ? target.publicKey.bits : target.privateKey.bits);
  // The stateful property needs the control routes: probed here when the caller has not (the embedded run, library use).
  const wantsControl = !run.only || run.only.includes('stateful');
  const capabilities =
    target.side === 'service' && !run.capabilities && target.controlToken && wantsControl
      ? await probeCapabilities(target)
      : run.capabilities;
  const properties =
    target.side === 'service'
      ? serviceProperties(target as ServiceTarget, stranger, capabilities)
      : merchantProperties(target as MerchantTarget, stranger);
  const chosen = (properties as Property<unknown>[]).filter((property) => !run.only || run.only.includes(property.id));
  return checkProperties(target.side, chosen, options);
}

/**
 * Runs the generated properties and merges their results into the suites' report (the CLI's one
 * call after the suites); `--generate 0` leaves the report as it is.
 */
export async function addGenerated(report: Report, target: Target, run: GeneratedRun): Promise<Report> {
  const results = await runGenerated(target, run);
  return mergeGenerated(report, results, new Map(run.rules.map((rule) => [rule.id, rule])));
}
