import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../src/runner/types.js';
import { ROOT, runCli, runCliAsync } from './support/cli.js';
import { freePort } from './support/ports.js';

/**
 * Runs `merchant --config F` the way a process supervisor would: when the process exits, a new one
 * starts on the same port with the same configuration. Its pid is kept in a file for the restart
 * command, which stops the current process and waits until it is gone.
 */
function supervise(config: string, port: number, pidFile: string): { stop(): Promise<void>; starts(): number } {
  let child: ChildProcess | undefined;
  let stopping = false;
  let starts = 0;
  const start = () => {
    child = spawn(
      process.execPath,
      [resolve(ROOT, 'bin/wallet-conformance.js'), 'merchant', '--config', config, '--port', String(port)],
      { stdio: 'ignore' },
    );
    starts++;
    writeFileSync(pidFile, String(child.pid));
    child.once('exit', () => {
      if (!stopping) start();
    });
  };
  start();
  return {
    starts: () => starts,
    stop: () =>
      new Promise<void>((done) => {
        stopping = true;
        if (!child || child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

describe('verify merchant --restart: redelivery across a restart of the receiver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wc-restart-'));
  const restartCmd = (pidFile: string) =>
    `pid=$(cat ${pidFile}); kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done`;
  let apiKey: string;
  beforeAll(() => {
    expect(runCli(['merchant', '--init', dir]).status).toBe(0);
    apiKey = /^apiKey: "([0-9a-f]+)"/m.exec(readFileSync(join(dir, 'merchant.yaml'), 'utf8'))![1]!;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function verifyAcrossRestart(
    config: string,
    reports: string,
  ): Promise<{ status: number | null; report: Report; starts: number }> {
    const port = await freePort();
    const pidFile = join(dir, `${reports}.pid`);
    const merchant = supervise(config, port, pidFile);
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(`${base}/probe`).then(
            () => true,
            () => false,
          )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const run = await runCliAsync([
        'verify',
        'merchant',
        '--callback-url',
        `${base}/callback`,
        '--probe-url',
        `${base}/probe`,
        '--api-key',
        apiKey,
        '--private-key',
        join(dir, 'merchant-private.pem'),
        '--restart',
        restartCmd(pidFile),
        '--suite',
        'merchant/idempotency',
        '--reports',
        join(dir, reports),
      ]);
      return {
        status: run.status,
        report: JSON.parse(readFileSync(join(dir, reports, 'report.json'), 'utf8')) as Report,
        starts: merchant.starts(),
      };
    } finally {
      await merchant.stop();
    }
  }

  it('passes the reference merchant on its SQLite store: the redelivery after the restart is a duplicate', async () => {
    const { status, report, starts } = await verifyAcrossRestart(join(dir, 'merchant.yaml'), 'sqlite');
    const restartCase = report.results.filter((r) => r.case === 'redelivery-across-restart');
    expect(
      restartCase.map((r) => [r.id, r.status]),
      restartCase.map((r) => r.message).join(' | '),
    ).toEqual([
      ['merchant/idempotency/redelivery-across-restart/processed', 'passed'],
      ['merchant/idempotency/redelivery-across-restart/answers', 'passed'],
      ['merchant/idempotency/redelivery-across-restart/processed#2', 'passed'],
    ]);
    // The first start, pre-flight's proof of --restart (it went down and came back), the case's restart.
    expect(starts).toBe(3);
    expect(report.preflight?.steps.find((step) => step.what.startsWith('running --restart once'))).toMatchObject({
      level: 'ok',
      conclusion: 'the receiver went down and came back: --restart restarts it',
    });
    expect(report.summary.failed).toBe(0);
    expect(status).toBe(0);
  }, 120_000);

  it('exits 2 when --restart restarts nothing: the receiver never went down', async () => {
    const port = await freePort();
    const merchant = supervise(join(dir, 'merchant.yaml'), port, join(dir, 'noop.pid'));
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(`${base}/probe`).then(
            () => true,
            () => false,
          )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const run = await runCliAsync([
        'verify',
        'merchant',
        '--callback-url',
        `${base}/callback`,
        '--probe-url',
        `${base}/probe`,
        '--api-key',
        apiKey,
        '--private-key',
        join(dir, 'merchant-private.pem'),
        '--restart',
        'true',
        '--suite',
        'merchant/idempotency',
        '--reports',
        join(dir, 'noop'),
      ]);
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(
        /^wallet-conformance: pre-flight: --restart did not restart the receiver: it never went down \(no connection closed or refused while the command ran or 2 s after\); the command must stop the receiver and start it again \(running --restart once, .*the held connection stayed open; 0 of \d+ connection attempts refused; afterwards the callback URL answered HTTP \d+\)\n$/,
      );
      expect(merchant.starts()).toBe(1);
    } finally {
      await merchant.stop();
    }
  }, 60_000);

  it('fails a merchant whose store lives in memory: the restart forgets, the redelivery is processed again', async () => {
    const memory = join(dir, 'merchant-memory.yaml');
    writeFileSync(
      memory,
      readFileSync(join(dir, 'merchant.yaml'), 'utf8').replace(/^store: .*$/m, 'store: ":memory:"'),
    );
    const { status, report } = await verifyAcrossRestart(memory, 'memory');
    const lost = report.results.find((r) => r.id === 'merchant/idempotency/redelivery-across-restart/processed#2');
    expect(lost, lost?.message).toMatchObject({ status: 'failed', rules: ['CB-ONCE', 'CB-ID-DEPOSIT'] });
    expect(lost!.message).toMatch(/^expected 0 processing\(s\), the probe shows 1/);
    expect(status).toBe(1);
  }, 120_000);
});
