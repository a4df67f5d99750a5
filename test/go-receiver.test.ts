// examples/go-receiver/: the receiver written from the merchant guide on Go's standard library alone
// passes the built CLI's `verify merchant` with the probe, an expired key, a not-yet-valid key and a
// SIGKILL restart (a supervisor loop starts it again), every check passed, no warning; and each deliberate fault it
// can be built with (-fault NAME, examples/go-receiver/faults.go) ends `verify merchant` with exit 1
// under the rule it breaks. Skipped only where no Go toolchain is installed (.ci/run installs
// Debian's golang-go, so CI never skips).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMerchantKeyPair } from '../src/crypto/key-pair.js';
import { goEnv, goMissing } from './support/go.js';
import { ROOT, runCliAsync } from './support/cli.js';
import { freePort } from './support/ports.js';

const API_KEY = 'ak_example_go_3c81';
const EXPIRED_KEY = 'ak_example_go_old_9d04';
const FUTURE_KEY = 'ak_example_go_next_e5a7';
/** Stops the receiver the hard way: no handler runs, nothing buffered is flushed (a crash, an OOM kill). */
const SIGKILL_RESTART = `pid=$(cat receiver.pid); kill -KILL "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done`;
/** A graceful stop: the receiver's SIGTERM handler flushes what it buffered. */
const SIGTERM_RESTART = `pid=$(cat receiver.pid); kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done`;

interface Report {
  summary: { passed: number; failed: number; warnings: number; skipped: number };
  results: Array<{ id: string; case: string; status: string; message: string; rules: string[] }>;
}

/**
 * Each fault, the rule its failure must name, the cases that must catch it (`--case`: the correct
 * receiver runs every suite, so each fault runs only what shows it), and whether only --strict fails
 * it (a check on an open point or a SHOULD warns otherwise). The last two are caught only by derived
 * cases (merchant/derived/*: a near miss of the key, a deposit key component varied alone).
 */
const FAULTS: Array<{ fault: string; rule: string; only: string; strict?: boolean }> = [
  { fault: 'body-before-key', rule: 'CB-KEY-FIRST', only: 'merchant/key-first/*' },
  { fault: 'expired-key-accepted', rule: 'CB-KEY-401', only: 'merchant/key-first/*' },
  { fault: 'form-field-body', rule: 'CB-RAW-BODY', only: 'merchant/raw-body/*' },
  { fault: 'lenient-base64', rule: 'U-CRYPTO', only: 'merchant/malformed/*', strict: true },
  {
    fault: 'interface-spelling-only',
    rule: 'U-CB-FIELDS',
    only: 'merchant/idempotency/redelivered-deposit',
    strict: true,
  },
  {
    fault: 'chainname-wins',
    rule: 'U-CB-FIELDS',
    only: 'merchant/idempotency/deposit-chain-and-chainname-differ',
    strict: true,
  },
  { fault: 'deposit-key-txid-only', rule: 'CB-ID-DEPOSIT', only: 'merchant/idempotency/deposit-*' },
  { fault: 'withdrawal-key-tracking-id', rule: 'CB-ID-WITHDRAW', only: 'merchant/idempotency/withdrawal-*' },
  { fault: 'key-by-request-uuid', rule: 'CB-UUID', only: 'merchant/idempotency/redelivered-*' },
  { fault: 'reprocess-duplicates', rule: 'CB-ONCE', only: 'merchant/idempotency/redelivered-*' },
  { fault: 'no-dup-ack', rule: 'CB-DUP-ACK', only: 'merchant/idempotency/redelivered-*' },
  { fault: 'memory-only', rule: 'CB-ONCE', only: 'merchant/derived/acknowledged-survives-restart/*' },
  { fault: 'ack-before-journal', rule: 'CB-ONCE', only: 'merchant/derived/acknowledged-survives-restart/*' },
  { fault: 'key-case-insensitive', rule: 'CB-KEY-401', only: 'merchant/derived/callback-key-near-misses/*' },
  { fault: 'deposit-key-without-chain', rule: 'CB-ID-DEPOSIT', only: 'merchant/derived/deposit-key-components/*' },
];

const dir = mkdtempSync(join(tmpdir(), 'wc-go-receiver-'));
const binary = join(dir, 'go-receiver');
const pair = generateMerchantKeyPair(1024);
const supervisors: ChildProcess[] = [];

afterAll(() => {
  for (const supervisor of supervisors) stop(supervisor);
  rmSync(dir, { recursive: true, force: true });
});

function stop(supervisor: ChildProcess): void {
  try {
    process.kill(-supervisor.pid!, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** The receiver (with a fault or none) in its own folder, under a loop that starts it again whenever it stops. */
async function startReceiver(
  name: string,
  fault?: string,
): Promise<{ home: string; port: number; output: () => string; supervisor: ChildProcess }> {
  const home = join(dir, name);
  mkdirSync(home);
  writeFileSync(join(home, 'merchant-public.pem'), pair.publicPem);
  writeFileSync(join(home, 'merchant-private.pem'), pair.privatePem, { mode: 0o600 });
  writeFileSync(
    join(home, 'keys.json'),
    JSON.stringify([
      { key: API_KEY },
      { key: EXPIRED_KEY, notBefore: '2020-01-01T00:00:00Z', notAfter: '2021-01-01T00:00:00Z' },
      { key: FUTURE_KEY, notBefore: '2999-01-01T00:00:00Z' },
    ]),
  );
  const port = await freePort();
  const args = [
    '-public-key',
    'merchant-public.pem',
    '-keys',
    'keys.json',
    '-journal',
    'callbacks.journal',
    '-port',
    String(port),
    '-pid-file',
    'receiver.pid',
  ];
  if (fault) args.push('-fault', fault);
  const receiver = [binary, ...args].map((word) => `'${word}'`).join(' ');
  const supervisor = spawn('bash', ['-c', `for i in $(seq 1 20); do ${receiver}; sleep 0.05; done`], {
    cwd: home,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  supervisors.push(supervisor);
  let output = '';
  supervisor.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  supervisor.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let i = 0; i < 100; i++) {
    if (output.includes(`LISTENING ${port}`)) return { home, port, output: () => output, supervisor };
    await new Promise((wait) => setTimeout(wait, 100));
  }
  throw new Error(`the Go receiver did not start:\n${output}`);
}

/** `verify merchant` (the built CLI) against a receiver, with the probe, the expired and the not-yet-valid key and a restart command. */
async function verify(
  receiver: { home: string; port: number },
  options: { restart?: string; strict?: boolean; only?: string } = {},
) {
  const reports = join(receiver.home, 'reports');
  const base = `http://127.0.0.1:${receiver.port}`;
  const run = await runCliAsync(
    [
      'verify',
      'merchant',
      '--callback-url',
      `${base}/callback`,
      '--private-key',
      join(receiver.home, 'merchant-private.pem'),
      '--probe-url',
      `${base}/probe`,
      '--restart',
      options.restart ?? SIGKILL_RESTART,
      '--reports',
      reports,
      ...(options.strict ? ['--strict'] : []),
      ...(options.only ? ['--case', options.only] : []),
    ],
    {
      cwd: receiver.home,
      env: { WALLET_API_KEY: API_KEY, WALLET_EXPIRED_KEY: EXPIRED_KEY, WALLET_FUTURE_KEY: FUTURE_KEY },
    },
  );
  let report: Report;
  try {
    report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
  } catch {
    throw new Error(`no report.json (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
  }
  const lines = (status: string) =>
    report.results
      .filter((r) => r.status === status)
      .map((r) => `${r.id} [${r.rules.join(', ')}]: ${r.message}`)
      .join('\n');
  return { run, report, lines };
}

describe.skipIf(goMissing !== undefined)(
  `examples/go-receiver (skipped only when ${goMissing ?? 'the go toolchain is missing'})`,
  () => {
    beforeAll(() => {
      const build = spawnSync('go', ['build', '-o', binary, '.'], {
        cwd: join(ROOT, 'examples/go-receiver'),
        env: goEnv(),
        encoding: 'utf8',
        timeout: 180_000,
      });
      if (build.status !== 0) throw new Error(`go build failed:\n${build.stderr}`);
      const vet = spawnSync('go', ['vet', '.'], {
        cwd: join(ROOT, 'examples/go-receiver'),
        env: goEnv(),
        encoding: 'utf8',
        timeout: 180_000,
      });
      if (vet.status !== 0) throw new Error(`go vet failed:\n${vet.stderr}`);
    }, 240_000);

    it('passes verify merchant with --probe-url, --expired-key, --future-key and a SIGKILL --restart: exit 0, no failure, no warning, nothing skipped', async () => {
      const receiver = await startReceiver('correct');
      const { run, report, lines } = await verify(receiver);
      expect(report.summary.failed, `${lines('failed')}\n${receiver.output().slice(-3000)}`).toBe(0);
      expect(lines('warning')).toBe('');
      expect(lines('skipped')).toBe('');
      expect(run.status, run.stderr).toBe(0);
      expect(report.summary.passed).toBeGreaterThan(100);
      expect(report.results.find((r) => r.case === 'redelivery-across-restart')?.status).toBe('passed');
      // The pre-flight proof and the restart case each killed it: it started at least three times, its journal replayed.
      expect(receiver.output().match(/LISTENING \d+/g)?.length ?? 0, receiver.output()).toBeGreaterThanOrEqual(3);
      expect(receiver.output()).toMatch(/LISTENING \d+ \([1-9]\d* events in the journal\)/);
      stop(receiver.supervisor);
    }, 240_000);

    it('ack-before-journal survives a graceful (SIGTERM) restart and is caught only by a SIGKILL one: durability is proven by a kill', async () => {
      const receiver = await startReceiver('graceful', 'ack-before-journal');
      const { run, report, lines } = await verify(receiver, { restart: SIGTERM_RESTART });
      expect(report.summary.failed, lines('failed')).toBe(0);
      expect(run.status, run.stderr).toBe(0);
      stop(receiver.supervisor);
    }, 240_000);

    for (const { fault, rule, strict, only } of FAULTS) {
      it(`-fault ${fault}: verify merchant${strict ? ' --strict' : ''} exits 1 with a failure under ${rule}`, async () => {
        const receiver = await startReceiver(fault, fault);
        const { run, report, lines } = await verify(receiver, { strict: strict ?? false, only });
        expect(run.status, `${lines('failed')}\n${run.stderr}`).toBe(1);
        expect(
          report.results.filter((r) => r.status === 'failed' && r.rules.includes(rule)).length,
          `no failure under ${rule}; failures:\n${lines('failed')}\nwarnings:\n${lines('warning')}`,
        ).toBeGreaterThan(0);
        stop(receiver.supervisor);
      }, 240_000);
    }
  },
);
