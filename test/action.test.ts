// action.yml as GitHub runs it, without GitHub: each `run:` step of the composite action goes to
// bash (`--noprofile --norc -eo pipefail`, GitHub's `shell: bash`) with the GITHUB_* files set and
// `${{ inputs.* }}` and `${{ github.action_path }}` substituted, against the embedded emulator and
// reference merchant. The `uses:` steps (actions/setup-node, actions/upload-artifact) are checked,
// not run. The install step runs against a clean copy of this checkout (the files git knows) as the
// action's own checkout, with an `npm` in front of the real one that replaces only what needs the
// registry or minutes here: `npm ci` links the installed node_modules, `npm run build` copies the
// dist/ the global setup built from the same sources (test/action-dockerfile.test.ts runs the real
// build and pack in a bare folder), `npm install --prefix P TARBALL` unpacks the tarball as npm
// would and links its dependencies. `npm pack` is the real one (a later install of the same checkout
// gets a copy of its tarball): the verify step runs the packed CLI.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
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
  /** With `recordArgs`: the arguments verify was given, one per element. */
  args?: string[];
}

let scratch: string;
let shim: string;
let actionPath: string;
let npmLog: string;
let recorder: string;
let embedded: Embedded;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'wc-action-'));
  // The action's own checkout: the files git has (tracked or new, not ignored), nothing built.
  actionPath = join(scratch, 'action');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((file) => file && file !== 'node_modules');
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(actionPath, file)), { recursive: true });
    cpSync(join(ROOT, file), join(actionPath, file));
  }
  shim = join(scratch, 'bin');
  mkdirSync(shim);
  npmLog = join(scratch, 'npm.log');
  const packCache = join(scratch, 'pack-cache');
  const realNpm = execFileSync('bash', ['-c', 'command -v npm']).toString().trim();
  writeFileSync(
    join(shim, 'npm'),
    `#!/bin/bash
set -eo pipefail
echo "npm $* (in $PWD)" >> '${npmLog}'
case "$1" in
  ci) rm -rf node_modules && ln -s '${join(ROOT, 'node_modules')}' node_modules ;;
  run) [ "$2" = build ] && rm -rf dist && cp -r '${join(ROOT, 'dist')}' dist ;;
  pack)
    # The real npm pack the first time; later runs of the install step (same checkout, same tarball)
    # get a copy of what it packed.
    dest=
    for ((i = 1; i <= $#; i++)); do [ "\${!i}" = --pack-destination ] && { j=$((i + 1)); dest=\${!j}; }; done
    [ -n "$dest" ] || { echo "fake npm: pack needs --pack-destination" >&2; exit 1; }
    if ! ls '${packCache}'/*.tgz >/dev/null 2>&1; then
      '${realNpm}' "$@"
      mkdir -p '${packCache}' && cp "$dest"/*.tgz '${packCache}'/
    else
      cp '${packCache}'/*.tgz "$dest"/
    fi ;;
  install)
    prefix=; tarball=
    while [ $# -gt 0 ]; do case "$1" in --prefix) prefix=$2; shift ;; *.tgz) tarball=$1 ;; esac; shift; done
    [ -n "$prefix" ] && [ -f "$tarball" ] || { echo "fake npm: install needs --prefix and a .tgz" >&2; exit 1; }
    pkg="$prefix/node_modules/wallet-conformance"
    mkdir -p "$pkg" "$prefix/node_modules/.bin"
    tar -xzf "$tarball" -C "$pkg" --strip-components=1
    ln -s '${join(ROOT, 'node_modules')}' "$pkg/node_modules"
    chmod +x "$pkg/bin/wallet-conformance.js"
    ln -sf ../wallet-conformance/bin/wallet-conformance.js "$prefix/node_modules/.bin/wallet-conformance" ;;
  *) echo "fake npm: unexpected npm $*" >&2; exit 1 ;;
esac
`,
  );
  chmodSync(join(shim, 'npm'), 0o755);
  // A wallet-conformance that records its arguments (one per line) and does nothing else.
  recorder = join(scratch, 'recorder');
  mkdirSync(recorder);
  writeFileSync(
    join(recorder, 'wallet-conformance'),
    `#!/bin/bash\nif [ "$1" = verify ]; then printf '%s\\n' "$@" > "$RECORDED_ARGS"; fi\n`,
  );
  chmodSync(join(recorder, 'wallet-conformance'), 0o755);
  embedded = await startEmbedded();
}, 60_000);

afterAll(async () => {
  await embedded?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `${{ inputs.x }}` and the few expressions the action uses, as GitHub would substitute them. */
function substitute(text: string, inputs: Record<string, string>): string {
  return text
    .replace(/\$\{\{\s*github\.action_path\s*\}\}/g, actionPath)
    .replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, name: string) => {
      if (!(name in inputs)) throw new Error(`action.yml uses an undeclared input ${name}`);
      return inputs[name]!;
    });
}

/** `if:` of the steps: `always()` and `inputs.x == 'v'` / `inputs.x != 'v'` joined by && are all the action needs. */
function shouldRun(step: ActionStep, inputs: Record<string, string>, failed: boolean): boolean {
  if (!step.if) return !failed;
  const condition = step.if.replace(/^\$\{\{\s*|\s*\}\}$/g, '');
  const terms = condition.split('&&').map((term) => term.trim());
  const always = terms.includes('always()');
  const compare = terms
    .filter((term) => term !== 'always()')
    .every((term) => {
      const match = /^inputs\.([\w-]+) (==|!=) '([^']*)'$/.exec(term);
      if (!match) throw new Error(`action.yml: a condition this test cannot read: ${term}`);
      return (inputs[match[1]!] === match[3]) === (match[2] === '==');
    });
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
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** Runs the action's steps as a runner would, in a fresh workspace. */
async function runAction(
  given: Record<string, string>,
  secrets: Record<string, string>,
  setUp?: (workspace: string) => void,
  options: { recordArgs?: boolean } = {},
): Promise<ActionRun> {
  for (const [name, spec] of Object.entries(action.inputs)) {
    if (spec.required && !(name in given)) throw new Error(`input ${name} is required`);
  }
  const inputs = {
    ...Object.fromEntries(Object.entries(action.inputs).map(([name, spec]) => [name, spec.default ?? ''])),
    ...given,
  };
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
  const recorded = join(runnerTemp, 'recorded-args');
  for (const [i, step] of action.runs.steps.entries()) {
    if (!shouldRun(step, inputs, failed)) continue;
    // Recording the arguments verify gets: the recorder stands in for the installed CLI.
    if (options.recordArgs && step.name === 'Install wallet-conformance') continue;
    if (step.uses) {
      result.uses.push({
        ...step,
        with: Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(v, inputs)])),
      });
      continue;
    }
    expect(step.shell, `${step.name}: composite run steps need a shell`).toBe('bash');
    const output = join(runnerTemp, `output-${i}`);
    writeFileSync(output, '');
    const extraPath = readFileSync(githubPath, 'utf8').split('\n').filter(Boolean).reverse();
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, substitute(v, inputs)]));
    const env: NodeJS.ProcessEnv = {
      PATH: [...(options.recordArgs ? [recorder] : []), ...extraPath, shim, process.env.PATH ?? ''].join(delimiter),
      RECORDED_ARGS: recorded,
      GITHUB_ACTION_PATH: actionPath,
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
  if (existsSync(recorded)) result.args = readFileSync(recorded, 'utf8').split('\n').slice(0, -1);
  return result;
}

describe('action.yml, the composite GitHub Action', () => {
  it('declares the inputs a CI gate needs and no input for a secret', () => {
    expect(action.runs.using).toBe('composite');
    const ciInputs = [
      'side',
      'base-url',
      'callback-url',
      'suites',
      'suite',
      'case',
      'baseline',
      'strict',
      'fail-on-skip',
      'probe-cmd',
      'restart',
      'generate',
      'seed',
      'args',
      'reports',
      'annotate',
      'node-version',
      'package',
    ];
    for (const name of ciInputs) expect(action.inputs, name).toHaveProperty(name);
    expect(Object.keys(action.inputs).filter((name) => /api-key|token|secret|password/.test(name))).toEqual([]);
    expect(action.outputs['exit-code']?.value).toBe('${{ steps.verify.outputs.exit-code }}');
  });

  it('verifies a service with secrets from the environment and a user suite folder, fills the step summary and uploads the reports', async () => {
    const s = embedded.service;
    const run = await runAction(
      {
        side: 'service',
        'base-url': s.baseUrl,
        'public-key': 'keys/merchant-public.pem',
        'user-id': String(s.userId),
        suites: 'my-suites\n\n',
        suite: '*energy*',
        reports: 'out/reports',
        // The opt-out: the checks that need --forbidden-key, --expired-key or --future-key are skipped here, and accepted.
        'fail-on-skip': 'false',
      },
      { WALLET_API_KEY: s.apiKey, WALLET_CONTROL_TOKEN: s.controlToken ?? '' },
      (workspace) => {
        mkdirSync(join(workspace, 'keys'));
        writeFileSync(
          join(workspace, 'keys/merchant-public.pem'),
          s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
        );
        mkdirSync(join(workspace, 'my-suites'));
        writeFileSync(join(workspace, 'my-suites/energy-extra.yaml'), USER_SUITE);
      },
    );
    // Installed from the action's own checkout: dev dependencies without scripts, build, pack, the tarball installed.
    expect(run.statuses.get('Install wallet-conformance'), run.log).toBe(0);
    const npm = readFileSync(npmLog, 'utf8').split('\n').filter(Boolean).slice(-4);
    expect(npm.slice(0, 3)).toEqual([
      `npm ci --ignore-scripts --no-audit --no-fund (in ${actionPath})`,
      `npm run build (in ${actionPath})`,
      expect.stringMatching(/^npm pack --ignore-scripts --pack-destination \S+\/wallet-conformance-pack /),
    ]);
    expect(npm[3]).toMatch(
      /^npm install --no-save --no-audit --no-fund --prefix \S+\/\.runner-temp\/wallet-conformance \S+\/wallet-conformance-pack\/wallet-conformance-\d+\.\d+\.\d+\.tgz /,
    );
    expect(run.log).toMatch(/installed wallet-conformance \d+\.\d+\.\d+ on node v\d+/);
    expect(run.uses[0]).toEqual(
      expect.objectContaining({ uses: 'actions/setup-node@v4', with: { 'node-version': '22' } }),
    );
    expect(run.statuses.get('Verify'), run.log).toBe(0);
    expect(run.outputs).toEqual({ 'exit-code': '0' });
    const summary = readFileSync(join(run.workspace, 'out/reports/summary.md'), 'utf8');
    expect(summary.length).toBeGreaterThan(0);
    expect(run.stepSummary).toBe(summary);
    const report = JSON.parse(readFileSync(join(run.workspace, 'out/reports/report.json'), 'utf8')) as Report;
    expect(report.results.some((r) => r.id.startsWith('energy-extra/query-twice/') && r.status === 'passed')).toBe(
      true,
    );
    expect(report.results.some((r) => r.id.startsWith('service/energy/'))).toBe(true);
    expect(run.uses.slice(1)).toEqual([
      expect.objectContaining({
        uses: 'actions/upload-artifact@v4',
        with: { name: 'wallet-conformance-reports', path: 'out/reports', 'if-no-files-found': 'warn' },
      }),
    ]);
    expect(run.log).not.toContain(s.apiKey);
  }, 120_000);

  it('fails the step with exit code 1 when a check fails, and still writes the summary and uploads the reports', async () => {
    // A service whose success envelopes carry code "0" (a string): service/energy/success fails ENV-CODE.
    const faulty = await startEmbedded({ emulatorVariant: faultyVariant(['envelope-code-string']) });
    try {
      const s = faulty.service;
      const run = await runAction(
        {
          side: 'service',
          'base-url': s.baseUrl,
          'public-key': 'merchant-public.pem',
          suite: 'service/energy',
          upload: 'true',
        },
        { WALLET_API_KEY: s.apiKey },
        (workspace) =>
          writeFileSync(
            join(workspace, 'merchant-public.pem'),
            s.publicKey.keyObject.export({ type: 'spki', format: 'pem' }),
          ),
      );
      expect(run.statuses.get('Verify'), run.log).toBe(1);
      expect(run.outputs).toEqual({ 'exit-code': '1' });
      expect(run.log).toContain('::error title=wallet-conformance::a check failed');
      // One annotation per failed check, from report.json, naming the result, its rules and the case.
      const report = JSON.parse(
        readFileSync(join(run.workspace, 'wallet-conformance-reports/report.json'), 'utf8'),
      ) as Report;
      const failedIds = report.results.filter((r) => r.status === 'failed').map((r) => r.id);
      expect(failedIds.length).toBeGreaterThan(0);
      const errors = run.log.split('\n').filter((line) => line.startsWith('::error title=wallet-conformance service/'));
      expect(errors.map((line) => /^::error title=wallet-conformance (\S+) /.exec(line)?.[1])).toEqual(failedIds);
      expect(errors.some((line) => line.includes('ENV-CODE') && line.includes('%0A(case service/energy/'))).toBe(true);
      expect(run.stepSummary).toContain('ENV-CODE');
      expect(run.stepSummary).toBe(readFileSync(join(run.workspace, 'wallet-conformance-reports/summary.md'), 'utf8'));
      expect(run.uses.map((step) => step.with?.path)).toEqual([undefined, 'wallet-conformance-reports']);
    } finally {
      await faulty.close();
    }
  }, 120_000);

  it('writes the merchant private key from WALLET_PRIVATE_KEY to a file only the runner user can read; skipped MUST checks fail by default', async () => {
    const m = embedded.merchant;
    const run = await runAction(
      { side: 'merchant', 'callback-url': m.callbackUrl, suite: 'merchant/raw-body' },
      {
        WALLET_API_KEY: m.apiKey,
        WALLET_PRIVATE_KEY: m.privateKey.keyObject.export({ type: 'pkcs8', format: 'pem' }).toString(),
      },
    );
    // No probe: the processing checks are skipped, and the gate counts them (fail-on-skip is on unless set false).
    expect(run.statuses.get('Verify'), run.log).toBe(1);
    expect(run.log).toMatch(/--fail-on-skip: \d+ MUST check\(s\) were skipped: exit 1/);
    expect(run.log).toMatch(/not judged: \d+ MUST checks, for the reasons above; they fail the run \(--fail-on-skip\)/);
    expect(statSync(join(run.workspace, '.runner-temp/wallet-conformance-private-key.pem')).mode & 0o077).toBe(0);
    expect(run.stepSummary.length).toBeGreaterThan(0);
  }, 120_000);

  it('gives verify every CI input as its flag, and args one argument per line, never split on spaces', async () => {
    const run = await runAction(
      {
        side: 'merchant',
        'callback-url': 'http://127.0.0.1:1/cb',
        'probe-cmd': 'cat "processed events.json"',
        restart: 'systemctl restart my receiver',
        'private-key': 'keys/private key.pem',
        suites: 'suites one\n  suites two  \n',
        suite: 'merchant/*',
        case: 'merchant/raw-body/exact-bytes\nmerchant/idempotency/same-event-twice\n',
        strict: 'true',
        'fail-on-skip': 'true',
        generate: '25',
        seed: '7',
        args: '--settle-ms\n500\n\n--timeout\n  600  \n--max-body\r\n1048576',
        'node-version': '',
        upload: 'false',
      },
      {},
      undefined,
      { recordArgs: true },
    );
    expect(run.statuses.get('Verify'), run.log).toBe(0);
    expect(run.uses).toEqual([]);
    expect(run.args).toEqual([
      'verify',
      'merchant',
      '--callback-url',
      'http://127.0.0.1:1/cb',
      '--probe-cmd',
      'cat "processed events.json"',
      '--restart',
      'systemctl restart my receiver',
      '--private-key',
      'keys/private key.pem',
      '--suites',
      'suites one',
      '--suites',
      'suites two',
      '--suite',
      'merchant/*',
      '--case',
      'merchant/raw-body/exact-bytes',
      '--case',
      'merchant/idempotency/same-event-twice',
      '--strict',
      '--fail-on-skip',
      '--generate',
      '25',
      '--seed',
      '7',
      '--reports',
      'wallet-conformance-reports',
      '--settle-ms',
      '500',
      '--timeout',
      '600',
      '--max-body',
      '1048576',
    ]);
  }, 30_000);

  it('leaves out every flag whose input is at its default, but for fail-on-skip, on by default', async () => {
    const run = await runAction({ side: 'service', 'base-url': 'http://127.0.0.1:1', upload: 'false' }, {}, undefined, {
      recordArgs: true,
    });
    // fail-on-skip is on by default: the gate counts skipped MUST checks unless the user sets it false.
    expect(run.args).toEqual([
      'verify',
      'service',
      '--base-url',
      'http://127.0.0.1:1',
      '--fail-on-skip',
      '--reports',
      'wallet-conformance-reports',
    ]);
  }, 30_000);

  it('refuses a side other than service or merchant with exit code 2 and no upload when upload is false', async () => {
    const run = await runAction({ side: 'both', upload: 'false', 'node-version': '' }, {}, undefined, {
      recordArgs: true,
    });
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
