// action.yml as GitHub runs it, without GitHub: each `run:` step of the composite action goes to
// bash (`--noprofile --norc -eo pipefail`, GitHub's `shell: bash`) with the GITHUB_* files set,
// `${{ inputs.* }}` substituted, and the real CLI on PATH, against the embedded emulator and
// reference merchant. The `uses:` step (actions/upload-artifact) is checked, not run.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../src/cli/embedded.js';
import type { Report } from '../src/runner/types.js';
import { ROOT } from './support/cli.js';
import { faultyVariant } from './fixtures/emulator-faults.js';

interface ActionStep {
  name: string;
  id?: string;
  if?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

const action = parseYaml(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action;

/** What one run of the action did. */
interface ActionRun {
  /** Exit status of each run step, by name; a step after a failure is not run (no `if: always()`). */
  statuses: Map<string, number>;
  /** GITHUB_OUTPUT of the step with id `verify`. */
  outputs: Record<string, string>;
  stepSummary: string;
  log: string;
  /** The `uses:` steps that would run, with their `with:` substituted. */
  uses: ActionStep[];
  workspace: string;
}

let scratch: string;
let shim: string;
let embedded: Embedded;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'wc-action-'));
  // The CLI as an installed package puts it on PATH: the install step then has nothing to do.
  shim = join(scratch, 'bin');
  mkdirSync(shim);
  writeFileSync(join(shim, 'wallet-conformance'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/wallet-conformance.js')}" "$@"\n`);
  chmodSync(join(shim, 'wallet-conformance'), 0o755);
  embedded = await startEmbedded();
}, 30_000);

afterAll(async () => {
  await embedded?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `${{ inputs.x }}` and the few expressions the action uses, as GitHub would substitute them. */
function substitute(text: string, inputs: Record<string, string>): string {
  return text.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, name: string) => {
    if (!(name in inputs)) throw new Error(`action.yml uses an undeclared input ${name}`);
    return inputs[name]!;
  });
}

/** `if:` of the steps: `always() && inputs.upload == 'true'` is all the action needs. */
function shouldRun(step: ActionStep, inputs: Record<string, string>, failed: boolean): boolean {
  if (!step.if) return !failed;
  const condition = step.if.replace(/^\$\{\{\s*|\s*\}\}$/g, '');
  const always = /\balways\(\)/.test(condition);
  const compare = [...condition.matchAll(/inputs\.([\w-]+) == '([^']*)'/g)].every(([, name, value]) => inputs[name!] === value);
  return (always || !failed) && compare;
}

function bash(script: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ status: number; log: string }> {
  return new Promise((done) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { env, cwd });
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      done({ status: status ?? -1, log });
    });
  });
}

/** GITHUB_OUTPUT lines `name=value` (the action writes no multi-line values). */
function readOutputs(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  return Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** Runs the action's steps as a runner would, in a fresh workspace. */
async function runAction(given: Record<string, string>, secrets: Record<string, string>, setUp?: (workspace: string) => void): Promise<ActionRun> {
  for (const [name, spec] of Object.entries(action.inputs)) {
    if (spec.required && !(name in given)) throw new Error(`input ${name} is required`);
  }
  const inputs = { ...Object.fromEntries(Object.entries(action.inputs).map(([name, spec]) => [name, spec.default ?? ''])), ...given };
  const workspace = mkdtempSync(join(scratch, 'ws-'));
  setUp?.(workspace);
  const runnerTemp = join(workspace, '.runner-temp');
  mkdirSync(runnerTemp);
  const stepSummary = join(runnerTemp, 'step-summary.md');
  const githubPath = join(runnerTemp, 'path');
  const githubEnv = join(runnerTemp, 'env');
  writeFileSync(stepSummary, '');
  writeFileSync(githubPath, '');
  writeFileSync(githubEnv, '');
  const result: ActionRun = { statuses: new Map(), outputs: {}, stepSummary: '', log: '', uses: [], workspace };
  let failed = false;
  for (const [i, step] of action.runs.steps.entries()) {
    if (!shouldRun(step, inputs, failed)) continue;
    if (step.uses) {
      result.uses.push({ ...step, with: Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(v, inputs)])) });
      continue;
    }
    expect(step.shell, `${step.name}: composite run steps need a shell`).toBe('bash');
    const output = join(runnerTemp, `output-${i}`);
    writeFileSync(output, '');
    const extraPath = readFileSync(githubPath, 'utf8').split('\n').filter(Boolean).reverse();
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, substitute(v, inputs)]));
    const env: NodeJS.ProcessEnv = {
      PATH: [...extraPath, shim, process.env.PATH ?? ''].join(delimiter),
      HOME: process.env.HOME ?? workspace,
      NO_COLOR: '1',
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_STEP_SUMMARY: stepSummary,
      GITHUB_OUTPUT: output,
      GITHUB_ENV: githubEnv,
      GITHUB_PATH: githubPath,
      RUNNER_TEMP: runnerTemp,
      ...secrets,
      ...stepEnv,
    };
    const { status, log } = await bash(substitute(step.run ?? '', inputs), env, workspace);
    result.statuses.set(step.name, status);
    result.log += log;
    if (step.id === 'verify') result.outputs = readOutputs(output);
    if (status !== 0) failed = true;
  }
  result.stepSummary = readFileSync(stepSummary, 'utf8');
  return result;
}

describe('action.yml, the composite GitHub Action', () => {
  it('declares the inputs a CI gate needs and no input for a secret', () => {
    expect(action.runs.using).toBe('composite');
    for (const name of ['side', 'base-url', 'callback-url', 'suites', 'baseline', 'strict', 'reports']) expect(action.inputs, name).toHaveProperty(name);
    expect(Object.keys(action.inputs).filter((name) => /api-key|token|secret|password/.test(name))).toEqual([]);
    expect(action.outputs['exit-code']?.value).toBe('${{ steps.verify.outputs.exit-code }}');
  });

  it('verifies a service with secrets from the environment and a user suite folder, fills the step summary and uploads the reports', async () => {
    const s = embedded.service;
    const run = await runAction(
      { side: 'service', 'base-url': s.baseUrl, 'public-key': 'keys/merchant-public.pem', 'user-id': String(s.userId), suites: 'my-suites\n\n', suite: '*energy*', reports: 'out/reports' },
      { WALLET_API_KEY: s.apiKey, WALLET_CONTROL_TOKEN: s.controlToken ?? '' },
      (workspace) => {
        mkdirSync(join(workspace, 'keys'));
        writeFileSync(join(workspace, 'keys/merchant-public.pem'), s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }));
        mkdirSync(join(workspace, 'my-suites'));
        writeFileSync(join(workspace, 'my-suites/energy-extra.yaml'), USER_SUITE);
      },
    );
    expect(run.statuses.get('Install wallet-conformance'), run.log).toBe(0);
    expect(run.log).toContain('wallet-conformance on PATH');
    expect(run.statuses.get('Verify'), run.log).toBe(0);
    expect(run.outputs).toEqual({ 'exit-code': '0' });
    const summary = readFileSync(join(run.workspace, 'out/reports/summary.md'), 'utf8');
    expect(summary.length).toBeGreaterThan(0);
    expect(run.stepSummary).toBe(summary);
    const report = JSON.parse(readFileSync(join(run.workspace, 'out/reports/report.json'), 'utf8')) as Report;
    expect(report.results.some((r) => r.id.startsWith('energy-extra/query-twice/') && r.status === 'passed')).toBe(true);
    expect(report.results.some((r) => r.id.startsWith('service/energy/'))).toBe(true);
    expect(run.uses).toEqual([expect.objectContaining({ uses: 'actions/upload-artifact@v4', with: { name: 'wallet-conformance-reports', path: 'out/reports', 'if-no-files-found': 'warn' } })]);
    expect(run.log).not.toContain(s.apiKey);
  }, 120_000);

  it('fails the step with exit code 1 when a check fails, and still writes the summary and uploads the reports', async () => {
    // A service whose success envelopes carry code "0" (a string): service/energy/success fails ENV-CODE.
    const faulty = await startEmbedded({ emulatorVariant: faultyVariant(['envelope-code-string']) });
    try {
      const s = faulty.service;
      const run = await runAction(
        { side: 'service', 'base-url': s.baseUrl, 'public-key': 'merchant-public.pem', suite: 'service/energy', upload: 'true' },
        { WALLET_API_KEY: s.apiKey },
        (workspace) => writeFileSync(join(workspace, 'merchant-public.pem'), s.publicKey.keyObject.export({ type: 'spki', format: 'pem' })),
      );
      expect(run.statuses.get('Verify'), run.log).toBe(1);
      expect(run.outputs).toEqual({ 'exit-code': '1' });
      expect(run.log).toContain('::error title=wallet-conformance::a check failed');
      expect(run.stepSummary).toContain('ENV-CODE');
      expect(run.stepSummary).toBe(readFileSync(join(run.workspace, 'wallet-conformance-reports/summary.md'), 'utf8'));
      expect(run.uses.map((step) => step.with?.path)).toEqual(['wallet-conformance-reports']);
    } finally {
      await faulty.close();
    }
  }, 120_000);

  it('writes the merchant private key from WALLET_PRIVATE_KEY to a file only the runner user can read', async () => {
    const m = embedded.merchant;
    const run = await runAction(
      { side: 'merchant', 'callback-url': m.callbackUrl, suite: 'merchant/raw-body' },
      { WALLET_API_KEY: m.apiKey, WALLET_PRIVATE_KEY: m.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString() },
    );
    expect(run.statuses.get('Verify'), run.log).toBe(0);
    expect(statSync(join(run.workspace, '.runner-temp/wallet-conformance-private-key.pem')).mode & 0o077).toBe(0);
    expect(run.stepSummary.length).toBeGreaterThan(0);
  }, 120_000);

  it('refuses a side other than service or merchant with exit code 2 and no upload when upload is false', async () => {
    const run = await runAction({ side: 'both', upload: 'false' }, {});
    expect(run.statuses.get('Verify')).toBe(2);
    expect(run.outputs).toEqual({ 'exit-code': '2' });
    expect(run.log).toContain("input side must be service or merchant, not 'both'");
    expect(run.uses).toEqual([]);
  }, 30_000);
});

/** A user's own suite, with the schema line editors use for completion. */
const USER_SUITE = `# yaml-language-server: $schema=https://unpkg.com/wallet-conformance/suites/suite.schema.json
title: Our energy checks
side: service
cases:
  - id: query-twice
    title: Two energy queries in a row both answer the encrypted result
    rules: [ENERGY-RES]
    steps:
      - request: { endpoint: energy, plain: { symbol: ENERGY, chainName: TRON } }
        expect:
          - { check: result, schema: EnergyMaxCountResult }
      - request: { endpoint: energy, plain: { symbol: ENERGY, chainName: TRON } }
        expect:
          - { check: result, schema: EnergyMaxCountResult }
`;
